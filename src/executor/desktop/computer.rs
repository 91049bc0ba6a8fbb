//! Carrying out one computer-use tool (`desktop::computer`): where it acts (a recorded
//! element found again and the same place on it; else the recorded point moved with its
//! window; else the point itself), refused off the screen; the element under that point
//! (the hit test, before the action changes the screen); the keys held around it; and a
//! result that says where it acted and on what, so that a recording replays by element.

use std::time::Duration;

use serde_json::{Value, json};

use super::{DesktopExecutor, NAMESPACE};
use crate::desktop::backend::Pointer;
use crate::desktop::computer::{Aim, ComputerAction};
use crate::desktop::control::Rect;
use crate::desktop::element::{Element, path_text};
use crate::desktop::error::DesktopError;
use crate::desktop::keys::KeyAction;
use crate::tool::{Blamed, ToolCall, ToolResult};

/// How a pointer action found its place.
struct Placed {
    /// The desktop pixel.
    at: (i32, i32),
    /// How, in words, when not the point as given.
    how: Option<String>,
}

pub(super) async fn act(ex: &mut DesktopExecutor, command: &ToolCall) -> ToolResult {
    let action = match ComputerAction::parse(&command.tool_name, &command.parameters) {
        Ok(a) => a,
        Err(e) => return ToolResult::failure(command, NAMESPACE, e.failure(), Value::Null),
    };
    let outcome = run(ex, &action).await;
    ex.snapshot = None;
    match outcome {
        Ok((mut value, picture)) => {
            if let (Some(shot), Some(o)) = (&ex.step_screenshot, value.as_object_mut()) {
                o.insert("step_screenshot".into(), json!(shot));
            }
            let mut result = ToolResult::success(command, NAMESPACE, value);
            result.picture = picture.map(std::sync::Arc::new);
            result
        }
        Err(e) => {
            let failure = ex.failed(e);
            ToolResult::failure(command, NAMESPACE, failure, Value::Null)
        }
    }
}

/// The result value, and the picture taken (PNG) when the tool looks.
type Done = (Value, Option<Vec<u8>>);

async fn run(ex: &mut DesktopExecutor, action: &ComputerAction) -> Result<Done, DesktopError> {
    use ComputerAction as A;
    let value = match action {
        A::Click {
            aim,
            button,
            count,
            held,
        } => {
            let placed = match aim {
                Some(aim) => place(ex, aim).await?,
                None => Placed {
                    at: ex.backend()?.cursor().await?,
                    how: Some("where the pointer was".to_string()),
                },
            };
            let hit = hit(ex, placed.at).await;
            let input = Pointer::Click {
                at: placed.at,
                button: *button,
                count: *count,
            };
            holding(ex, held, input).await?;
            pointed(&placed, hit)
        }
        A::Move { aim, held } => {
            let placed = place(ex, aim).await?;
            let hit = hit(ex, placed.at).await;
            holding(ex, held, Pointer::Move(placed.at)).await?;
            pointed(&placed, hit)
        }
        A::Drag {
            path,
            element,
            window,
            button,
            held,
        } => {
            // The whole path moves as its start moved: with the element it started on
            // (found again), else with its window.
            let shift = match (element, window) {
                (Some(_), _) => {
                    let start = Aim {
                        at: path[0],
                        element: element.clone(),
                        window: *window,
                    };
                    let placed = place(ex, &start).await?;
                    (
                        placed.at.0.saturating_sub(path[0].0),
                        placed.at.1.saturating_sub(path[0].1),
                    )
                }
                (None, Some(old)) => moved_by(ex, *old).await?,
                (None, None) => (0, 0),
            };
            let path: Vec<(i32, i32)> = path
                .iter()
                .map(|p| (p.0.saturating_add(shift.0), p.1.saturating_add(shift.1)))
                .collect();
            for p in &path {
                on_screen(ex, *p)?;
            }
            let hit = hit(ex, path[0]).await;
            let input = Pointer::Drag {
                path: path.clone(),
                button: *button,
            };
            holding(ex, held, input).await?;
            let mut value = pointed(
                &Placed {
                    at: path[0],
                    how: None,
                },
                hit,
            );
            value["path"] = json!(
                path.iter()
                    .map(|p| json!({"x": p.0, "y": p.1}))
                    .collect::<Vec<_>>()
            );
            value
        }
        A::Scroll { aim, dx, dy, held } => {
            let (placed, hit) = match aim {
                Some(aim) => {
                    let placed = place(ex, aim).await?;
                    let hit = hit(ex, placed.at).await;
                    ex.backend()?.pointer(Pointer::Move(placed.at)).await?;
                    (Some(placed), hit)
                }
                None => (None, None),
            };
            holding(ex, held, Pointer::Scroll { dx: *dx, dy: *dy }).await?;
            let mut value = match &placed {
                Some(p) => pointed(p, hit),
                None => json!({}),
            };
            value["scrolled"] = json!([dx, dy]);
            value
        }
        A::Button { aim, button, down } => {
            let mut value = json!({});
            if let Some(aim) = aim {
                let placed = place(ex, aim).await?;
                let hit = hit(ex, placed.at).await;
                ex.backend()?.pointer(Pointer::Move(placed.at)).await?;
                value = pointed(&placed, hit);
            }
            ex.backend()?
                .pointer(Pointer::Button {
                    button: *button,
                    down: *down,
                })
                .await?;
            value
        }
        A::Keypress { chord, repeat } => {
            let backend = ex.backend()?;
            for _ in 0..*repeat {
                backend.keys(chord.clone()).await?;
            }
            json!({"pressed": repeat})
        }
        A::HoldKey { chord, duration } => {
            hold(ex, chord, *duration).await?;
            json!({"held_s": duration.as_secs_f64()})
        }
        A::Type(text) => {
            ex.backend()?.type_text(text).await?;
            json!({"typed": text.chars().count()})
        }
        A::Screenshot => return look(ex, None).await,
        A::Zoom(region) => return look(ex, Some(*region)).await,
        A::CursorPosition => {
            let (x, y) = ex.backend()?.cursor().await?;
            json!({"x": x, "y": y})
        }
    };
    Ok((value, None))
}

/// Where `aim` acts now: on its recorded element where that is now, else at its point
/// moved as its window moved, else at its point; refused off the screen.
async fn place(ex: &mut DesktopExecutor, aim: &Aim) -> Result<Placed, DesktopError> {
    let placed = if let Some((recorded, at)) = &aim.element {
        let names = ex.names.clone();
        let neutral: std::sync::Arc<crate::desktop::element::Neutral> =
            std::sync::Arc::new(move |name: &str| names.neutral(name));
        match ex.backend()?.find_element(recorded, neutral).await? {
            Some(now) => Placed {
                at: now.point(*at),
                how: Some(format!(
                    "on the recorded {recorded}, found at ({}, {}) {}x{}",
                    now.rect.x, now.rect.y, now.rect.width, now.rect.height
                )),
            },
            None => {
                return Err(DesktopError::refused(format!(
                    "the recorded element is not there: {recorded} ({}) is not in the window now",
                    path_text(&recorded.path)
                )));
            }
        }
    } else if let Some(old) = aim.window {
        let shift = moved_by(ex, old).await?;
        Placed {
            at: (
                aim.at.0.saturating_add(shift.0),
                aim.at.1.saturating_add(shift.1),
            ),
            how: (shift != (0, 0)).then(|| {
                format!(
                    "at the recorded point moved with its window by ({}, {})",
                    shift.0, shift.1
                )
            }),
        }
    } else {
        Placed {
            at: aim.at,
            how: None,
        }
    };
    on_screen(ex, placed.at)?;
    Ok(placed)
}

/// How far the target window moved since it was at `old`.
async fn moved_by(ex: &mut DesktopExecutor, old: Rect) -> Result<(i32, i32), DesktopError> {
    Ok(match ex.backend()?.target_window().await? {
        Some(now) => (
            now.rect.x.saturating_sub(old.x),
            now.rect.y.saturating_sub(old.y),
        ),
        None => (0, 0),
    })
}

/// Refuses a point the screen does not have (the pointer would be clamped to the edge
/// and act on something else).
fn on_screen(ex: &DesktopExecutor, at: (i32, i32)) -> Result<(), DesktopError> {
    if let Some((w, h)) = ex.screen
        && (at.0 < 0 || at.1 < 0 || at.0 >= w as i32 || at.1 >= h as i32)
    {
        return Err(DesktopError::refused(format!(
            "({}, {}) is off the screen ({w}x{h})",
            at.0, at.1
        )));
    }
    Ok(())
}

/// The element under `at`, if the hit test finds one (a failing hit test loses the
/// record of the element, not the action).
async fn hit(ex: &mut DesktopExecutor, at: (i32, i32)) -> Option<Element> {
    let backend = ex.backend().ok()?;
    match backend.element_at(at).await {
        Ok(found) => found.map(|mut e| {
            // Names independent of where the workspace is, as the controls' are.
            e.name = ex.names.neutral(&e.name);
            e.window = ex.names.neutral(&e.window);
            for step in &mut e.path {
                step.name = ex.names.neutral(&step.name);
            }
            e
        }),
        Err(e) => {
            ex.notes.push(format!(
                "the hit test at ({}, {}) failed: {}",
                at.0,
                at.1,
                crate::text::shorten(&e.to_string(), 200)
            ));
            None
        }
    }
}

/// Does `input` with the keys `held` pressed (released after, whatever happened).
async fn holding(
    ex: &mut DesktopExecutor,
    held: &[KeyAction],
    input: Pointer,
) -> Result<(), DesktopError> {
    let backend = ex.backend()?;
    if !held.is_empty() {
        backend.keys(held.to_vec()).await?;
    }
    let done = backend.pointer(input).await;
    if !held.is_empty() {
        let released = backend.keys(released(held)).await;
        done?;
        return released;
    }
    done
}

/// The releases of keys pressed by `pressed`, in reverse.
fn released(pressed: &[KeyAction]) -> Vec<KeyAction> {
    pressed
        .iter()
        .rev()
        .filter_map(|k| match k {
            KeyAction::Down(key) => Some(KeyAction::Up(*key)),
            KeyAction::Tap { .. } | KeyAction::Up(_) => None,
        })
        .collect()
}

/// Holds a chord for `duration`.
async fn hold(
    ex: &mut DesktopExecutor,
    chord: &[KeyAction],
    duration: Duration,
) -> Result<(), DesktopError> {
    let mut down = Vec::new();
    for k in chord {
        match k {
            KeyAction::Tap { key, held } => {
                down.extend(
                    held.iter()
                        .map(|m| KeyAction::Down(crate::desktop::keys::Key::Modifier(*m))),
                );
                down.push(KeyAction::Down(*key));
            }
            KeyAction::Down(_) => down.push(k.clone()),
            KeyAction::Up(_) => {}
        }
    }
    let backend = ex.backend()?;
    backend.keys(down.clone()).await?;
    tokio::time::sleep(duration).await;
    backend.keys(released(&down)).await
}

/// The screen (or the part `region` covers), saved beside the step's screenshots and
/// handed to the agent.
async fn look(ex: &mut DesktopExecutor, region: Option<Rect>) -> Result<Done, DesktopError> {
    let screen = ex.backend()?.screenshot().await?;
    ex.screen = Some((screen.width, screen.height));
    let image = match region {
        Some(r) => {
            let part = screen.cropped(r);
            if part.width == 0 || part.height == 0 {
                return Err(DesktopError::refused(format!(
                    "the region ({}, {}) {}x{} is off the screen ({}x{})",
                    r.x, r.y, r.width, r.height, screen.width, screen.height
                )));
            }
            part
        }
        None => screen,
    };
    ex.captures += 1;
    let kind = if region.is_some() { "zoom" } else { "capture" };
    let path = ex
        .dir
        .file(&format!("action_step_{kind}{}.png", ex.captures));
    let png = image.png()?;
    std::fs::write(&path, &png)
        .map_err(|e| DesktopError::io(format!("cannot write {}", path.display()), e))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let mut value = json!({"screenshot": name, "width": image.width, "height": image.height});
    if let Some(r) = region {
        value["region"] = json!(r);
    }
    Ok((value, Some(png)))
}

/// A pointer action's result: where it acted, how it found the place, the element it
/// hit (and where on it, for a replay), and that element's window.
fn pointed(placed: &Placed, hit: Option<Element>) -> Value {
    let mut value = json!({"at": [placed.at.0, placed.at.1]});
    if let Some(how) = &placed.how {
        value["how"] = json!(how);
    }
    if let Some(element) = hit {
        let at = element.fraction(placed.at);
        let mut e = serde_json::to_value(&element).unwrap_or_default();
        e["at"] = json!([at.0, at.1]);
        e["path_text"] = json!(path_text(&element.path));
        value["element"] = e;
    }
    value
}
