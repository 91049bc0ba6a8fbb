//! One task's desktop on Linux, as a resource: a jail (`--desktop`: Unix sockets
//! allowed, the machine's socket folders hidden, `/tmp` the task's own) holding a
//! virtual X display (Xvfb), a session bus, the accessibility bus and the apps, started
//! with a private HOME and profile on the task's document. Everything in it ends with
//! the jail: when the task ends, when it times out, and when the runner dies, even by
//! `kill -9` (the jail's init then loses its socket and takes its namespace with it).

use std::time::Duration;

use zbus::Connection;

use super::atspi::{BusError, Node, ObjectId};
use super::idle;
use super::processes::{APP, Processes};
use super::start::{StartOptions, Started};
use super::x11::Display;
use crate::desktop::control::Control;
use crate::desktop::error::DesktopError;
use crate::desktop::office_helper::OfficeHelper;

mod backend;

/// How long an app asked to close may take (to finish a save) before it is killed.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest wait for the desktop to do what it was sent (an app that never rests,
/// such as one playing an animation, is not waited for longer).
const SETTLE_LIMIT: Duration = Duration::from_secs(3);
/// The Office API helper, as the desktop's programs name it.
const HELPER: &str = "the Office API helper (python3-uno)";
/// How long the helper may take to end once its input is closed (its connection holds
/// the office open).
const HELPER_END: Duration = Duration::from_secs(3);

/// A task's desktop.
pub(crate) struct LinuxDesktop {
    processes: Processes,
    display: Display,
    a11y: Connection,
    /// The app the actions go to (its root on the accessibility bus, its name).
    app: Option<(ObjectId, String)>,
    /// The window the app showed when it was selected (an office suite shows each
    /// module's window in one instance): its controls come first, and it is "the"
    /// window.
    window: Option<ObjectId>,
    /// How long an app may take to show a window.
    app_timeout: Duration,
    /// The last snapshot's nodes (a control's handle indexes them).
    nodes: Vec<Node>,
    /// The windows the last `windows` listed (an app window's handle indexes them):
    /// each one's app (root, name) and the window.
    listed: Vec<(ObjectId, String, ObjectId)>,
    /// The Office API helper, once a call started it.
    uno: Option<OfficeHelper>,
}

impl LinuxDesktop {
    /// Starts the display and the buses, with no app yet.
    pub(crate) async fn start(options: &StartOptions<'_>) -> Result<Self, DesktopError> {
        let Started {
            processes,
            display,
            a11y,
        } = super::start::start(options).await?;
        Ok(LinuxDesktop {
            processes,
            display,
            a11y,
            app: None,
            window: None,
            app_timeout: options.app_timeout,
            nodes: Vec::new(),
            listed: Vec::new(),
            uno: None,
        })
    }

    /// The display.
    pub(super) fn display(&self) -> Display {
        self.display.clone()
    }

    /// The accessibility bus.
    pub(super) fn bus(&self) -> &Connection {
        &self.a11y
    }

    /// The window the actions go to, and its app's name.
    pub(super) fn selected_window(&self) -> Option<(ObjectId, String)> {
        let window = self.window.clone()?;
        let name = self
            .app
            .as_ref()
            .map(|(_, n)| n.clone())
            .unwrap_or_default();
        Some((window, name))
    }

    /// Waits (a while at most) until the desktop has done what it was sent.
    pub(super) async fn settle_now(&self) {
        self.settle().await;
    }

    /// Waits (a while at most) until the desktop has done what it was sent.
    async fn settle(&self) {
        if let Some(root) = self.processes.root() {
            idle::settle(root, SETTLE_LIMIT).await;
        }
    }

    /// Where the mouse acts on `control`: its centre, which must be on the screen (the
    /// pointer clamped to the edge would act on something else).
    fn pointer_at(&self, control: &Control) -> Result<(i32, i32), DesktopError> {
        let (x, y) = control.rect.center();
        if control.rect.is_visible() && self.display.shows(x, y) {
            Ok((x, y))
        } else {
            Err(DesktopError::refused(format!(
                "{control} is not on the screen (it is scrolled or folded away): bring it into view first"
            )))
        }
    }

    fn node(&self, control: &Control) -> Result<&Node, DesktopError> {
        self.nodes.get(control.handle).ok_or_else(|| {
            DesktopError::refused(format!(
                "the control {control} is not in the current snapshot"
            ))
        })
    }
}
impl LinuxDesktop {
    /// Why the app cannot be read: it crashed (the machine's), it was closed (the
    /// agent's), or `e` (the bus's failure, with the app still running: the agent's
    /// when the object vanished, the machine's when the bus failed).
    pub(super) fn gone_or(&mut self, e: BusError) -> DesktopError {
        if let Some(crash) = self.processes.failed(APP) {
            return DesktopError::AppCrashed(crash);
        }
        match self.processes.ended(APP) {
            Some(closed) => DesktopError::refused(closed),
            None => e.into(),
        }
    }
}
