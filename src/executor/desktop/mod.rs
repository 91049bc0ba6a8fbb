//! The desktop executor: UFO's app tools on the task's own desktop, beside the shell
//! tools (a desktop task may still run commands, in its shell jail). It starts the
//! desktop and the app once the task's setup ran (`prepare`), observes the screen at
//! the start of every step (UFO's `action_step{N}.png` and its annotated copy, and the
//! UI tree when asked), carries out each app tool (`act`), and at the end takes the
//! final screenshot, closes the app and ends the desktop with everything in it.

mod act;
mod api;
mod computer;
mod names;
mod observe;
mod start;

use std::time::Duration;

use async_trait::async_trait;

use super::{Executor, Scope, ShellExecutor, StepScreens};
use crate::desktop::app::Launch;
use crate::desktop::backend::{AppWindow, Backend, Snapshot};
use crate::desktop::error::DesktopError;
use crate::desktop::furniture::Furniture;
use crate::desktop::tools::is_desktop_tool;
use crate::osworld::{OsWorldPlan, Room};
use crate::rundir::layout::TaskDir;
use crate::tool::{Blame, Blamed, Failure, ToolCall, ToolResult};
use start::start;

/// How long the final screenshot and closing the app may take when the task ends.
const END_SESSION_LIMIT: Duration = Duration::from_secs(30);

/// How long a window without a title is waited for to get one.
const TITLE_WAIT: Duration = Duration::from_secs(3);

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
    /// The desktop's windows as last listed (the HostAgent's labels).
    windows: Vec<AppWindow>,
    fault: Option<Failure>,
    /// What went wrong observing the screen, told in the task log at the end.
    notes: Vec<String>,
    /// Screenshots taken by `capture_*` tools.
    captures: u32,
    /// Set once the final screenshot was taken and the app closed.
    session_ended: bool,
    /// The screen's size, as the last screenshot saw it (a computer-use action off it
    /// is refused).
    screen: Option<(u32, u32)>,
    /// The step under way's screenshot (a file of the task folder): a computer-use
    /// action's result names it, so that a replay can show what the recording saw.
    step_screenshot: Option<String>,
    /// The workspace's path as names may show it.
    names: names::WorkspaceNames,
    /// The app the actions go to now (the one opened, or the window selected last), for
    /// its API tools.
    current: Option<crate::desktop::app::Known>,
    /// What the desktop is furnished with.
    furniture: Furniture,
    /// An OSWorld task's part of the desktop, until the desktop is up.
    osworld: Option<OsWorldPlan>,
    /// The same, running.
    room: Option<Room>,
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
        let names = names::WorkspaceNames::new(&dir.workspace());
        let current = app.as_ref().and_then(|a| a.known);
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
            windows: Vec::new(),
            fault: None,
            notes: Vec::new(),
            captures: 0,
            session_ended: false,
            screen: None,
            step_screenshot: None,
            current,
            names,
            furniture: Furniture::default(),
            osworld: None,
            room: None,
        }
    }

    /// The desktop of an OSWorld task: furnished as OSWorld's VM, with OSWorld's server
    /// and evaluator beside the apps, its setup run by OSWorld's own code.
    pub(crate) fn with_osworld(mut self, plan: OsWorldPlan) -> Self {
        self.furniture = plan.furniture();
        self.osworld = Some(plan);
        self
    }

    /// The API (`desktop::office`) of the app the actions go to, when it has one and
    /// this platform carries it out: its AppAgent is offered the app's API tools.
    pub(super) fn api(&self) -> Option<&'static str> {
        let platform = self.backend.as_ref().is_some_and(|b| b.has_office_api());
        self.current
            .filter(|_| platform)
            .and_then(crate::desktop::office::api_of)
    }

    /// The desktop's backend, while the desktop runs.
    fn backend(&mut self) -> Result<&mut Box<dyn Backend>, DesktopError> {
        self.backend
            .as_mut()
            .ok_or_else(|| DesktopError::desktop("the desktop is gone"))
    }

    /// What a failed action (`e`) tells the agent and the runner: a crash of the app
    /// makes it the machine's, whatever the action saw; a failure that is not the
    /// agent's is the executor's fault from now on.
    fn failed(&mut self, e: DesktopError) -> Failure {
        let crash = self.backend.as_mut().and_then(|b| b.app_crash());
        let failure = match crash {
            Some(crash) if !matches!(e, DesktopError::AppCrashed(_)) => {
                DesktopError::AppCrashed(format!("{crash} (the action said: {e})")).failure()
            }
            _ => e.failure(),
        };
        if failure.blame != Blame::Agent {
            self.fault.get_or_insert_with(|| failure.clone());
        }
        failure
    }
}

#[async_trait]
impl Executor for DesktopExecutor {
    async fn execute(&mut self, command: &ToolCall) -> ToolResult {
        if !is_desktop_tool(&command.tool_name) {
            return self.shell.execute(command).await;
        }
        if self.backend.is_none() {
            // A task file whose setup calls an app tool.
            let why = self.fault.clone().unwrap_or_else(|| {
                Failure::new(
                    Blame::TaskFile,
                    "the desktop is not started yet (app tools cannot run in a task's setup)",
                )
            });
            return ToolResult::failure(command, NAMESPACE, why, serde_json::Value::Null);
        }
        if crate::desktop::office::is_office_tool(&command.tool_name) {
            return api::call(self, command).await;
        }
        if crate::desktop::computer::is_computer_tool(&command.tool_name) {
            return computer::act(self, command).await;
        }
        act::act(self, command).await
    }

    fn fault(&self) -> Option<Failure> {
        self.fault.clone().or_else(|| self.shell.fault())
    }

    async fn start_service(
        &mut self,
        spec: &crate::executor::ServiceSpec<'_>,
    ) -> Result<crate::executor::Service, Failure> {
        self.shell.start_service(spec).await
    }

    async fn prepare(&mut self) -> Result<Option<String>, Failure> {
        let clock = std::time::Instant::now();
        // The desktop's programs are held to the task's memory limit, as its commands.
        self.furniture.memory = self.shell.limits().memory_bytes;
        let started = start(
            self.dir.clone(),
            self.hidden.clone(),
            self.settings.app_timeout,
            &self.furniture,
        )
        .await;
        let backend = match started {
            Ok(backend) => self.backend.insert(backend),
            Err(e) => {
                let failure = e.failure();
                self.fault = Some(failure.clone());
                return Err(failure);
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
                    // An app that did not start (another try may start it), or a
                    // document it cannot open (the task file's).
                    let failure = e.failure();
                    self.fault = Some(failure.clone());
                    return Err(failure);
                }
            }
        }
        if let Some(plan) = self.osworld.take() {
            let home = self.dir.workspace();
            let backend = self.backend.as_mut().expect("started above");
            match Room::open(backend.as_mut(), plan, &home).await {
                Ok((room, how)) => {
                    self.room = Some(room);
                    note.push_str(&format!("; {how}"));
                }
                Err(failure) => {
                    if failure.blame != Blame::Agent {
                        self.fault = Some(failure.clone());
                    }
                    return Err(failure);
                }
            }
        }
        Ok(Some(note))
    }

    async fn osworld_evaluate(
        &mut self,
        last: crate::osworld::LastAction,
    ) -> Option<Result<crate::osworld::Scored, Failure>> {
        let room = self.room.as_mut()?;
        let Some(backend) = self.backend.as_mut() else {
            return Some(Err(Failure::environment(
                "the desktop ended before OSWorld's evaluation",
            )));
        };
        Some(room.evaluate(backend.as_mut(), last).await)
    }

    async fn begin_step(&mut self, step: u32, scope: Scope) -> Option<StepScreens> {
        self.step_screenshot = None;
        match self.observe(Some(step), scope).await {
            Ok((note, view)) => {
                let screens = StepScreens::saved(&self.dir, step, note, view);
                self.step_screenshot = screens.as_ref().map(|s| s.clean.clone());
                screens
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
        // The app's screen, or when it has none (it quit) the desktop's: the final
        // screenshot is there whenever the desktop is.
        match self.observe(None, Scope::App).await {
            Ok((note, _)) => notes.push(format!("final screen {note}")),
            Err(app) => match self.observe(None, Scope::Desktop).await {
                Ok((note, _)) => notes.push(format!(
                    "final screen of the desktop, as the app shows none ({}) {note}",
                    crate::text::shorten(&app.to_string(), 200)
                )),
                Err(e) => notes.push(format!("cannot take the final screenshot: {e}")),
            },
        }
        // OSWorld's evaluation works on the running apps (its postconfig saves the
        // document): they end with the desktop, after it.
        if self.room.is_some() {
            return Some(notes.join("; "));
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
