//! A person's pointer and keyboard on Windows, for the computer-use actions: the mouse
//! moved with the `uiautomation` crate, its buttons (the side ones too) and both wheels
//! pressed with SendInput, and text typed as written with SendInput's Unicode events
//! (each UTF-16 unit a key event of its own: any character, whatever the layout).

use uiautomation::inputs::Mouse;
use uiautomation::types::Point;
use windows::Win32::UI::Input::KeyboardAndMouse::{
    INPUT, INPUT_0, INPUT_KEYBOARD, INPUT_MOUSE, KEYBD_EVENT_FLAGS, KEYBDINPUT, KEYEVENTF_KEYUP,
    KEYEVENTF_UNICODE, MOUSE_EVENT_FLAGS, MOUSEEVENTF_HWHEEL, MOUSEEVENTF_LEFTDOWN,
    MOUSEEVENTF_LEFTUP, MOUSEEVENTF_MIDDLEDOWN, MOUSEEVENTF_MIDDLEUP, MOUSEEVENTF_RIGHTDOWN,
    MOUSEEVENTF_RIGHTUP, MOUSEEVENTF_WHEEL, MOUSEEVENTF_XDOWN, MOUSEEVENTF_XUP, MOUSEINPUT,
    SendInput, VIRTUAL_KEY,
};

use super::keys::InputError;
use crate::desktop::action::Button;
use crate::desktop::backend::Pointer;

/// A wheel notch, as Windows counts it.
const WHEEL_DELTA: i32 = 120;

fn mouse(flags: MOUSE_EVENT_FLAGS, data: i32) -> INPUT {
    INPUT {
        r#type: INPUT_MOUSE,
        Anonymous: INPUT_0 {
            mi: MOUSEINPUT {
                dx: 0,
                dy: 0,
                mouseData: data as u32,
                dwFlags: flags,
                time: 0,
                dwExtraInfo: 0,
            },
        },
    }
}

fn key(unit: u16, up: bool) -> INPUT {
    let flags = if up {
        KEYEVENTF_UNICODE | KEYEVENTF_KEYUP
    } else {
        KEYEVENTF_UNICODE | KEYBD_EVENT_FLAGS(0)
    };
    INPUT {
        r#type: INPUT_KEYBOARD,
        Anonymous: INPUT_0 {
            ki: KEYBDINPUT {
                wVk: VIRTUAL_KEY(0),
                wScan: unit,
                dwFlags: flags,
                time: 0,
                dwExtraInfo: 0,
            },
        },
    }
}

/// Sends `inputs`, all of them or an error.
fn send(inputs: &[INPUT]) -> Result<(), InputError> {
    if inputs.is_empty() {
        return Ok(());
    }
    // SAFETY: well-formed INPUTs, their size as the API asks.
    let sent = unsafe { SendInput(inputs, std::mem::size_of::<INPUT>() as i32) };
    if sent as usize == inputs.len() {
        Ok(())
    } else {
        Err(InputError::Blocked)
    }
}

/// The events that press (or release) `button`.
fn button(button: Button, down: bool) -> INPUT {
    let (flags, data) = match (button, down) {
        (Button::Left, true) => (MOUSEEVENTF_LEFTDOWN, 0),
        (Button::Left, false) => (MOUSEEVENTF_LEFTUP, 0),
        (Button::Right, true) => (MOUSEEVENTF_RIGHTDOWN, 0),
        (Button::Right, false) => (MOUSEEVENTF_RIGHTUP, 0),
        (Button::Middle, true) => (MOUSEEVENTF_MIDDLEDOWN, 0),
        (Button::Middle, false) => (MOUSEEVENTF_MIDDLEUP, 0),
        (Button::Back, true) => (MOUSEEVENTF_XDOWN, 1),
        (Button::Back, false) => (MOUSEEVENTF_XUP, 1),
        (Button::Forward, true) => (MOUSEEVENTF_XDOWN, 2),
        (Button::Forward, false) => (MOUSEEVENTF_XUP, 2),
    };
    mouse(flags, data)
}

fn move_to(at: (i32, i32)) -> Result<(), InputError> {
    Mouse::new()
        .move_to(&Point::new(at.0, at.1))
        .map_err(|source| InputError::Failed {
            what: "moving the mouse",
            source,
        })
}

/// Carries out `input`.
pub(super) fn pointer(input: Pointer) -> Result<(), InputError> {
    match input {
        Pointer::Move(at) => move_to(at),
        Pointer::Button { button: b, down } => send(&[button(b, down)]),
        Pointer::Click {
            at,
            button: b,
            count,
        } => {
            move_to(at)?;
            let mut events = Vec::new();
            for _ in 0..count.max(1) {
                events.push(button(b, true));
                events.push(button(b, false));
            }
            send(&events)
        }
        Pointer::Scroll { dx, dy } => {
            let mut events = Vec::new();
            // Windows' wheel turns up when positive: down is the other way.
            if dy != 0 {
                events.push(mouse(MOUSEEVENTF_WHEEL, -dy.clamp(-100, 100) * WHEEL_DELTA));
            }
            if dx != 0 {
                events.push(mouse(MOUSEEVENTF_HWHEEL, dx.clamp(-100, 100) * WHEEL_DELTA));
            }
            send(&events)
        }
        Pointer::Drag { path, button: b } => {
            let Some(&first) = path.first() else {
                return Ok(());
            };
            move_to(first)?;
            send(&[button(b, true)])?;
            let mut moved = Ok(());
            // Two seconds for the whole path, at most.
            let per_point = (2000 / path.len().max(1) as u64).clamp(1, 100);
            for &point in &path[1..] {
                moved = Mouse::new()
                    .move_time(per_point)
                    .move_to(&Point::new(point.0, point.1))
                    .map_err(|source| InputError::Failed {
                        what: "dragging",
                        source,
                    });
                if moved.is_err() {
                    break;
                }
            }
            // Released whatever happened on the way.
            let released = send(&[button(b, false)]);
            moved.and(released)
        }
    }
}

/// Where the pointer is.
pub(super) fn cursor() -> Result<(i32, i32), InputError> {
    let p = Mouse::get_cursor_pos().map_err(|source| InputError::Failed {
        what: "reading the pointer",
        source,
    })?;
    Ok((p.get_x(), p.get_y()))
}

/// Types `text` as written: each UTF-16 unit pressed and released as itself; a newline
/// is Enter (`\r`), a tab Tab.
pub(super) fn type_text(text: &str) -> Result<(), InputError> {
    let mut events = Vec::new();
    for c in text.chars() {
        let c = match c {
            '\n' => '\r',
            '\r' => continue,
            c if c.is_control() && c != '\t' => continue,
            c => c,
        };
        let mut units = [0u16; 2];
        for unit in c.encode_utf16(&mut units) {
            events.push(key(*unit, false));
            events.push(key(*unit, true));
        }
        if events.len() >= 512 {
            send(&events)?;
            events.clear();
        }
    }
    send(&events)
}
