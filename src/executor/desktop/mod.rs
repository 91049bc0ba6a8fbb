//! The desktop executor: UFO's app tools on the task's own desktop, beside the shell
//! tools (a desktop task may still run commands, in its shell jail). It starts the
//! desktop and the app once the task's setup ran (`prepare`), observes the screen at
//! the start of every step (UFO's `action_step{N}.png` and its annotated copy, and the
//! UI tree when asked), carries out each app tool (`act`), and at the end takes the
//! final screenshot, closes the app and ends the desktop with everything in it.

mod act;

use std::time::Duration;

use async_trait::async_trait;

use super::{Executor, ShellExecutor, StepScreens};
use crate::desktop::app::Launch;
use crate::desktop::backend::{Backend, Snapshot};
use crate::desktop::tools::is_desktop_tool;
use crate::rundir::layout::TaskDir;
use crate::tool::{ToolCall, ToolResult};

/// How long the final screenshot and closing the app may take when the task ends.
const END_SESSION_LIMIT: Duration = Duration::from_secs(30);

/// The namespace of desktop tool results (UFO's server namespace).
const NAMESPACE: &str = "AppUIExecutor";

/// Knobs of desktop tasks.
#[derive(Clone, Debug)]
pub(crate) struct DesktopSettings {
    /// How long an app may take to show its window.
    pub(crate) app_timeout: Duration,
    /// How long an action waits for the control it names to appear.
    pub(crate) control_timeout: Duration,
    /// Save each step's UI tree (UFO's `SAVE_UI_TREE`).
    pub(crate) save_ui_tree: bool,
}

impl Default for DesktopSettings {
    fn default() -> Self {
        Self {
            app_timeout: Duration::from_secs(90),
            control_timeout: Duration::from_secs(10),
            save_ui_tree: false,
        }
    }
}

/// Runs a desktop task's tools.
pub(crate) struct DesktopExecutor {
    shell: ShellExecutor,
    dir: TaskDir,
    app: Option<Launch>,
    /// The task's document in the workspace (its `object`), for apps opened later.
    document: Option<String>,
    /// The command lines of the apps opened so far.
    opened: Vec<String>,
    /// Folders the desktop must not see: the run's folder (other tasks' desktops and
    /// files) and the user's home (their sockets and keys).
    hidden: Vec<std::path::PathBuf>,
    settings: DesktopSettings,
    backend: Option<Box<dyn Backend>>,
    /// The controls as last observed, until an action changes the screen.
    snapshot: Option<Snapshot>,
    fault: Option<String>,
    /// What went wrong observing the screen, told in the task log at the end.
    notes: Vec<String>,
    /// Screenshots taken by `capture_*` tools.
    captures: u32,
    /// Set once the final screenshot was taken and the app closed.
    session_ended: bool,
}

impl DesktopExecutor {
    /// An executor for the task folder `dir`, opening `app` (if any) when prepared on
    /// `document` (the task's object in the workspace), with `shell` for the shell tools.
    pub(crate) fn new(
        shell: ShellExecutor,
        dir: TaskDir,
        app: Option<Launch>,
        document: Option<String>,
        hidden: Vec<std::path::PathBuf>,
        settings: DesktopSettings,
    ) -> Self {
        Self {
            shell,
            dir,
            app,
            document,
            opened: Vec::new(),
            hidden,
            settings,
            backend: None,
            snapshot: None,
            fault: None,
            notes: Vec::new(),
            captures: 0,
            session_ended: false,
        }
    }

    /// Saves the screen as `action_step{N}.png` and its annotated copy, and the UI tree
    /// when asked; says what it took.
    async fn observe(&mut self, step: Option<u32>) -> Result<String, String> {
        let Some(backend) = self.backend.as_mut() else {
            return Err("the desktop is not running".to_string());
        };
        let clock = std::time::Instant::now();
        let snapshot = backend.snapshot().await?;
        let walked = clock.elapsed();
        let image = backend.screenshot().await?;
        let shot = clock.elapsed() - walked;
        image.save(&self.dir.screenshot(step, false))?;
        image
            .annotated(&snapshot.controls)
            .save(&self.dir.screenshot(step, true))?;
        if self.settings.save_ui_tree {
            let path = self.dir.ui_tree(step);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("cannot make {}: {e}", parent.display()))?;
            }
            let text = serde_json::to_string_pretty(&snapshot.tree).unwrap_or_default();
            std::fs::write(&path, text)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        let note = format!(
            "observed {} nodes, {} controls in {:.3}s; screenshot {:.3}s; saved in {:.3}s",
            snapshot.nodes,
            snapshot.controls.len(),
            walked.as_secs_f64(),
            shot.as_secs_f64(),
            (clock.elapsed() - walked - shot).as_secs_f64()
        );
        self.snapshot = Some(snapshot);
        Ok(note)
    }
}

/// Starts the desktop of the task folder `dir`, out of sight of `hidden`.
#[cfg(target_os = "linux")]
async fn start(
    dir: TaskDir,
    hidden: Vec<std::path::PathBuf>,
    app_timeout: Duration,
) -> Result<Box<dyn Backend>, String> {
    use crate::desktop::linux::{LinuxDesktop, StartOptions};
    let jail = crate::jail::jail_binary().ok_or(
        "desktop tasks run in a jail, and ufo-batch-jail is not beside ufo-batch (cargo build --release builds both)",
    )?;
    let tmp = dir.desktop();
    let workspace = dir.workspace();
    let log = dir.desktop_log();
    let options = StartOptions {
        jail: &jail,
        workspace: &workspace,
        tmp: &tmp,
        log: &log,
        hidden,
        app_timeout,
    };
    Ok(Box::new(LinuxDesktop::start(&options).await?))
}

/// Starts the task's desktop on Windows: its apps on the one interactive desktop.
#[cfg(windows)]
async fn start(
    dir: TaskDir,
    _hidden: Vec<std::path::PathBuf>,
    app_timeout: Duration,
) -> Result<Box<dyn Backend>, String> {
    let desktop =
        crate::desktop::windows::WindowsDesktop::start(&dir.workspace(), app_timeout).await?;
    Ok(Box::new(desktop))
}

#[cfg(not(any(target_os = "linux", windows)))]
async fn start(
    _dir: TaskDir,
    _hidden: Vec<std::path::PathBuf>,
    _app_timeout: Duration,
) -> Result<Box<dyn Backend>, String> {
    Err("desktop tasks run on Linux and Windows only".to_string())
}

#[async_trait]
impl Executor for DesktopExecutor {
    async fn execute(&mut self, command: &ToolCall) -> ToolResult {
        if !is_desktop_tool(&command.tool_name) {
            return self.shell.execute(command).await;
        }
        if self.backend.is_none() {
            let why = self.fault.clone().unwrap_or_else(|| {
                "the desktop is not started yet (app tools cannot run in a task's setup)"
                    .to_string()
            });
            return ToolResult::failure(command, NAMESPACE, why, serde_json::Value::Null);
        }
        act::act(self, command).await
    }

    fn fault(&self) -> Option<String> {
        self.fault.clone().or_else(|| self.shell.fault())
    }

    async fn start_service(
        &mut self,
        spec: &crate::executor::ServiceSpec<'_>,
    ) -> Result<crate::executor::Service, String> {
        self.shell.start_service(spec).await
    }

    async fn prepare(&mut self) -> Result<Option<String>, String> {
        let clock = std::time::Instant::now();
        let started = start(
            self.dir.clone(),
            self.hidden.clone(),
            self.settings.app_timeout,
        )
        .await;
        let backend = match started {
            Ok(backend) => self.backend.insert(backend),
            Err(e) => {
                self.fault = Some(e.clone());
                return Err(e);
            }
        };
        let mut note = format!("desktop up in {:.2}s", clock.elapsed().as_secs_f64());
        if let Some(app) = self.app.clone() {
            match backend.open_app(&app).await {
                Ok(how) => {
                    self.opened.push(app.argv.join(" "));
                    note.push_str(&format!("; {how}"));
                }
                Err(e) => {
                    self.fault = Some(e.clone());
                    return Err(e);
                }
            }
        }
        Ok(Some(note))
    }

    async fn begin_step(&mut self, step: u32) -> Option<StepScreens> {
        match self.observe(Some(step)).await {
            Ok(note) => {
                let name = |annotated| {
                    let path = self.dir.screenshot(Some(step), annotated);
                    path.file_name().map(|n| n.to_string_lossy().into_owned())
                };
                Some(StepScreens {
                    clean: name(false)?,
                    annotated: name(true)?,
                    note,
                })
            }
            Err(e) => {
                self.snapshot = None;
                self.notes
                    .push(format!("step {step}: cannot observe the screen: {e}"));
                None
            }
        }
    }

    async fn end_session(&mut self) -> Option<String> {
        if self.backend.is_none() || self.session_ended {
            return None;
        }
        self.session_ended = true;
        let mut notes = Vec::new();
        match self.observe(None).await {
            Ok(note) => notes.push(format!("final screen {note}")),
            Err(e) => notes.push(format!("cannot take the final screenshot: {e}")),
        }
        // Closed in every unattended run (UFO's `close` asks the same), so that the checks
        // read what the app saved and nothing is left half written.
        let backend = self.backend.as_mut()?;
        match backend.close_app().await {
            Ok(how) => notes.push(how),
            Err(e) => notes.push(format!("cannot close the app: {e}")),
        }
        Some(notes.join("; "))
    }

    async fn shutdown(&mut self) -> Option<String> {
        let mut notes = std::mem::take(&mut self.notes);
        // Bounded: the task is over (it may have timed out because the app hung).
        match tokio::time::timeout(END_SESSION_LIMIT, self.end_session()).await {
            Ok(note) => notes.extend(note),
            Err(_) => notes.push(format!(
                "the final screenshot and closing the app took over {}s and were given up",
                END_SESSION_LIMIT.as_secs()
            )),
        }
        if let Some(mut backend) = self.backend.take() {
            notes.extend(backend.end().await);
        }
        notes.extend(self.shell.shutdown().await);
        (!notes.is_empty()).then(|| notes.join("; "))
    }
}
