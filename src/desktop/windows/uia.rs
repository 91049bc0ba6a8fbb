//! UI Automation on its own thread: the thread owns the automation object, the task's
//! app processes and the last snapshot's elements, and runs the jobs the async side
//! sends it one after another (COM objects belong to the thread that made them). What
//! the screen shows (the windows, the app window's walk) is `screen`'s; acting on the
//! apps and their controls is `act`'s. Whose a failure is, `UiaError` says.

mod act;
mod computer;
mod screen;

use std::process::Child;
use std::sync::mpsc;
use std::time::Duration;

use uiautomation::{UIAutomation, UIElement};

pub(super) use act::screenshot;

use super::keys::InputError;
use crate::desktop::control::Rect;
use crate::desktop::error::DesktopError;
use crate::tool::{Blame, Blamed};

/// The most elements a walk visits.
const MAX_NODES: usize = 5000;

type Job = Box<dyn FnOnce(&mut State) + Send>;

/// The handle of the UI Automation thread.
pub(super) struct Uia {
    jobs: Option<mpsc::Sender<Job>>,
}

/// Why UI Automation did not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub(super) enum UiaError {
    /// The automation object cannot be made (COM).
    #[error("UI Automation is not available: {0}")]
    Unavailable(#[source] uiautomation::Error),
    /// The thread cannot be started.
    #[error("cannot start the UI Automation thread: {0}")]
    Thread(#[source] std::io::Error),
    /// The thread ended before it was ready.
    #[error("the UI Automation thread ended while starting")]
    NotStarted,
    /// The thread is gone.
    #[error("the UI Automation thread has ended")]
    Gone,
    /// A call failed: `what` was being done.
    #[error("UI Automation failed ({what}): {source}")]
    Failed {
        /// What was being done (`invoke`, `the focus`).
        what: &'static str,
        /// UI Automation's error.
        #[source]
        source: uiautomation::Error,
    },
    /// The screen cannot be captured.
    #[error("UI Automation failed (a screenshot): {0}")]
    Screenshot(#[source] uiautomation::Error),
    /// An app command with no program.
    #[error("no program given")]
    NoProgram,
    /// The app's program cannot be started.
    #[error("cannot start {program}: {source}")]
    Start {
        /// The program.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The app showed no window in time.
    #[error("{program} showed no window within {secs}s")]
    NoWindow {
        /// The program.
        program: String,
        /// The time it had.
        secs: u64,
    },
    /// A window that is not in the last list.
    #[error("the window is not in the last list")]
    NotListed,
    /// A control that is not in the last snapshot.
    #[error("the control is not in the current snapshot")]
    NotInSnapshot,
    /// A control without the Value pattern.
    #[error("the control takes no text (type into it with keyboard_input instead)")]
    TakesNoText,
    /// A control that kept its text: what it reads (shortened).
    #[error("the control did not take the text: it reads {0:?}")]
    KeptText(String),
    /// Keys with no window to go to.
    #[error("no window is selected")]
    NoWindowSelected,
    /// The mouse or the keyboard.
    #[error(transparent)]
    Input(#[from] InputError),
}

/// UI Automation's errors of an element that is gone or does not do what was asked
/// (UIA_E_ELEMENTNOTENABLED, UIA_E_ELEMENTNOTAVAILABLE, UIA_E_NOCLICKABLEPOINT,
/// UIA_E_NOTSUPPORTED, UIA_E_INVALIDOPERATION, E_INVALIDARG), and the crate's own
/// (not found, inactive, a pattern it lacks, an invalid element).
const REFUSED: [i32; 10] = [
    0x8004_0200_u32 as i32,
    0x8004_0201_u32 as i32,
    0x8004_0202_u32 as i32,
    0x8004_0204_u32 as i32,
    0x8013_1509_u32 as i32,
    0x8007_0057_u32 as i32,
    uiautomation::errors::ERR_NOTFOUND,
    uiautomation::errors::ERR_INACTIVE,
    uiautomation::errors::ERR_TYPE,
    uiautomation::errors::ERR_INVALID_OBJECT,
];

/// Whether UI Automation refused the call on the element (the control vanished, is
/// disabled, does not support it); any other failure (COM, a timeout) is the machine's.
fn refused_by_the_element(e: &uiautomation::Error) -> bool {
    REFUSED.contains(&e.code())
}

/// A control or window that is not there or refuses is the agent's; UI Automation, the
/// thread, a program that will not start are the machine's.
impl Blamed for UiaError {
    fn blame(&self) -> Blame {
        match self {
            Self::Failed { source, .. } if refused_by_the_element(source) => Blame::Agent,
            Self::NotListed
            | Self::NotInSnapshot
            | Self::TakesNoText
            | Self::KeptText(_)
            | Self::NoWindowSelected => Blame::Agent,
            Self::NoProgram => Blame::TaskFile,
            Self::Input(e) => e.blame(),
            Self::Unavailable(_)
            | Self::Thread(_)
            | Self::NotStarted
            | Self::Gone
            | Self::Failed { .. }
            | Self::Screenshot(_)
            | Self::Start { .. }
            | Self::NoWindow { .. } => Blame::Environment,
        }
    }
}

impl From<UiaError> for DesktopError {
    fn from(e: UiaError) -> Self {
        DesktopError::classified(e)
    }
}

/// `what` failed in UI Automation.
fn failed(what: &'static str) -> impl Fn(uiautomation::Error) -> UiaError {
    move |source| UiaError::Failed { what, source }
}

impl Uia {
    /// Starts the thread and its automation object.
    pub(super) fn start() -> Result<Self, UiaError> {
        let (jobs, inbox) = mpsc::channel::<Job>();
        let (ready, started) = mpsc::channel();
        std::thread::Builder::new()
            .name("ui-automation".to_string())
            .spawn(move || {
                let automation = match UIAutomation::new() {
                    Ok(a) => a,
                    Err(e) => {
                        let _ = ready.send(Err(UiaError::Unavailable(e)));
                        return;
                    }
                };
                let _ = ready.send(Ok(()));
                let mut state = State {
                    automation,
                    apps: Vec::new(),
                    window: None,
                    elements: Vec::new(),
                    listed: Vec::new(),
                };
                while let Ok(job) = inbox.recv() {
                    job(&mut state);
                }
                state.close_apps(Duration::ZERO);
            })
            .map_err(UiaError::Thread)?;
        started.recv().map_err(|_| UiaError::NotStarted)??;
        Ok(Self { jobs: Some(jobs) })
    }

    /// Runs `job` on the thread and waits for its answer.
    pub(super) async fn call<T: Send + 'static, E: Into<DesktopError>>(
        &self,
        job: impl FnOnce(&mut State) -> Result<T, E> + Send + 'static,
    ) -> Result<T, DesktopError> {
        let gone = || DesktopError::from(UiaError::Gone);
        let (answer, answered) = tokio::sync::oneshot::channel();
        self.jobs
            .as_ref()
            .ok_or_else(gone)?
            .send(Box::new(move |state| {
                let _ = answer.send(job(state).map_err(Into::into));
            }))
            .map_err(|_| gone())?;
        answered.await.map_err(|_| gone())?
    }

    /// Lets the thread end (it kills what is left of the apps).
    pub(super) fn stop(&mut self) {
        self.jobs.take();
    }
}

/// What the UI Automation thread holds.
pub(super) struct State {
    automation: UIAutomation,
    apps: Vec<Child>,
    /// The app window the actions go to.
    window: Option<UIElement>,
    /// The last snapshot's elements (a control's handle indexes them).
    elements: Vec<UIElement>,
    /// The windows the last `windows` listed (an app window's handle indexes them).
    listed: Vec<UIElement>,
}

fn rect_of(element: &UIElement) -> Rect {
    element
        .get_bounding_rectangle()
        .map(|r| Rect {
            x: r.get_left(),
            y: r.get_top(),
            width: r.get_width(),
            height: r.get_height(),
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_element_gone_or_refusing_is_the_agents_and_com_the_machines() {
        let gone = uiautomation::Error::new(0x8004_0201_u32 as i32, "element not available");
        let e = failed("invoke")(gone);
        assert_eq!(e.blame(), Blame::Agent);
        assert_eq!(
            DesktopError::from(e).failure().message,
            "UI Automation failed (invoke): element not available"
        );
        let com = uiautomation::Error::new(0x8001_0108_u32 as i32, "disconnected");
        assert_eq!(failed("invoke")(com).blame(), Blame::Environment);
        assert_eq!(UiaError::Gone.blame(), Blame::Environment);
        assert_eq!(UiaError::TakesNoText.blame(), Blame::Agent);
    }
}
