//! Observing the desktop: the app's controls or the desktop's windows now, the screen
//! saved as `action_step{N}.png` with its annotated copy, and the UI tree when asked.

use std::time::Duration;

use super::{DesktopExecutor, TITLE_WAIT};
use crate::desktop::backend::{AppWindow, Snapshot};
use crate::desktop::control::Rect;
use crate::desktop::error::DesktopError;
use crate::executor::{Listed, Scope, ScreenView};

impl DesktopExecutor {
    /// The app's windows and controls now, their names independent of where the
    /// workspace is.
    pub(super) async fn take_snapshot(&mut self) -> Result<Snapshot, DesktopError> {
        let backend = self.backend()?;
        let mut snapshot = backend.snapshot().await?;
        self.names.snapshot(&mut snapshot);
        Ok(snapshot)
    }

    /// The desktop's windows now. A window still loading its document may show no
    /// title yet: asked again for a moment, so that the HostAgent sees what it is; a
    /// window that stays untitled beside titled ones (a helper window) is left out.
    pub(super) async fn list_windows(&mut self) -> Result<Vec<AppWindow>, DesktopError> {
        let backend = self.backend()?;
        let deadline = std::time::Instant::now() + TITLE_WAIT;
        let mut windows = backend.windows().await?;
        while windows.iter().any(|w| w.name.trim().is_empty())
            && std::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(200)).await;
            windows = backend.windows().await?;
        }
        if windows.iter().any(|w| !w.name.trim().is_empty()) {
            windows.retain(|w| !w.name.trim().is_empty());
            for (i, w) in windows.iter_mut().enumerate() {
                w.id = (i + 1).to_string();
            }
        }
        self.names.windows(&mut windows);
        Ok(windows)
    }

    /// Saves the screen as `action_step{N}.png` and its annotated copy (the app's
    /// controls labelled, or for the HostAgent the desktop's windows), and the UI tree
    /// when asked; says what it took and what the agent is shown.
    pub(super) async fn observe(
        &mut self,
        step: Option<u32>,
        scope: Scope,
    ) -> Result<(String, ScreenView), DesktopError> {
        if self.backend.is_none() {
            return Err(DesktopError::desktop("the desktop is not running"));
        }
        let clock = std::time::Instant::now();
        let (listed, window, tree, nodes) = match scope {
            Scope::Screen => {
                let window = self.backend()?.target_window().await?;
                (Listed::Nothing, window, None, 0)
            }
            Scope::App => {
                let snapshot = self.take_snapshot().await?;
                let tree = snapshot.tree.clone();
                let nodes = snapshot.nodes;
                let window = snapshot.window.clone();
                let listed = Listed::Controls(snapshot.controls.clone());
                self.snapshot = Some(snapshot);
                (listed, window, Some(tree), nodes)
            }
            Scope::Desktop => {
                let windows = self.list_windows().await?;
                let nodes = windows.len();
                self.windows = windows.clone();
                (Listed::Windows(windows), None, None, nodes)
            }
        };
        let walked = clock.elapsed();
        let clean = self.backend()?.screenshot().await?;
        self.screen = Some((clean.width, clean.height));
        let shot = clock.elapsed() - walked;
        let annotated = match &listed {
            Listed::Controls(controls) => clean.annotated(controls),
            Listed::Windows(windows) => {
                let labels: Vec<(&str, Rect)> =
                    windows.iter().map(|w| (w.id.as_str(), w.rect)).collect();
                clean.labelled(&labels)
            }
            // The operator's target window boxed.
            Listed::Nothing => match &window {
                Some(w) => clean.labelled(&[("", w.rect)]),
                None => clean.clone(),
            },
        };
        clean.save(&self.dir.screenshot(step, false))?;
        annotated.save(&self.dir.screenshot(step, true))?;
        if self.settings.save_ui_tree
            && let Some(tree) = &tree
        {
            let path = self.dir.ui_tree(step);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| {
                    DesktopError::io(format!("cannot make {}", parent.display()), e)
                })?;
            }
            let text = serde_json::to_string_pretty(tree).unwrap_or_default();
            std::fs::write(&path, text)
                .map_err(|e| DesktopError::io(format!("cannot write {}", path.display()), e))?;
        }
        let what = match &listed {
            Listed::Controls(c) => format!("{nodes} nodes, {} controls", c.len()),
            Listed::Windows(w) => format!("{} application windows", w.len()),
            Listed::Nothing => match &window {
                Some(w) => format!(
                    "the window at ({}, {}) {}x{}",
                    w.rect.x, w.rect.y, w.rect.width, w.rect.height
                ),
                None => "no window".to_string(),
            },
        };
        let note = format!(
            "observed {what} in {:.3}s; screenshot {:.3}s; saved in {:.3}s",
            walked.as_secs_f64(),
            shot.as_secs_f64(),
            (clock.elapsed() - walked - shot).as_secs_f64()
        );
        let view = ScreenView {
            clean,
            annotated,
            listed,
            application: window.as_ref().map(|w| w.application.clone()),
            window_rect: window.as_ref().map(|w| w.rect),
            window: window.map(|w| w.name),
        };
        Ok((note, view))
    }
}
