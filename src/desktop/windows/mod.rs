//! Desktop tasks on Windows: UI Automation through the `uiautomation` crate. Windows
//! has one interactive desktop, so a task's "desktop" is its app: started in the
//! task's workspace on its document, its window's control view walked for the control
//! list, actions done through UI Automation's patterns (Invoke, Value, Text, Window)
//! or the mouse and keyboard (SendInput), screenshots with GDI. COM objects stay on
//! the thread that made them: every call runs on the desktop's own thread (`Uia`).
//!
//! Type-checked on Linux (`cargo clippy --target x86_64-pc-windows-gnu`), never run
//! there: Wine has no UI Automation.

mod com;
mod keys;
mod pointer;
mod uia;

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;

use crate::desktop::action::Button;
use crate::desktop::app::Launch;
use crate::desktop::backend::{AppWindow, Backend, Pointer, Snapshot, Window};
use crate::desktop::control::{Control, Rect};
use crate::desktop::element::{Element, Neutral};
use crate::desktop::error::DesktopError;
use crate::desktop::keys::{KeyAction, Modifier};
use crate::desktop::screenshot::Image;
use com::Com;
use uia::Uia;

/// How long an app asked to close may take (to finish a save) before it is killed.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// A task's apps on the Windows desktop.
pub(crate) struct WindowsDesktop {
    uia: Uia,
    workspace: PathBuf,
    app_timeout: Duration,
    /// The Office API helper, once a call started it.
    com: Option<Com>,
}

impl WindowsDesktop {
    /// Connects to UI Automation; the apps start in `workspace`.
    pub(crate) async fn start(
        workspace: &Path,
        app_timeout: Duration,
    ) -> Result<Self, DesktopError> {
        let workspace = workspace.canonicalize().map_err(|e| {
            DesktopError::io(format!("cannot use the folder {}", workspace.display()), e)
        })?;
        Ok(Self {
            uia: Uia::start()?,
            workspace,
            app_timeout,
            com: None,
        })
    }
}

#[async_trait]
impl Backend for WindowsDesktop {
    async fn open_app(&mut self, launch: &Launch) -> Result<String, DesktopError> {
        let (argv, cwd, timeout) = (
            launch.argv.clone(),
            self.workspace.clone(),
            self.app_timeout,
        );
        self.uia
            .call(move |s| s.open_app(&argv, &cwd, timeout))
            .await
    }

    async fn snapshot(&mut self) -> Result<Snapshot, DesktopError> {
        self.uia.call(|s| s.snapshot()).await
    }

    async fn windows(&mut self) -> Result<Vec<AppWindow>, DesktopError> {
        self.uia.call(|s| s.windows()).await
    }

    async fn select_window(&mut self, window: &AppWindow) -> Result<(), DesktopError> {
        let handle = window.handle;
        self.uia.call(move |s| s.select_window(handle)).await
    }

    async fn click(
        &mut self,
        control: &Control,
        button: Button,
        double: bool,
    ) -> Result<String, DesktopError> {
        let handle = control.handle;
        self.uia
            .call(move |s| s.click(handle, button, double))
            .await
    }

    async fn set_text(&mut self, control: &Control, text: &str) -> Result<(), DesktopError> {
        let (handle, text) = (control.handle, text.to_string());
        self.uia.call(move |s| s.set_text(handle, &text)).await
    }

    async fn focus(&mut self, control: &Control) -> Result<(), DesktopError> {
        let handle = control.handle;
        self.uia.call(move |s| s.focus(handle)).await
    }

    async fn focus_window(&mut self, _window: Rect) -> Result<String, DesktopError> {
        // The keys go to the foreground window, which keeps its own focus.
        self.uia.call(|s| s.focus_window()).await
    }

    async fn keys(&mut self, keys: Vec<KeyAction>) -> Result<(), DesktopError> {
        self.uia.call(move |_| keys::send(&keys)).await
    }

    async fn texts(&mut self, control: &Control) -> Result<String, DesktopError> {
        let handle = control.handle;
        self.uia.call(move |s| s.texts(handle)).await
    }

    async fn wheel(&mut self, control: &Control, notches: i32) -> Result<(), DesktopError> {
        let at = control.rect.center();
        self.uia.call(move |_| keys::wheel(at, notches)).await
    }

    async fn click_at(
        &mut self,
        at: (i32, i32),
        button: Button,
        double: bool,
    ) -> Result<(), DesktopError> {
        self.uia
            .call(move |_| keys::click_at(at, button, double))
            .await
    }

    async fn drag(
        &mut self,
        from: (i32, i32),
        to: (i32, i32),
        button: Button,
        duration: Duration,
        held: Option<Modifier>,
    ) -> Result<(), DesktopError> {
        self.uia
            .call(move |_| keys::drag(from, to, button, duration, held))
            .await
    }

    async fn screenshot(&mut self) -> Result<Image, DesktopError> {
        self.uia.call(|_| uia::screenshot()).await
    }

    async fn pointer(&mut self, input: Pointer) -> Result<(), DesktopError> {
        self.uia.call(move |_| pointer::pointer(input)).await
    }

    async fn cursor(&mut self) -> Result<(i32, i32), DesktopError> {
        self.uia.call(|_| pointer::cursor()).await
    }

    async fn type_text(&mut self, text: &str) -> Result<(), DesktopError> {
        let text = text.to_string();
        self.uia.call(move |_| pointer::type_text(&text)).await
    }

    async fn target_window(&mut self) -> Result<Option<Window>, DesktopError> {
        self.uia.call(|s| s.target()).await
    }

    async fn element_at(&mut self, at: (i32, i32)) -> Result<Option<Element>, DesktopError> {
        self.uia.call(move |s| s.element_at(at)).await
    }

    async fn find_element(
        &mut self,
        recorded: &Element,
        neutral: std::sync::Arc<Neutral>,
    ) -> Result<Option<Element>, DesktopError> {
        let recorded = recorded.clone();
        self.uia
            .call(move |s| s.find_element(&recorded, &*neutral))
            .await
    }

    fn has_office_api(&self) -> bool {
        true
    }

    async fn office(
        &mut self,
        app: &str,
        tool: &str,
        args: &serde_json::Map<String, serde_json::Value>,
        document: Option<&str>,
    ) -> Result<serde_json::Value, DesktopError> {
        if self.com.is_none() {
            let document = document.map(|d| self.workspace.join(d));
            self.com = Some(Com::start(&self.workspace, document.as_deref())?);
        }
        let com = self.com.as_mut().expect("just started");
        let answer = com.call(app, tool, args).await;
        if answer.is_err() && com.ended() {
            // Started again at the next call.
            if let Some(com) = self.com.take() {
                com.end().await;
            }
        }
        Ok(answer?)
    }

    async fn close_app(&mut self) -> Result<String, DesktopError> {
        self.uia
            .call(|s| Ok::<_, DesktopError>(s.close_apps(CLOSE_TIMEOUT)))
            .await
    }

    async fn end(&mut self) -> Option<String> {
        if let Some(com) = self.com.take() {
            com.end().await;
        }
        let note = self
            .uia
            .call(|s| Ok::<_, DesktopError>(s.close_apps(Duration::ZERO)))
            .await
            .err()
            .map(|e| e.to_string());
        self.uia.stop();
        note
    }
}
