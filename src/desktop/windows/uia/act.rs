//! Acting through UI Automation: starting the task's app and waiting for its window,
//! the actions on a control of the last snapshot (its Invoke pattern or the mouse, its
//! Value, the focus, its text), closing the apps, and screenshots.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use uiautomation::UIElement;
use uiautomation::patterns::{UIInvokePattern, UITextPattern, UIValuePattern, UIWindowPattern};

use super::{State, UiaError, failed, rect_of};
use crate::desktop::action::Button;
use crate::desktop::screenshot::Image;

impl State {
    /// Starts an app in `cwd` and waits for its window.
    pub(in crate::desktop::windows) fn open_app(
        &mut self,
        argv: &[String],
        cwd: &Path,
        timeout: Duration,
    ) -> Result<String, UiaError> {
        let before = self.top_windows()?;
        let (program, args) = argv.split_first().ok_or(UiaError::NoProgram)?;
        // The runner's environment (API keys among it) is not the app's.
        let keep = [
            "SYSTEMROOT",
            "WINDIR",
            "PATH",
            "TEMP",
            "TMP",
            "USERPROFILE",
            "APPDATA",
            "LOCALAPPDATA",
            "PROGRAMFILES",
            "PROGRAMDATA",
            "COMSPEC",
            "HOMEDRIVE",
            "HOMEPATH",
            "USERNAME",
        ];
        let child = Command::new(program)
            .args(args)
            .env_clear()
            .envs(
                keep.iter()
                    .filter_map(|k| std::env::var_os(k).map(|v| (k, v))),
            )
            .current_dir(cwd)
            .spawn()
            .map_err(|source| UiaError::Start {
                program: program.clone(),
                source,
            })?;
        let pid = child.id();
        self.apps.push(child);
        let clock = Instant::now();
        loop {
            for window in self.top_windows()? {
                let mine = window.get_process_id().is_ok_and(|p| p == pid);
                // Office hands a document to a running instance: a window that was not
                // there before is the app's too.
                let new = !before.iter().any(|b| {
                    self.automation
                        .compare_elements(b, &window)
                        .unwrap_or(false)
                });
                if mine || new {
                    let name = window.get_name().unwrap_or_default();
                    self.window = Some(window);
                    return Ok(format!(
                        "{name} showed its window in {:.1}s",
                        clock.elapsed().as_secs_f64()
                    ));
                }
            }
            if clock.elapsed() > timeout {
                return Err(UiaError::NoWindow {
                    program: program.clone(),
                    secs: timeout.as_secs(),
                });
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn element(&self, handle: usize) -> Result<&UIElement, UiaError> {
        self.elements.get(handle).ok_or(UiaError::NotInSnapshot)
    }

    pub(in crate::desktop::windows) fn click(
        &mut self,
        handle: usize,
        button: Button,
        double: bool,
    ) -> Result<String, UiaError> {
        let element = self.element(handle)?;
        if button == Button::Left
            && !double
            && let Ok(invoke) = element.get_pattern::<UIInvokePattern>()
        {
            invoke.invoke().map_err(failed("invoke"))?;
            return Ok("its Invoke pattern".to_string());
        }
        let done = match (button, double) {
            (Button::Left, false) => element.click(),
            (Button::Left, true) => element.double_click(),
            (Button::Right, _) => element.right_click(),
            (Button::Middle, _) => {
                let at = rect_of(element).center();
                super::super::keys::click_at(at, button, double)?;
                return Ok("the mouse".to_string());
            }
            (Button::Back | Button::Forward, _) => {
                let at = rect_of(element).center();
                super::super::pointer::pointer(crate::desktop::backend::Pointer::Click {
                    at,
                    button,
                    count: if double { 2 } else { 1 },
                })?;
                return Ok("the mouse".to_string());
            }
        };
        done.map_err(failed("a click"))?;
        Ok("the mouse".to_string())
    }

    pub(in crate::desktop::windows) fn set_text(
        &mut self,
        handle: usize,
        text: &str,
    ) -> Result<(), UiaError> {
        let element = self.element(handle)?;
        let value = element
            .get_pattern::<UIValuePattern>()
            .map_err(|_| UiaError::TakesNoText)?;
        value.set_value(text).map_err(failed("setting text"))?;
        // A control may keep its text (read-only, or one it checks): read it back (a
        // password box reads back nothing).
        if element.is_password().unwrap_or(false) {
            return Ok(());
        }
        let now = value.get_value().map_err(failed("reading the text back"))?;
        if now.contains(text.trim()) {
            Ok(())
        } else {
            Err(UiaError::KeptText(
                crate::text::shorten(&now, 200).to_string(),
            ))
        }
    }

    /// Brings the selected window to the foreground, where the keys go.
    pub(in crate::desktop::windows) fn focus_window(&mut self) -> Result<String, UiaError> {
        let window = self.window.as_ref().ok_or(UiaError::NoWindowSelected)?;
        window.set_focus().map_err(failed("the focus"))?;
        Ok("the window".to_string())
    }

    pub(in crate::desktop::windows) fn focus(&mut self, handle: usize) -> Result<(), UiaError> {
        self.element(handle)?
            .set_focus()
            .map_err(failed("the focus"))
    }

    pub(in crate::desktop::windows) fn texts(&mut self, handle: usize) -> Result<String, UiaError> {
        let element = self.element(handle)?;
        if let Ok(value) = element.get_pattern::<UIValuePattern>()
            && let Ok(text) = value.get_value()
        {
            return Ok(text);
        }
        if let Ok(text) = element.get_pattern::<UITextPattern>()
            && let Ok(range) = text.get_document_range()
            && let Ok(text) = range.get_text(-1)
        {
            return Ok(text.replace("\r\n", "\n").replace('\r', "\n"));
        }
        element.get_name().map_err(failed("a name"))
    }

    /// Asks the app's windows to close, waits up to `timeout`, then ends what is left
    /// (with its child processes).
    pub(in crate::desktop::windows) fn close_apps(&mut self, timeout: Duration) -> String {
        if let Some(window) = self.window.take()
            && let Ok(pattern) = window.get_pattern::<UIWindowPattern>()
        {
            let _ = pattern.close();
        }
        let clock = Instant::now();
        while clock.elapsed() < timeout
            && self
                .apps
                .iter_mut()
                .any(|c| matches!(c.try_wait(), Ok(None)))
        {
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut killed = 0;
        for app in &mut self.apps {
            if matches!(app.try_wait(), Ok(None)) {
                let _ = Command::new("taskkill")
                    .args(["/PID", &app.id().to_string(), "/T", "/F"])
                    .output();
                let _ = app.wait();
                killed += 1;
            }
        }
        self.apps.clear();
        match killed {
            0 => "the app closed".to_string(),
            n => format!(
                "{n} app processes did not close within {}s and were killed",
                timeout.as_secs()
            ),
        }
    }
}

/// The whole screen.
pub(in crate::desktop::windows) fn screenshot() -> Result<Image, UiaError> {
    let shot = uiautomation::screenshots::Screenshot::capture_desktop()
        .map_err(UiaError::Screenshot)?
        .to_rgba();
    let rgb = shot
        .pixels()
        .chunks_exact(4)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    Ok(Image {
        width: shot.width(),
        height: shot.height(),
        rgb,
    })
}
