//! The Linux desktop as the executor's backend: apps opened, read and closed through the
//! accessibility bus, input through XTEST, Office API calls through the UNO helper.

use std::time::{Duration, Instant};

use async_trait::async_trait;

use super::{CLOSE_TIMEOUT, HELPER, HELPER_END, LinuxDesktop};
use crate::desktop::action::Button;
use crate::desktop::app::Launch;
use crate::desktop::backend::{AppWindow, Backend, Pointer, Snapshot, Window};
use crate::desktop::control::{Control, Rect};
use crate::desktop::element::Element;
use crate::desktop::error::DesktopError;
use crate::desktop::keys::{Key, KeyAction, Modifier};
use crate::desktop::linux::atspi::{self, ObjectId};
use crate::desktop::linux::processes::{APP, find_program, tail};
use crate::desktop::linux::uno::Uno;
use crate::desktop::screenshot::Image;

#[async_trait]
impl Backend for LinuxDesktop {
    async fn open_app(&mut self, launch: &Launch) -> Result<String, DesktopError> {
        let what = format!("{APP} ({})", launch.argv.join(" "));
        let windows = |apps: &[atspi::Application]| -> Vec<ObjectId> {
            apps.iter().flat_map(|a| a.windows.clone()).collect()
        };
        let before = windows(&atspi::applications(&self.a11y).await.unwrap_or_default());
        let clock = Instant::now();
        self.processes.spawn(&what, &launch.argv).await?;
        loop {
            // The app is the one that shows a window that was not there before (an
            // office suite may show it in the instance already running, whose launcher
            // then hands over and exits).
            let apps = atspi::applications(&self.a11y).await.unwrap_or_default();
            if let Some((app, window)) = apps.into_iter().find_map(|a| {
                let new = a.windows.iter().find(|w| !before.contains(w)).cloned();
                new.map(|w| (a, w))
            }) {
                let name = app.name.clone();
                self.app = Some((app.id, app.name));
                self.window = Some(window);
                return Ok(format!(
                    "{name} showed its window in {:.1}s",
                    clock.elapsed().as_secs_f64()
                ));
            }
            if let Some(gone) = self.processes.failed(&what) {
                return Err(DesktopError::desktop(gone));
            }
            if clock.elapsed() > self.app_timeout {
                return Err(DesktopError::desktop(format!(
                    "{what} showed no window within {}s{}",
                    self.app_timeout.as_secs(),
                    tail(self.processes.log())
                )));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    async fn snapshot(&mut self) -> Result<Snapshot, DesktopError> {
        self.settle().await;
        let Some((app, name)) = self.app.clone() else {
            self.nodes.clear();
            return Ok(Snapshot::default());
        };
        match atspi::walk(&self.a11y, &app).await {
            Ok(nodes) => self.nodes = nodes,
            Err(e) => return Err(self.gone_or(e)),
        }
        Ok(atspi::snapshot(&self.nodes, &name, self.window.as_ref()))
    }

    async fn windows(&mut self) -> Result<Vec<AppWindow>, DesktopError> {
        self.settle().await;
        let apps = match atspi::applications(&self.a11y).await {
            Ok(apps) => apps,
            Err(e) => return Err(self.gone_or(e)),
        };
        self.listed.clear();
        let mut out = Vec::new();
        for app in apps {
            for (window, (title, rect)) in app.windows.iter().zip(app.titles) {
                out.push(AppWindow {
                    id: (out.len() + 1).to_string(),
                    name: title,
                    application: app.name.clone(),
                    rect,
                    handle: self.listed.len(),
                });
                self.listed
                    .push((app.id.clone(), app.name.clone(), window.clone()));
            }
        }
        Ok(out)
    }

    async fn select_window(&mut self, window: &AppWindow) -> Result<(), DesktopError> {
        let (app, name, id) = self.listed.get(window.handle).cloned().ok_or_else(|| {
            DesktopError::refused(format!(
                "the window {:?} is not in the last list",
                window.name
            ))
        })?;
        self.app = Some((app, name));
        self.window = Some(id);
        Ok(())
    }

    async fn click(
        &mut self,
        control: &Control,
        button: Button,
        double: bool,
    ) -> Result<String, DesktopError> {
        let node = self.node(control)?.clone();
        if button == Button::Left && !double && atspi::do_click(&self.a11y, &node).await? {
            return Ok("its accessibility action".to_string());
        }
        let (x, y) = self.pointer_at(control)?;
        self.display.click(x, y, button, double).await?;
        Ok(format!("the mouse at ({x}, {y})"))
    }

    async fn set_text(&mut self, control: &Control, text: &str) -> Result<(), DesktopError> {
        let node = self.node(control)?.clone();
        if !atspi::set_text(&self.a11y, &node, text).await? {
            return Err(DesktopError::refused(format!(
                "{control} takes no text (type into it with keyboard_input instead)"
            )));
        }
        // An app may say yes and keep its text (a read-only field, a field it checks):
        // what the control reads now says whether it took it (a password field shows
        // no text back).
        self.settle().await;
        if node.role.contains("password") {
            return Ok(());
        }
        let now = atspi::texts(&self.a11y, &node).await?;
        if now.contains(text.trim()) {
            Ok(())
        } else {
            Err(DesktopError::refused(format!(
                "{control} did not take the text: it reads {:?}",
                crate::text::shorten(&now, 200)
            )))
        }
    }

    async fn focus(&mut self, control: &Control) -> Result<(), DesktopError> {
        let node = self.node(control)?.clone();
        // Without a window manager the keyboard follows the pointer: put it on the
        // control, then give the control the focus (a click where it takes none).
        let (x, y) = self.pointer_at(control)?;
        self.display.move_to(x, y).await?;
        if !atspi::grab_focus(&self.a11y, &node).await? {
            self.display.click(x, y, Button::Left, false).await?;
        }
        Ok(())
    }

    async fn focus_window(&mut self, window: Rect) -> Result<String, DesktopError> {
        // Without a window manager the keyboard follows the pointer: put it where the
        // window's focus is, which the app keeps.
        let (at, place) = match atspi::focused(&self.nodes) {
            Some(node) => (node.rect.center(), format!("its focused {}", node.role)),
            None => (window.center(), "the window".to_string()),
        };
        self.display.move_to(at.0, at.1).await?;
        Ok(place)
    }

    async fn keys(&mut self, keys: Vec<KeyAction>) -> Result<(), DesktopError> {
        // A run of plain characters goes at once; after a key that may act (move, open,
        // anything but insert a character), the app is given the time it takes to act
        // (see `idle`) before the next key can overtake it.
        // A long run goes in parts, each well within the display's answer limit (a
        // character not on the keymap takes a remap of tens of milliseconds).
        const PART: usize = 200;
        let mut run = Vec::new();
        for key in keys {
            let acts =
                !matches!(&key, KeyAction::Tap { key: Key::Char(_), held } if held.is_empty());
            run.push(key);
            if acts || run.len() >= PART {
                self.display.keys(std::mem::take(&mut run)).await?;
                self.settle().await;
            }
        }
        if !run.is_empty() {
            self.display.keys(run).await?;
            self.settle().await;
        }
        Ok(())
    }

    async fn texts(&mut self, control: &Control) -> Result<String, DesktopError> {
        let node = self.node(control)?.clone();
        Ok(atspi::texts(&self.a11y, &node).await?)
    }

    async fn wheel(&mut self, control: &Control, notches: i32) -> Result<(), DesktopError> {
        let (x, y) = self.pointer_at(control)?;
        Ok(self.display.wheel(x, y, notches).await?)
    }

    async fn click_at(
        &mut self,
        at: (i32, i32),
        button: Button,
        double: bool,
    ) -> Result<(), DesktopError> {
        Ok(self.display.click(at.0, at.1, button, double).await?)
    }

    async fn drag(
        &mut self,
        from: (i32, i32),
        to: (i32, i32),
        button: Button,
        duration: Duration,
        held: Option<Modifier>,
    ) -> Result<(), DesktopError> {
        Ok(self.display.drag(from, to, button, duration, held).await?)
    }

    async fn screenshot(&mut self) -> Result<Image, DesktopError> {
        self.settle().await;
        Ok(self.display.screenshot().await?)
    }

    async fn pointer(&mut self, input: Pointer) -> Result<(), DesktopError> {
        self.pointer_input(input).await
    }

    async fn cursor(&mut self) -> Result<(i32, i32), DesktopError> {
        self.cursor_at().await
    }

    async fn type_text(&mut self, text: &str) -> Result<(), DesktopError> {
        self.type_text_as_written(text).await
    }

    async fn target_window(&mut self) -> Result<Option<Window>, DesktopError> {
        self.target().await
    }

    async fn element_at(&mut self, at: (i32, i32)) -> Result<Option<Element>, DesktopError> {
        self.hit(at).await
    }

    async fn find_element(
        &mut self,
        recorded: &Element,
        neutral: std::sync::Arc<crate::desktop::element::Neutral>,
    ) -> Result<Option<Element>, DesktopError> {
        self.find_again(recorded, &*neutral).await
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
        if self.uno.is_none() {
            find_program("/usr/bin/python3")?;
            let (file, code) = Uno::code();
            std::fs::write(self.processes.tmp.join(file), code)
                .map_err(|e| DesktopError::io(format!("cannot prepare {HELPER}"), e))?;
            let document = document.map(|d| self.processes.workspace().join(d));
            let cwd = self.processes.workspace().to_path_buf();
            let (to, from) = self
                .processes
                .spawn_piped(HELPER, &Uno::argv(document.as_deref()), &cwd)
                .await?;
            self.uno = Some(Uno::over(to, from)?);
        }
        let uno = self.uno.as_mut().expect("just started");
        let answer = uno.call(app, tool, args).await;
        if let Some(gone) = self.processes.ended(HELPER) {
            // Started again at the next call; this one says why.
            self.uno = None;
            return Err(DesktopError::desktop(format!(
                "{gone} (is python3-uno installed? scripts/setup-desktop.sh)"
            )));
        }
        let answer = answer?;
        self.settle().await;
        Ok(answer)
    }

    async fn close_app(&mut self) -> Result<String, DesktopError> {
        // The helper first: while its connection holds the office, the office stays up
        // with its windows closed. Its input closed, it ends.
        if self.uno.take().is_some() {
            let clock = Instant::now();
            while self.processes.runs(HELPER) && clock.elapsed() < HELPER_END {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        if !self.processes.runs(APP) {
            return Ok("no app was running".to_string());
        }
        self.display.close_windows().await?;
        if self.processes.end_apps(CLOSE_TIMEOUT).await {
            Ok("the app closed".to_string())
        } else {
            Ok(format!(
                "the app did not close within {}s of being asked (an unsaved document?) and was killed",
                CLOSE_TIMEOUT.as_secs()
            ))
        }
    }

    fn app_crash(&mut self) -> Option<String> {
        self.processes.failed(APP)
    }

    async fn start_program(
        &mut self,
        what: &str,
        argv: &[String],
        cwd: &std::path::Path,
    ) -> Result<(), DesktopError> {
        Ok(self.processes.spawn_in(what, argv, cwd).await?)
    }

    async fn start_helper(
        &mut self,
        what: &str,
        argv: &[String],
        cwd: &std::path::Path,
    ) -> Result<crate::desktop::backend::HelperPipes, DesktopError> {
        use tokio::net::unix::pipe;
        let (to, from) = self.processes.spawn_piped(what, argv, cwd).await?;
        let pipes = |e: std::io::Error| DesktopError::io(format!("cannot talk to {what}"), e);
        let to = pipe::Sender::from_owned_fd(to).map_err(pipes)?;
        let from = pipe::Receiver::from_owned_fd(from).map_err(pipes)?;
        Ok((Box::new(to), Box::new(from)))
    }

    fn program_ended(&mut self, what: &str) -> Option<String> {
        self.processes.ended(what)
    }

    async fn end(&mut self) -> Option<String> {
        let left = self.processes.end().await?;
        // Xvfb, the two buses, the registry and the apps are expected; say only what is odd.
        (left > 16).then(|| format!("the desktop ended with {left} processes still running"))
    }
}
