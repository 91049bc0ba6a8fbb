//! Bringing a task's desktop up on Linux: its folders made fresh, its jail started, and
//! in it the virtual display (Xvfb), the session bus and the accessibility bus, each
//! waited for; then this side's connections to the display and the accessibility bus.
//! Whatever fails here is the machine's (`StartError`), but for an app command with no
//! program, which is the task file's.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use zbus::Connection;

use super::processes::{DISPLAY, ProcessError, Processes, SESSION_BUS, find_program, tail};
use super::x11::{Display, X11Error};
use crate::desktop::error::DesktopError;
use crate::desktop::furniture::Furniture;
use crate::jail::{Jail, JailOptions};
use crate::tool::{Blame, Blamed};

/// The screen, unless the desktop's furniture says another size.
const SCREEN: (u32, u32) = (1280, 800);
/// The window manager a furnished desktop runs.
const WINDOW_MANAGER: &str = "openbox";
/// How long the display and the buses may take to come up.
const UP_TIMEOUT: Duration = Duration::from_secs(20);
/// How long one accessibility call may take (a wedged app must not hold the task).
const BUS_TIMEOUT: Duration = Duration::from_secs(15);
/// The launcher of the accessibility bus.
const AT_SPI_LAUNCHER: &str = "/usr/libexec/at-spi-bus-launcher";

/// How to start a desktop.
pub(crate) struct StartOptions<'a> {
    /// The jail binary.
    pub(crate) jail: &'a Path,
    /// The task's workspace (the app's working folder, writable).
    pub(crate) workspace: &'a Path,
    /// The desktop's `/tmp` (HOME, profile, sockets): a folder only the desktop's jail
    /// writes (never the task's shell commands), made fresh.
    pub(crate) tmp: &'a Path,
    /// Where the desktop's programs print (a file only the runner writes).
    pub(crate) log: &'a Path,
    /// Folders the desktop must not see (the run's other tasks, the user's home).
    pub(crate) hidden: Vec<std::path::PathBuf>,
    /// How long an app may take to show a window.
    pub(crate) app_timeout: Duration,
    /// What it is furnished with.
    pub(crate) furniture: &'a Furniture,
}

/// Why a desktop did not come up.
#[derive(Debug, thiserror::Error)]
pub(super) enum StartError {
    /// One of its programs.
    #[error(transparent)]
    Process(#[from] ProcessError),
    /// The display.
    #[error(transparent)]
    Display(#[from] X11Error),
    /// A folder it is given cannot be resolved.
    #[error("cannot use the folder {}: {source}", path.display())]
    Folder {
        /// The folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// An earlier attempt's `/tmp` cannot be removed.
    #[error("cannot clear {}: {source}", path.display())]
    Clear {
        /// The folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Its folders cannot be made.
    #[error("cannot prepare the desktop's folders: {0}")]
    Folders(#[source] std::io::Error),
    /// Its jail did not start.
    #[error("cannot start the desktop's jail: {0}")]
    Jail(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The session bus's address is not one.
    #[error("the session bus's address: {0}")]
    SessionAddress(#[source] zbus::Error),
    /// The session bus does not take a connection.
    #[error("cannot connect to the desktop's session bus: {0}")]
    Session(#[source] zbus::Error),
    /// The accessibility bus launcher does not answer.
    #[error("the accessibility bus launcher: {0}")]
    Launcher(#[source] zbus::Error),
    /// The accessibility bus did not come up in time.
    #[error("the accessibility bus did not come up within {secs}s ({source}){tail}")]
    A11yNotUp {
        /// The time it had.
        secs: u64,
        /// The launcher's last answer.
        #[source]
        source: Box<zbus::Error>,
        /// The log's last lines (`: ...`), or nothing.
        tail: String,
    },
    /// The accessibility bus's address is not one.
    #[error("the accessibility bus's address {address}: {source}")]
    A11yAddress {
        /// The address.
        address: String,
        /// Why.
        #[source]
        source: Box<zbus::Error>,
    },
    /// The accessibility bus does not take a connection.
    #[error("cannot connect to the accessibility bus: {0}")]
    A11y(#[source] zbus::Error),
}

/// The machine's (its programs, folders, jail, display, buses), but for what a
/// program's own error says.
impl Blamed for StartError {
    fn blame(&self) -> Blame {
        match self {
            Self::Process(e) => e.blame(),
            Self::Display(e) => e.blame(),
            _ => Blame::Environment,
        }
    }
}

impl From<StartError> for DesktopError {
    fn from(e: StartError) -> Self {
        DesktopError::classified(e)
    }
}

/// A desktop up: its programs, its display, its accessibility bus.
pub(super) struct Started {
    /// Its programs (the display and the buses running).
    pub(super) processes: Processes,
    /// Its display.
    pub(super) display: Display,
    /// Its accessibility bus.
    pub(super) a11y: Connection,
}

/// Starts the display and the buses, with no app yet.
pub(super) async fn start(options: &StartOptions<'_>) -> Result<Started, StartError> {
    for program in ["Xvfb", "dbus-daemon", AT_SPI_LAUNCHER] {
        find_program(program)?;
    }
    // The jail knows folders by their real paths (a relative one would not resolve
    // inside it).
    let real = |p: &Path| {
        p.canonicalize().map_err(|source| StartError::Folder {
            path: p.to_path_buf(),
            source,
        })
    };
    // An earlier attempt's is emptied, not replaced: the task's shell jail may see this
    // folder as its `/tmp` already (an OSWorld task's commands share the desktop's).
    empty(options.tmp).map_err(|source| StartError::Clear {
        path: options.tmp.to_path_buf(),
        source,
    })?;
    std::fs::create_dir_all(options.tmp).map_err(StartError::Folders)?;
    let tmp = real(options.tmp)?;
    let workspace = real(options.workspace)?;
    for dir in ["home", "xdg"] {
        std::fs::create_dir_all(tmp.join(dir)).map_err(StartError::Folders)?;
    }
    std::fs::set_permissions(
        tmp.join("xdg"),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .map_err(StartError::Folders)?;
    let furniture = options.furniture;
    if furniture.window_manager {
        find_program(WINDOW_MANAGER)?;
    }
    let kept = furniture
        .kept
        .iter()
        .map(|p| real(p))
        .collect::<Result<Vec<_>, _>>()?;
    let mut writable = vec![workspace.clone(), tmp.clone()];
    for dir in &furniture.writable {
        writable.push(real(dir)?);
    }
    let jail_options = JailOptions {
        writable,
        tmp: Some(tmp.clone()),
        home: furniture.user_home.then(|| workspace.clone()),
        kept,
        hidden: options.hidden.clone(),
        desktop: true,
    };
    let jail = Jail::start_with(options.jail, &jail_options)
        .await
        .map_err(|e| StartError::Jail(e.into()))?;
    let mut processes = Processes::new(jail, tmp, workspace, options.log.to_path_buf(), furniture);
    match bring_up(&mut processes, furniture).await {
        Ok((display, a11y)) => Ok(Started {
            processes,
            display,
            a11y,
        }),
        Err(e) => {
            processes.end().await;
            Err(e)
        }
    }
}

/// Starts the display, the buses and (when furnished with one) the window manager;
/// connects to the display and the accessibility bus.
async fn bring_up(
    p: &mut Processes,
    furniture: &Furniture,
) -> Result<(Display, Connection), StartError> {
    let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let xvfb = "the display (Xvfb)";
    let (width, height) = furniture.screen.unwrap_or(SCREEN);
    let screen = format!("{width}x{height}x24");
    p.spawn(
        xvfb,
        &argv(&[
            "Xvfb",
            DISPLAY,
            "-screen",
            "0",
            &screen,
            "-nolisten",
            "tcp",
            "-nolisten",
            "local",
            "-noreset",
        ]),
    )
    .await?;
    // A task's folder may be deep, and a socket's address holds at most 107 bytes: the
    // desktop's sockets are reached through a descriptor of its `/tmp`, held while they
    // are connected (`/proc/self/fd/N/...`).
    let tmp = rustix::fs::open(
        &p.tmp,
        rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| StartError::Folder {
        path: p.tmp.clone(),
        source: e.into(),
    })?;
    let near = PathBuf::from(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(&tmp)
    ));
    let x_socket = p.tmp.join(".X11-unix/X0");
    p.wait_for_socket(&x_socket, xvfb, UP_TIMEOUT).await?;
    let display = Display::connect(&near.join(".X11-unix/X0"))?;
    let bus = "the session bus (dbus-daemon)";
    let address = format!("--address=unix:path={SESSION_BUS}");
    p.spawn(
        bus,
        &argv(&[
            "dbus-daemon",
            "--session",
            "--nofork",
            "--nopidfile",
            &address,
        ]),
    )
    .await?;
    let bus_socket = p.tmp.join("session-bus");
    p.wait_for_socket(&bus_socket, bus, UP_TIMEOUT).await?;
    p.spawn(
        "the accessibility bus (at-spi-bus-launcher)",
        &argv(&[AT_SPI_LAUNCHER, "--launch-immediately", "--a11y=1"]),
    )
    .await?;
    let session = zbus::connection::Builder::address(
        format!("unix:path={}", near.join("session-bus").display()).as_str(),
    )
    .map_err(StartError::SessionAddress)?
    .build()
    .await
    .map_err(StartError::Session)?;
    if furniture.window_manager {
        p.spawn(
            "the window manager (openbox)",
            &argv(&[WINDOW_MANAGER, "--sm-disable"]),
        )
        .await?;
    }
    let address = a11y_address(p, &near, &session).await?;
    let a11y = zbus::connection::Builder::address(address.as_str())
        .map_err(|source| StartError::A11yAddress {
            address: address.clone(),
            source: Box::new(source),
        })?
        .method_timeout(BUS_TIMEOUT)
        .build()
        .await
        .map_err(StartError::A11y)?;
    drop(tmp);
    Ok((display, a11y))
}

/// Removes what `dir` holds, if it exists (removing does not follow the links it may
/// hold).
fn empty(dir: &Path) -> std::io::Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())?;
        } else {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

/// The accessibility bus's address, as this side reaches it.
async fn a11y_address(
    p: &mut Processes,
    near: &Path,
    session: &Connection,
) -> Result<String, StartError> {
    let clock = Instant::now();
    loop {
        let proxy = ::atspi::proxy::bus::BusProxy::new(session)
            .await
            .map_err(StartError::Launcher)?;
        match proxy.get_address().await {
            Ok(address) => {
                // Paths inside the jail's /tmp are the task's temporary folder here.
                let here = format!("unix:path={}/", near.display());
                return Ok(address.replace("unix:path=/tmp/", &here));
            }
            Err(source) if clock.elapsed() > UP_TIMEOUT => {
                return Err(StartError::A11yNotUp {
                    secs: UP_TIMEOUT.as_secs(),
                    source: Box::new(source),
                    tail: tail(p.log()),
                });
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}
