//! What a desktop step shows its agent: the screen as the step began (clean and
//! annotated), and the things on it an action can name, labelled as the annotated
//! screenshot labels them: the app window's controls for an AppAgent, the desktop's
//! application windows for a HostAgent; for an operator only the pixels and where the
//! target window is.

use std::sync::Arc;

use crate::desktop::backend::AppWindow;
use crate::desktop::control::Control;
use crate::desktop::screenshot::Image;

/// Whose step begins: what the screen is observed for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Scope {
    /// An agent acting in the selected app window (AppAgent, ReplayAgent): its
    /// controls are listed.
    #[default]
    App,
    /// The HostAgent: the desktop's application windows are listed.
    Desktop,
    /// An operator (a computer-use agent): the screen as pixels and where the target
    /// window is; nothing is listed, nothing walked.
    Screen,
}

/// The screenshots of a step's beginning, and what the agent is shown.
#[derive(Clone, Debug)]
pub(crate) struct StepScreens {
    /// The screen as it was: a file name in the task folder.
    pub(crate) clean: String,
    /// The same, every listed control boxed and labelled by its id.
    pub(crate) annotated: String,
    /// What observing took, for the task log.
    pub(crate) note: String,
    /// What the agent is shown.
    pub(crate) view: Arc<ScreenView>,
}

impl StepScreens {
    /// The screens of step `step` saved in the task folder `dir` (UFO's file names),
    /// with what observing took and what the agent is shown.
    pub(crate) fn saved(
        dir: &crate::rundir::layout::TaskDir,
        step: u32,
        note: String,
        view: ScreenView,
    ) -> Option<Self> {
        let name = |annotated| {
            let path = dir.screenshot(Some(step), annotated);
            path.file_name().map(|n| n.to_string_lossy().into_owned())
        };
        Some(Self {
            clean: name(false)?,
            annotated: name(true)?,
            note,
            view: Arc::new(view),
        })
    }
}

/// The screen as a step began, for the agent.
#[derive(Clone, Debug)]
pub(crate) struct ScreenView {
    /// The screen.
    pub(crate) clean: Image,
    /// The screen with the listed things boxed and labelled.
    pub(crate) annotated: Image,
    /// What can be named, by label.
    pub(crate) listed: Listed,
    /// The title of the window the actions go to, if one is selected.
    pub(crate) window: Option<String>,
    /// Where that window is on the screen, when known.
    pub(crate) window_rect: Option<crate::desktop::control::Rect>,
    /// The application it belongs to.
    pub(crate) application: Option<String>,
}

/// The labelled things of a screen.
#[derive(Clone, Debug)]
pub(crate) enum Listed {
    /// The selected window's controls (and its dialogs').
    Controls(Vec<Control>),
    /// The desktop's application windows.
    Windows(Vec<AppWindow>),
    /// Nothing: an operator names points, not things.
    Nothing,
}
