//! One task's desktop on Linux, as a resource: a jail (`--desktop`: Unix sockets
//! allowed, the machine's socket folders hidden, `/tmp` the task's own) holding a
//! virtual X display (Xvfb), a session bus, the accessibility bus and the app, started
//! with a private HOME and profile on the task's document. Everything in it ends with
//! the jail: when the task ends, when it times out, and when the runner dies, even by
//! `kill -9` (the jail's init then loses its socket and takes its namespace with it).

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio::sync::oneshot;
use zbus::Connection;

use super::atspi::{self, Node, ObjectId};
use super::x11::Display;
use crate::desktop::app::Launch;
use crate::desktop::backend::{Backend, Snapshot};
use crate::desktop::control::Control;
use crate::desktop::keys::{KeyAction, Modifier};
use crate::desktop::screenshot::Image;
use crate::desktop::tools::Button;
use crate::jail::{Jail, JailExit, JailOptions, JailSpawn};

/// The display inside every desktop jail (each has its own `/tmp`, so they never meet).
const DISPLAY: &str = ":0";
/// The session bus's socket, inside the jail.
const SESSION_BUS: &str = "/tmp/session-bus";
/// The screen.
const SCREEN: &str = "1280x800x24";
/// How long the display and the buses may take to come up.
const UP_TIMEOUT: Duration = Duration::from_secs(20);
/// How long an app asked to close may take (to finish a save) before it is killed.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// The launcher of the accessibility bus.
const AT_SPI_LAUNCHER: &str = "/usr/libexec/at-spi-bus-launcher";

/// How to start a desktop.
pub(crate) struct StartOptions<'a> {
    /// The jail binary.
    pub(crate) jail: &'a Path,
    /// The task's workspace (the app's working folder, writable).
    pub(crate) workspace: &'a Path,
    /// The task's temporary folder: the desktop's `/tmp` (HOME, profile, sockets, logs).
    pub(crate) tmp: &'a Path,
    /// The app, if the task opens one.
    pub(crate) app: Option<&'a Launch>,
    /// How long the app may take to show a window.
    pub(crate) app_timeout: Duration,
}

/// A program the desktop started.
struct Running {
    what: String,
    id: u64,
    exit: oneshot::Receiver<JailExit>,
}

/// A task's desktop.
pub(crate) struct LinuxDesktop {
    jail: Option<Jail>,
    running: Vec<Running>,
    /// The desktop's `/tmp`, as the runner sees it.
    tmp: PathBuf,
    display: Display,
    a11y: Connection,
    /// The app's root on the accessibility bus, once it shows.
    app: Option<(ObjectId, String)>,
    /// The app program, for messages.
    app_label: String,
    /// The last snapshot's nodes (a control's handle indexes them).
    nodes: Vec<Node>,
}

/// Where a program is (the jail starts programs by path, with no search), or why it
/// cannot be run, with the install hint.
fn find_program(argv0: &str) -> Result<PathBuf, String> {
    let candidates: Vec<PathBuf> = if argv0.contains('/') {
        vec![PathBuf::from(argv0)]
    } else {
        ["/usr/local/bin", "/usr/bin", "/bin"]
            .iter()
            .map(|d| Path::new(d).join(argv0))
            .collect()
    };
    candidates.into_iter().find(|p| p.is_file()).ok_or_else(|| {
        format!(
            "desktop sessions need `{argv0}`, which is not installed here: run scripts/setup-desktop.sh (Debian/Ubuntu) to install the desktop stack"
        )
    })
}

fn log_file(path: &Path) -> Result<(OwnedFd, OwnedFd), String> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let again = file
        .try_clone()
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    Ok((OwnedFd::from(file), OwnedFd::from(again)))
}

/// The last lines of a log, for a message.
fn tail(path: &Path) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(5);
    if lines.is_empty() {
        String::new()
    } else {
        format!(": {}", lines[start..].join(" | "))
    }
}

impl LinuxDesktop {
    /// Starts the desktop and the app, and waits until the app shows a window.
    pub(crate) async fn start(options: &StartOptions<'_>) -> Result<Self, String> {
        for program in ["Xvfb", "dbus-daemon", AT_SPI_LAUNCHER]
            .into_iter()
            .chain(options.app.and_then(|a| a.argv.first()).map(String::as_str))
        {
            find_program(program)?;
        }
        // The jail knows folders by their real paths (a relative one would not resolve
        // inside it).
        let real = |p: &Path| {
            p.canonicalize()
                .map_err(|e| format!("cannot use the folder {}: {e}", p.display()))
        };
        let tmp = real(options.tmp)?;
        let workspace = real(options.workspace)?;
        for dir in ["home", "xdg", "logs"] {
            std::fs::create_dir_all(tmp.join(dir))
                .map_err(|e| format!("cannot prepare the desktop's folders: {e}"))?;
        }
        std::os::unix::fs::PermissionsExt::set_mode(
            &mut std::fs::metadata(tmp.join("xdg"))
                .map_err(|e| e.to_string())?
                .permissions(),
            0o700,
        );
        let jail_options = JailOptions {
            writable: vec![workspace.clone(), tmp.clone()],
            tmp: Some(tmp.clone()),
            desktop: true,
        };
        let jail = Jail::start_with(options.jail, &jail_options)
            .await
            .map_err(|e| format!("cannot start the desktop's jail: {e}"))?;
        let mut starting = Starting {
            jail,
            running: Vec::new(),
            tmp: tmp.clone(),
            workspace,
        };
        match starting.bring_up(options).await {
            Ok((display, a11y, app_label)) => {
                let mut desktop = LinuxDesktop {
                    jail: Some(starting.jail),
                    running: starting.running,
                    tmp,
                    display,
                    a11y,
                    app: None,
                    app_label,
                    nodes: Vec::new(),
                };
                if options.app.is_some() {
                    desktop.wait_for_app(options.app_timeout).await?;
                }
                Ok(desktop)
            }
            Err(e) => {
                starting.jail.end().await;
                Err(e)
            }
        }
    }

    /// Waits until an application shows a window; remembers it.
    async fn wait_for_app(&mut self, timeout: Duration) -> Result<(), String> {
        let clock = Instant::now();
        loop {
            if let Some(app) = atspi::applications(&self.a11y)
                .await
                .unwrap_or_default()
                .into_iter()
                .find(|(_, _, showing)| *showing)
            {
                self.app = Some((app.0, app.1));
                return Ok(());
            }
            if let Some(gone) = self.exited("the app") {
                return Err(gone);
            }
            if clock.elapsed() > timeout {
                return Err(format!(
                    "{} showed no window within {}s{}",
                    self.app_label,
                    timeout.as_secs(),
                    tail(&self.tmp.join("logs/app.log"))
                ));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Why a program of the desktop is gone, if one is.
    fn exited(&mut self, only: &str) -> Option<String> {
        for r in &mut self.running {
            if !only.is_empty() && r.what != only {
                continue;
            }
            if let Ok(exit) = r.exit.try_recv() {
                let how = match (exit.code, exit.signal) {
                    (Some(c), _) => format!("exited with code {c}"),
                    (_, Some(s)) => format!("was killed by signal {s}"),
                    _ => "ended".to_string(),
                };
                let log = if r.what == "the app" {
                    "app"
                } else {
                    "desktop"
                };
                return Some(format!(
                    "{} {how}{}",
                    r.what,
                    tail(&self.tmp.join(format!("logs/{log}.log")))
                ));
            }
        }
        None
    }

    fn node(&self, control: &Control) -> Result<&Node, String> {
        self.nodes
            .get(control.handle)
            .ok_or_else(|| format!("the control {control} is not in the current snapshot"))
    }
}

/// A desktop being brought up: what to end if it fails halfway.
struct Starting {
    jail: Jail,
    running: Vec<Running>,
    tmp: PathBuf,
    workspace: PathBuf,
}

impl Starting {
    fn env(&self) -> Vec<(String, String)> {
        [
            ("PATH", "/usr/local/bin:/usr/bin:/bin"),
            ("HOME", "/tmp/home"),
            ("TMPDIR", "/tmp"),
            ("LANG", "C.UTF-8"),
            ("DISPLAY", DISPLAY),
            ("XDG_RUNTIME_DIR", "/tmp/xdg"),
            (
                "DBUS_SESSION_BUS_ADDRESS",
                &format!("unix:path={SESSION_BUS}"),
            ),
            ("GSETTINGS_BACKEND", "memory"),
            ("GTK_USE_PORTAL", "0"),
            ("NO_AT_BRIDGE", "0"),
            ("SAL_USE_VCLPLUGIN", "gtk3"),
            ("ACCESSIBILITY_ENABLED", "1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    async fn spawn(&mut self, what: &str, argv: &[String], log: &str) -> Result<(), String> {
        let mut argv = argv.to_vec();
        argv[0] = find_program(&argv[0])?.display().to_string();
        let argv = &argv[..];
        let (stdout, stderr) = log_file(&self.tmp.join("logs").join(log))?;
        let env = self.env();
        let started = self
            .jail
            .spawn(JailSpawn {
                argv,
                env: &env,
                cwd: &self.workspace,
                memory: None,
                cpu: None,
                stdout,
                stderr,
            })
            .await
            .map_err(|e| format!("cannot start {what}: {e}"))?;
        self.running.push(Running {
            what: what.to_string(),
            id: started.id,
            exit: started.exit,
        });
        Ok(())
    }

    /// Waits for `path` (on this side) to appear, while `what` still runs.
    async fn wait_for_socket(&mut self, path: &Path, what: &str) -> Result<(), String> {
        let clock = Instant::now();
        while !path.exists() {
            if let Some(r) = self.running.iter_mut().find(|r| r.what == what)
                && r.exit.try_recv().is_ok()
            {
                return Err(format!(
                    "{what} ended while starting{}",
                    tail(&self.tmp.join("logs/desktop.log"))
                ));
            }
            if clock.elapsed() > UP_TIMEOUT {
                return Err(format!(
                    "{what} did not come up within {}s{}",
                    UP_TIMEOUT.as_secs(),
                    tail(&self.tmp.join("logs/desktop.log"))
                ));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(())
    }

    /// The display, the buses and the app.
    async fn bring_up(
        &mut self,
        options: &StartOptions<'_>,
    ) -> Result<(Display, Connection, String), String> {
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        self.spawn(
            "the display (Xvfb)",
            &argv(&[
                "Xvfb",
                DISPLAY,
                "-screen",
                "0",
                SCREEN,
                "-nolisten",
                "tcp",
                "-nolisten",
                "local",
                "-noreset",
            ]),
            "desktop.log",
        )
        .await?;
        let x_socket = self.tmp.join(".X11-unix/X0");
        self.wait_for_socket(&x_socket, "the display (Xvfb)")
            .await?;
        let display = Display::connect(&x_socket)?;
        self.spawn(
            "the session bus (dbus-daemon)",
            &argv(&[
                "dbus-daemon",
                "--session",
                "--nofork",
                "--nopidfile",
                &format!("--address=unix:path={SESSION_BUS}"),
            ]),
            "desktop.log",
        )
        .await?;
        let bus_socket = self.tmp.join("session-bus");
        self.wait_for_socket(&bus_socket, "the session bus (dbus-daemon)")
            .await?;
        self.spawn(
            "the accessibility bus (at-spi-bus-launcher)",
            &argv(&[AT_SPI_LAUNCHER, "--launch-immediately", "--a11y=1"]),
            "desktop.log",
        )
        .await?;
        let session = zbus::connection::Builder::address(
            format!("unix:path={}", bus_socket.display()).as_str(),
        )
        .map_err(|e| format!("the session bus's address: {e}"))?
        .build()
        .await
        .map_err(|e| format!("cannot connect to the desktop's session bus: {e}"))?;
        let address = self.a11y_address(&session).await?;
        let a11y = zbus::connection::Builder::address(address.as_str())
            .map_err(|e| format!("the accessibility bus's address {address}: {e}"))?
            .build()
            .await
            .map_err(|e| format!("cannot connect to the accessibility bus: {e}"))?;
        let mut label = String::new();
        if let Some(app) = options.app {
            label = app.argv.join(" ");
            self.spawn("the app", &app.argv, "app.log").await?;
        }
        Ok((display, a11y, label))
    }

    /// The accessibility bus's address, as this side reaches it.
    async fn a11y_address(&mut self, session: &Connection) -> Result<String, String> {
        let clock = Instant::now();
        loop {
            let proxy = ::atspi::proxy::bus::BusProxy::new(session)
                .await
                .map_err(|e| format!("the accessibility bus launcher: {e}"))?;
            match proxy.get_address().await {
                Ok(address) => {
                    // Paths inside the jail's /tmp are the task's temporary folder here.
                    let here = format!("unix:path={}/", self.tmp.display());
                    return Ok(address.replace("unix:path=/tmp/", &here));
                }
                Err(e) if clock.elapsed() > UP_TIMEOUT => {
                    return Err(format!(
                        "the accessibility bus did not come up within {}s ({e}){}",
                        UP_TIMEOUT.as_secs(),
                        tail(&self.tmp.join("logs/desktop.log"))
                    ));
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }
}

#[async_trait]
impl Backend for LinuxDesktop {
    async fn snapshot(&mut self) -> Result<Snapshot, String> {
        if let Some(gone) = self.exited("") {
            return Err(gone);
        }
        let Some((app, name)) = self.app.clone() else {
            self.nodes.clear();
            return Ok(Snapshot::default());
        };
        self.nodes = atspi::walk(&self.a11y, &app).await?;
        Ok(atspi::snapshot(&self.nodes, &name))
    }

    async fn click(
        &mut self,
        control: &Control,
        button: Button,
        double: bool,
    ) -> Result<String, String> {
        let node = self.node(control)?.clone();
        if button == Button::Left && !double && atspi::do_click(&self.a11y, &node).await? {
            return Ok("its accessibility action".to_string());
        }
        let (x, y) = control.rect.center();
        self.display.click(x, y, button, double).await?;
        Ok(format!("the mouse at ({x}, {y})"))
    }

    async fn set_text(&mut self, control: &Control, text: &str) -> Result<(), String> {
        let node = self.node(control)?.clone();
        if atspi::set_text(&self.a11y, &node, text).await? {
            return Ok(());
        }
        Err(format!(
            "{control} takes no text (type into it with keyboard_input instead)"
        ))
    }

    async fn focus(&mut self, control: &Control) -> Result<(), String> {
        let node = self.node(control)?.clone();
        // Without a window manager the keyboard follows the pointer: put it on the
        // control, then give the control the focus (a click where it takes none).
        let (x, y) = control.rect.center();
        self.display.move_to(x, y).await?;
        if !atspi::grab_focus(&self.a11y, &node).await? {
            self.display.click(x, y, Button::Left, false).await?;
        }
        Ok(())
    }

    async fn keys(&mut self, keys: Vec<KeyAction>) -> Result<(), String> {
        self.display.keys(keys).await
    }

    async fn texts(&mut self, control: &Control) -> Result<String, String> {
        let node = self.node(control)?.clone();
        atspi::texts(&self.a11y, &node).await
    }

    async fn wheel(&mut self, control: &Control, notches: i32) -> Result<(), String> {
        let (x, y) = control.rect.center();
        self.display.wheel(x, y, notches).await
    }

    async fn click_at(
        &mut self,
        at: (i32, i32),
        button: Button,
        double: bool,
    ) -> Result<(), String> {
        self.display.click(at.0, at.1, button, double).await
    }

    async fn drag(
        &mut self,
        from: (i32, i32),
        to: (i32, i32),
        button: Button,
        duration: Duration,
        held: Option<Modifier>,
    ) -> Result<(), String> {
        self.display.drag(from, to, button, duration, held).await
    }

    async fn screenshot(&mut self) -> Result<Image, String> {
        self.display.screenshot().await
    }

    async fn close_app(&mut self) -> Result<String, String> {
        let Some(jail) = &self.jail else {
            return Ok("the desktop was gone".to_string());
        };
        let Some(app) = self.running.iter_mut().find(|r| r.what == "the app") else {
            return Ok("no app was started".to_string());
        };
        if app.exit.try_recv().is_ok() {
            return Ok("the app had ended".to_string());
        }
        self.display.close_windows().await?;
        if tokio::time::timeout(CLOSE_TIMEOUT, &mut app.exit)
            .await
            .is_ok()
        {
            return Ok("the app closed".to_string());
        }
        jail.kill(app.id).await;
        Ok(format!(
            "the app did not close within {}s of being asked (an unsaved document?) and was killed",
            CLOSE_TIMEOUT.as_secs()
        ))
    }

    async fn end(&mut self) -> Option<String> {
        let jail = self.jail.take()?;
        let left = jail.end().await;
        // Xvfb, the two buses, the registry and the app are expected; say only what is odd.
        (left > 16).then(|| format!("the desktop ended with {left} processes still running"))
    }
}
