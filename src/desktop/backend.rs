//! What a platform offers a desktop task: a snapshot of the app's windows (their
//! controls, labelled, and the UI tree), the actions on a control, input at a point
//! (and a person's pointer and keyboard, for the computer-use actions), the element under
//! a point, screenshots, and the end of the desktop. AT-SPI under a private virtual display on
//! Linux and UI Automation on Windows implement it; everything above it is shared.

use std::time::Duration;

use async_trait::async_trait;
use serde::Serialize;

use super::action::Button;
use super::app::Launch;
use super::control::{Control, Rect};
use super::element::Element;
use super::error::DesktopError;
use super::keys::{KeyAction, Modifier};
use super::screenshot::Image;

/// The app's window as a snapshot saw it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct Window {
    /// Its title.
    pub(crate) name: String,
    /// Where it is.
    pub(crate) rect: Rect,
    /// The application it belongs to.
    pub(crate) application: String,
}

/// A top-level window of the desktop, as the HostAgent sees it: one it can hand a
/// subtask to.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct AppWindow {
    /// Its label in the window list (`1`, `2`, ...).
    pub(crate) id: String,
    /// Its title.
    pub(crate) name: String,
    /// The application it belongs to.
    pub(crate) application: String,
    /// Where it is.
    pub(crate) rect: Rect,
    /// The backend's handle of it (an index into its own list).
    #[serde(skip)]
    pub(crate) handle: usize,
}

/// The app's windows at one moment.
#[derive(Clone, Debug, Default)]
pub(crate) struct Snapshot {
    /// The main window (the first one showing).
    pub(crate) window: Option<Window>,
    /// Its controls and those of its dialogs, labelled `1`, `2`, ... in tree order.
    pub(crate) controls: Vec<Control>,
    /// The UI tree, as UFO's `get_ui_tree` gives it.
    pub(crate) tree: serde_json::Value,
    /// How many nodes the walk visited.
    pub(crate) nodes: usize,
}

/// Pointer input as a person gives it (the computer-use actions), in desktop pixels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Pointer {
    /// The pointer to a point.
    Move((i32, i32)),
    /// A button pressed (or released) where the pointer is.
    Button {
        /// Which.
        button: Button,
        /// Pressed, else released.
        down: bool,
    },
    /// A button clicked `count` times at a point.
    Click {
        /// Where.
        at: (i32, i32),
        /// Which.
        button: Button,
        /// 1, 2 or 3.
        count: u8,
    },
    /// The wheel turned where the pointer is: notches right and down (negative: left
    /// and up).
    Scroll {
        /// Across.
        dx: i32,
        /// Down.
        dy: i32,
    },
    /// A button held along a path of points.
    Drag {
        /// The points, in order.
        path: Vec<(i32, i32)>,
        /// Which button.
        button: Button,
    },
}

/// A desktop task's desktop, on one platform.
#[async_trait]
pub(crate) trait Backend: Send {
    /// Opens an app (or, when it already runs, selects it): the actions go to it from
    /// now on. Returns how it went, for the log.
    async fn open_app(&mut self, launch: &Launch) -> Result<String, DesktopError>;

    /// The app's windows and controls now.
    async fn snapshot(&mut self) -> Result<Snapshot, DesktopError>;

    /// The desktop's application windows now, labelled `1`, `2`, ... (the HostAgent's
    /// view).
    async fn windows(&mut self) -> Result<Vec<AppWindow>, DesktopError>;

    /// Makes `window` (from the last `windows`) the one the actions go to.
    async fn select_window(&mut self, window: &AppWindow) -> Result<(), DesktopError>;

    /// Clicks a control; returns how (an accessibility action or the mouse).
    async fn click(
        &mut self,
        control: &Control,
        button: Button,
        double: bool,
    ) -> Result<String, DesktopError>;

    /// Replaces the text of a control.
    async fn set_text(&mut self, control: &Control, text: &str) -> Result<(), DesktopError>;

    /// Gives a control the keyboard focus.
    async fn focus(&mut self, control: &Control) -> Result<(), DesktopError>;

    /// Puts the keyboard on the selected window when keys name no control: where the
    /// window's focus is (its focused control), else the window itself (`window`, its
    /// place in the last snapshot). Says where.
    async fn focus_window(&mut self, window: Rect) -> Result<String, DesktopError>;

    /// Types keys into whatever has the focus.
    async fn keys(&mut self, keys: Vec<KeyAction>) -> Result<(), DesktopError>;

    /// The text a control shows.
    async fn texts(&mut self, control: &Control) -> Result<String, DesktopError>;

    /// Turns the mouse wheel over a control.
    async fn wheel(&mut self, control: &Control, notches: i32) -> Result<(), DesktopError>;

    /// Clicks at a point of the screen.
    async fn click_at(
        &mut self,
        at: (i32, i32),
        button: Button,
        double: bool,
    ) -> Result<(), DesktopError>;

    /// Drags between two points of the screen.
    async fn drag(
        &mut self,
        from: (i32, i32),
        to: (i32, i32),
        button: Button,
        duration: Duration,
        held: Option<Modifier>,
    ) -> Result<(), DesktopError>;

    /// The whole screen.
    async fn screenshot(&mut self) -> Result<Image, DesktopError>;

    /// Pointer input (the computer-use actions).
    async fn pointer(&mut self, input: Pointer) -> Result<(), DesktopError>;

    /// Where the pointer is.
    async fn cursor(&mut self) -> Result<(i32, i32), DesktopError>;

    /// Types `text` as it is written, whatever its characters, into whatever has the
    /// focus (a newline is Enter, a tab Tab).
    async fn type_text(&mut self, text: &str) -> Result<(), DesktopError>;

    /// The window the actions go to (the one opened or selected last), where it is
    /// now, without walking its controls; `None` when there is none.
    async fn target_window(&mut self) -> Result<Option<Window>, DesktopError>;

    /// The accessible element under the screen point `at`: the hit test inside the
    /// target window when the point is in it, else in the window at the point.
    async fn element_at(&mut self, at: (i32, i32)) -> Result<Option<Element>, DesktopError>;

    /// The element a recording names (`recorded`, from `element_at`), found again in
    /// its window (by the window's title, else the target window), where it is now.
    /// Names are compared as `neutral` writes the live ones (the recording's are
    /// written so: the workspace's path as a placeholder).
    async fn find_element(
        &mut self,
        recorded: &Element,
        neutral: std::sync::Arc<crate::desktop::element::Neutral>,
    ) -> Result<Option<Element>, DesktopError>;

    /// Whether this platform carries out the Office API tools (`office`): when not, the
    /// AppAgent is not offered them and a plan's call of one fails saying why.
    fn has_office_api(&self) -> bool;

    /// Calls the API tool `tool` (`desktop::office`) of `app` (`word`, `excel`,
    /// `powerpoint`) on the open document (`document`, in the workspace, when the task
    /// has one): UFO's answer (a text, or `get_range_values`' rows), or why it failed.
    async fn office(
        &mut self,
        app: &str,
        tool: &str,
        args: &serde_json::Map<String, serde_json::Value>,
        document: Option<&str>,
    ) -> Result<serde_json::Value, DesktopError>;

    /// Closes the app, politely (so that it finishes what it was doing) and then not;
    /// says how it went.
    async fn close_app(&mut self) -> Result<String, DesktopError>;

    /// Why the app the task opened is gone, when it crashed (was killed, or exited with
    /// an error) rather than being closed: a failed action is then the machine's
    /// failure, not the agent's.
    fn app_crash(&mut self) -> Option<String> {
        None
    }

    /// Starts `argv` on the desktop as `what`, in `cwd` (a folder as the desktop's
    /// programs see it), beside its apps until the desktop ends: a service the task's
    /// desktop needs (OSWorld's server). Platforms whose desktop has no such room say so.
    async fn start_program(
        &mut self,
        what: &str,
        _argv: &[String],
        _cwd: &std::path::Path,
    ) -> Result<(), DesktopError> {
        Err(DesktopError::desktop(format!(
            "{what} runs only on a Linux desktop"
        )))
    }

    /// Starts `argv` on the desktop as `what`, in `cwd`, with pipes to its standard
    /// input and from its standard output (OSWorld's evaluator bridge).
    async fn start_helper(
        &mut self,
        what: &str,
        _argv: &[String],
        _cwd: &std::path::Path,
    ) -> Result<HelperPipes, DesktopError> {
        Err(DesktopError::desktop(format!(
            "{what} runs only on a Linux desktop"
        )))
    }

    /// How a program started as `what` ended, with its log's last lines, once it has.
    fn program_ended(&mut self, _what: &str) -> Option<String> {
        None
    }

    /// Ends the desktop and everything in it. Returns a note for the task log.
    async fn end(&mut self) -> Option<String>;
}

/// The runner's ends of a helper's pipes: to its standard input, from its standard
/// output.
pub(crate) type HelperPipes = (
    Box<dyn tokio::io::AsyncWrite + Send + Sync + Unpin>,
    Box<dyn tokio::io::AsyncRead + Send + Sync + Unpin>,
);
