//! Carrying out one app tool: the control it names found in the current control list
//! (waiting a while for one that is not there yet: the screen changes after every
//! action), the action done, and the result UFO's way, with what the action resolved
//! and read so that a replay can compare.

use std::time::Instant;

use serde_json::{Value, json};

use super::{DesktopExecutor, NAMESPACE};
use crate::desktop::action::DesktopAction;
use crate::desktop::backend::{AppWindow, Snapshot};
use crate::desktop::control::{Control, Rect};
use crate::desktop::error::DesktopError;
use crate::desktop::keys::KeyAction;
use crate::desktop::select::{SelectError, Selector};
use crate::tool::{Blame, Blamed, ToolCall, ToolResult};

/// UFO's answer when no window is selected (ui_mcp_server.py).
const NO_WINDOW: &str = "No window is selected, please select a window first.";

/// How often a missing control is looked for again.
const POLL: std::time::Duration = std::time::Duration::from_millis(250);

pub(super) async fn act(ex: &mut DesktopExecutor, command: &ToolCall) -> ToolResult {
    let action = match DesktopAction::parse(&command.tool_name, &command.parameters) {
        Ok(a) => a,
        Err(e) => return ToolResult::failure(command, NAMESPACE, e.failure(), Value::Null),
    };
    let changes_screen = !matches!(
        action,
        DesktopAction::Texts { .. }
            | DesktopAction::Summary(_)
            | DesktopAction::Screenshot { .. }
            | DesktopAction::UiTree
            | DesktopAction::WindowInfo { .. }
            | DesktopAction::DesktopApps { .. }
            | DesktopAction::Controls { .. }
            | DesktopAction::SelectWindow { .. }
    );
    let outcome = run(ex, &action).await;
    if changes_screen {
        ex.snapshot = None;
    }
    match outcome {
        Ok(value) => ToolResult::success(command, NAMESPACE, value),
        Err(e) => {
            let failure = ex.failed(e);
            ToolResult::failure(command, NAMESPACE, failure, Value::Null)
        }
    }
}

fn described(control: &Control) -> Value {
    json!({"id": control.id, "name": control.name, "control_type": control.control_type.to_string()})
}

/// The current snapshot, taken now if the screen changed since the last.
async fn current(ex: &mut DesktopExecutor) -> Result<&Snapshot, DesktopError> {
    if ex.snapshot.is_none() {
        ex.snapshot = Some(ex.take_snapshot().await?);
    }
    Ok(ex.snapshot.as_ref().expect("just taken"))
}

/// The control `selector` names; a missing one is looked for again until the
/// control timeout, as the screen may still be changing.
async fn resolve(ex: &mut DesktopExecutor, selector: &Selector) -> Result<Control, DesktopError> {
    let deadline = Instant::now() + ex.settings.control_timeout;
    loop {
        let found = selector.resolve(&current(ex).await?.controls).cloned();
        match found {
            Ok(c) => return Ok(c),
            Err(SelectError::Missing { .. } | SelectError::NoSuchId { .. })
                if Instant::now() < deadline =>
            {
                tokio::time::sleep(POLL).await;
                ex.snapshot = None;
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// The app window's rectangle (the whole screen when it has none).
async fn window_rect(ex: &mut DesktopExecutor) -> Result<Rect, DesktopError> {
    let snapshot = current(ex).await?;
    match snapshot
        .window
        .as_ref()
        .map(|w| w.rect)
        .filter(Rect::is_visible)
    {
        Some(r) => Ok(r),
        None => Err(DesktopError::refused(
            "the app shows no window to act in (select one first)",
        )),
    }
}

/// Why no single window fits a selection: the agent's.
#[derive(Debug, thiserror::Error)]
enum WindowError {
    /// Only a label was given, and no window has it; the windows there are.
    #[error("no window has the label [{0}]: {1}")]
    NoSuchLabel(String, String),
    /// No window has the title; the windows there are.
    #[error("no window is named {0:?}: {1}")]
    NoSuchName(String, String),
    /// Several have it: how many, the title, the windows that have it.
    #[error("{0} windows are named {1:?}: {2}; give its `id`")]
    Ambiguous(usize, String, String),
}

impl Blamed for WindowError {
    fn blame(&self) -> Blame {
        Blame::Agent
    }
}

/// The window of `fresh` (the desktop's windows now) that `id` (a label of `listed`,
/// the list the agent saw) and/or `name` (its title or a part of it) name.
fn pick_window(
    fresh: &[AppWindow],
    listed: &[AppWindow],
    id: Option<&str>,
    name: Option<&str>,
) -> Result<AppWindow, WindowError> {
    // The windows there are, in words.
    let shown = || {
        let all: Vec<String> = fresh
            .iter()
            .map(|w| format!("[{}] {:?}", w.id, w.name))
            .collect();
        if all.is_empty() {
            "the desktop shows no application window".to_string()
        } else {
            format!("the windows are {}", all.join(", "))
        }
    };
    // A label is good for the list it came from: the title it had there decides.
    let wanted = name
        .map(str::to_string)
        .or_else(|| id.and_then(|i| listed.iter().find(|w| w.id == i).map(|w| w.name.clone())));
    let fits = |w: &AppWindow, wanted: Option<&str>| match wanted {
        Some(n) => w.name.to_lowercase().contains(&n.trim().to_lowercase()),
        None => true,
    };
    if let Some(i) = id
        && let Some(w) = fresh
            .iter()
            .find(|w| w.id == i && fits(w, wanted.as_deref()))
    {
        return Ok(w.clone());
    }
    let Some(wanted) = wanted else {
        return Err(WindowError::NoSuchLabel(
            id.unwrap_or_default().to_string(),
            shown(),
        ));
    };
    let matches: Vec<&AppWindow> = fresh.iter().filter(|w| fits(w, Some(&wanted))).collect();
    let exact: Vec<&AppWindow> = matches
        .iter()
        .copied()
        .filter(|w| w.name.trim().eq_ignore_ascii_case(wanted.trim()))
        .collect();
    match (matches.as_slice(), exact.as_slice()) {
        ([one], _) | (_, [one]) => Ok((*one).clone()),
        ([], _) => Err(WindowError::NoSuchName(wanted, shown())),
        (many, _) => Err(WindowError::Ambiguous(
            many.len(),
            wanted,
            many.iter()
                .map(|w| format!("[{}] {:?}", w.id, w.name))
                .collect::<Vec<_>>()
                .join(", "),
        )),
    }
}

fn point(rect: Rect, x: f64, y: f64) -> (i32, i32) {
    (
        rect.x
            .saturating_add((f64::from(rect.width) * x).round() as i32),
        rect.y
            .saturating_add((f64::from(rect.height) * y).round() as i32),
    )
}

async fn run(ex: &mut DesktopExecutor, action: &DesktopAction) -> Result<Value, DesktopError> {
    use DesktopAction as A;
    match action {
        A::Click {
            target,
            button,
            double,
        } => {
            let control = resolve(ex, target).await?;
            let backend = ex.backend()?;
            let how = backend.click(&control, *button, *double).await?;
            Ok(json!({"control": described(&control), "how": how}))
        }
        A::SetText { target, text } => {
            let control = resolve(ex, target).await?;
            let backend = ex.backend()?;
            backend.set_text(&control, text).await?;
            Ok(json!({"control": described(&control)}))
        }
        A::Keys { target, keys } => type_keys(ex, target.as_ref(), keys).await,
        A::Wheel { target, notches } => {
            let control = resolve(ex, target).await?;
            let backend = ex.backend()?;
            backend.wheel(&control, *notches).await?;
            Ok(json!({"control": described(&control)}))
        }
        A::Texts { target } => {
            let control = resolve(ex, target).await?;
            let backend = ex.backend()?;
            let text = backend.texts(&control).await?;
            Ok(json!({"control": described(&control), "text": text}))
        }
        A::ClickAt {
            x,
            y,
            button,
            double,
        } => {
            let at = point(window_rect(ex).await?, *x, *y);
            let backend = ex.backend()?;
            backend.click_at(at, *button, *double).await?;
            Ok(json!({"at": [at.0, at.1]}))
        }
        A::Drag {
            from,
            to,
            button,
            duration,
            held,
        } => {
            let rect = window_rect(ex).await?;
            let (a, b) = (point(rect, from.0, from.1), point(rect, to.0, to.1));
            let backend = ex.backend()?;
            backend.drag(a, b, *button, *duration, *held).await?;
            Ok(json!({"from": [a.0, a.1], "to": [b.0, b.1]}))
        }
        A::Wait(d) => {
            tokio::time::sleep(*d).await;
            Ok(json!({"waited_s": d.as_secs_f64()}))
        }
        A::Summary(text) => Ok(json!({"text": text})),
        A::SelectApplication { name } => select_application(ex, name).await,
        A::SelectWindow { id, name } => select_window(ex, id.as_deref(), name.as_deref()).await,
        A::Screenshot { .. } => capture(ex).await,
        A::UiTree => Ok(current(ex).await?.tree.clone()),
        A::WindowInfo { fields } => window_info(ex, fields).await,
        A::DesktopApps { target } => {
            // The labels are the ones a selection goes by from now on.
            ex.windows = ex.list_windows().await?;
            Ok(crate::desktop::info::windows(&ex.windows, *target))
        }
        A::Controls { fields, target } => controls(ex, fields, *target).await,
    }
}

/// `get_app_window_controls_*info`: the fields asked for of the window's controls.
async fn controls(
    ex: &mut DesktopExecutor,
    fields: &[String],
    target: bool,
) -> Result<Value, DesktopError> {
    let snapshot = current(ex).await?;
    if snapshot.window.is_none() {
        return Err(DesktopError::refused(NO_WINDOW));
    }
    Ok(crate::desktop::info::controls(
        &snapshot.controls,
        fields,
        target,
    ))
}

/// `keyboard_input`: the keys typed into the control named (focused first), or into the
/// window where its focus is.
async fn type_keys(
    ex: &mut DesktopExecutor,
    target: Option<&Selector>,
    keys: &[KeyAction],
) -> Result<Value, DesktopError> {
    let control = match target {
        Some(t) => Some(resolve(ex, t).await?),
        None => None,
    };
    // Keys with no control go to the window, where its focus is: never to
    // whatever happens to be under the pointer.
    let window = match control {
        Some(_) => None,
        None => Some(window_rect(ex).await?),
    };
    let backend = ex.backend()?;
    let to = match (&control, window) {
        (Some(c), _) => {
            backend.focus(c).await?;
            None
        }
        (None, Some(window)) => Some(backend.focus_window(window).await?),
        (None, None) => None,
    };
    backend.keys(keys.to_vec()).await?;
    Ok(json!({"control": control.as_ref().map(described), "to": to}))
}

/// `select_application`: the app opened, or selected when it is open already.
async fn select_application(ex: &mut DesktopExecutor, name: &str) -> Result<Value, DesktopError> {
    // An app the agent named that no one knows: its step fails.
    let launch = crate::desktop::app::launch_for(
        Some(&crate::task::App::Named(name.to_string())),
        ex.document.as_deref(),
    )
    .map_err(DesktopError::refused_because)?
    .ok_or_else(|| DesktopError::refused(format!("no app is named {name:?}")))?;
    let program = launch.argv.join(" ");
    if ex.opened.contains(&program) {
        ex.current = launch.known;
        return Ok(json!({"application": name, "opened": false, "api": ex.api()}));
    }
    let backend = ex.backend()?;
    let how = backend.open_app(&launch).await?;
    ex.opened.push(program);
    ex.current = launch.known;
    Ok(json!({"application": name, "opened": true, "how": how, "api": ex.api()}))
}

/// `select_application_window`: the window the actions go to from now on.
async fn select_window(
    ex: &mut DesktopExecutor,
    id: Option<&str>,
    name: Option<&str>,
) -> Result<Value, DesktopError> {
    let fresh = ex.list_windows().await?;
    let window = pick_window(&fresh, &ex.windows, id, name).map_err(DesktopError::classified)?;
    let backend = ex.backend()?;
    backend.select_window(&window).await?;
    ex.windows = fresh;
    ex.snapshot = None;
    ex.current = crate::desktop::app::Known::for_window(&window.application, &window.name);
    // The app's own API tools (UFO's hybrid AppAgent), when it has them.
    Ok(
        json!({"window": window.name, "application": window.application, "id": window.id, "api": ex.api()}),
    )
}

/// `capture_*_screenshot`: the screen saved beside the step's.
async fn capture(ex: &mut DesktopExecutor) -> Result<Value, DesktopError> {
    ex.captures += 1;
    let path = ex
        .dir
        .file(&format!("action_step_capture{}.png", ex.captures));
    let backend = ex.backend()?;
    let image = backend.screenshot().await?;
    image.save(&path)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    Ok(json!({"screenshot": name, "width": image.width, "height": image.height}))
}

/// `get_app_window_info`: the fields asked for of the selected window.
async fn window_info(ex: &mut DesktopExecutor, fields: &[String]) -> Result<Value, DesktopError> {
    let window = current(ex)
        .await?
        .window
        .clone()
        .ok_or_else(|| DesktopError::refused(NO_WINDOW))?;
    let info = crate::desktop::info::control_info(&window.name, "Window", window.rect, fields);
    Ok(Value::Object(info))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(id: &str, name: &str) -> AppWindow {
        AppWindow {
            id: id.into(),
            name: name.into(),
            application: "soffice".into(),
            ..AppWindow::default()
        }
    }

    #[test]
    fn a_window_is_found_by_its_label_or_its_title() {
        let now = [
            window("1", "report.docx - LibreOffice Writer"),
            window("2", "budget.xlsx - LibreOffice Calc"),
        ];
        assert_eq!(pick_window(&now, &now, Some("2"), None).unwrap().id, "2");
        assert_eq!(pick_window(&now, &now, None, Some("calc")).unwrap().id, "2");
        // A label the agent saw on another list: the title it had there decides.
        let before = [window("1", "budget.xlsx - LibreOffice Calc")];
        assert_eq!(pick_window(&now, &before, Some("1"), None).unwrap().id, "2");
        // A label whose window has another title than the one given: the title decides.
        assert_eq!(
            pick_window(&now, &now, Some("1"), Some("Calc")).unwrap().id,
            "2"
        );
        let e = pick_window(&now, &now, None, Some("Impress")).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"no window is named "Impress": the windows are [1] "report.docx - LibreOffice Writer", [2] "budget.xlsx - LibreOffice Calc""#
        );
        let e = pick_window(&now, &now, None, Some("LibreOffice")).unwrap_err();
        assert!(e.to_string().starts_with("2 windows are named"), "{e}");
        let e = pick_window(&[], &[], Some("9"), None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "no window has the label [9]: the desktop shows no application window"
        );
        // The agent's, in the same words.
        let failure = DesktopError::classified(e).failure();
        assert_eq!(failure.blame, Blame::Agent);
        assert_eq!(
            failure.message,
            "no window has the label [9]: the desktop shows no application window"
        );
    }
}
