//! What a task's desktop is furnished with besides its display, its buses and its app:
//! the screen's size, the home its programs see, a window manager, the programs first on
//! their PATH, and the folders they must read although they lie in a hidden one. A
//! plain desktop task has the defaults; an OSWorld task's desktop is furnished as
//! OSWorld's VM is (a 1920×1080 screen, the task's folder as `/home/user`, a window
//! manager for its server's `wmctrl`, the venv of OSWorld's code first on the PATH).

use std::path::PathBuf;

/// How a desktop is furnished.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Furniture {
    /// The screen's width and height (default: the platform's).
    pub(crate) screen: Option<(u32, u32)>,
    /// The task's folder is the programs' home, as `/home/user` (default: a private
    /// home in the desktop's own temporary folder).
    pub(crate) user_home: bool,
    /// A window manager runs (OSWorld's server finds and raises windows with `wmctrl`,
    /// which needs one).
    pub(crate) window_manager: bool,
    /// Folders put first on the programs' PATH (a venv's `bin`).
    pub(crate) path_first: Vec<PathBuf>,
    /// Folders the programs read, kept in sight even when they lie in a hidden folder
    /// (a venv in the user's home).
    pub(crate) kept: Vec<PathBuf>,
    /// Folders of the runner's the programs write besides the task's (an OSWorld
    /// attempt's server, bridge and cache copy), at the same path.
    pub(crate) writable: Vec<PathBuf>,
    /// The memory limit of each of its programs, the display, the app and the Office
    /// API helper included: the task's commands' own (`[sandbox] memory`), so that no
    /// request an app is given can take the machine's memory. Set as RLIMIT_DATA (the
    /// memory a program writes), not RLIMIT_AS: a browser reserves terabytes of address
    /// space it never uses, and would not start under an address-space limit.
    pub(crate) memory: Option<u64>,
}
