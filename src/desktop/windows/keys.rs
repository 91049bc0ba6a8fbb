//! The keyboard and the mouse on Windows: our key actions typed with the
//! `uiautomation` crate's keyboard (its own `{ctrl}(s)` syntax, written from the parsed
//! keys so that no text is read twice), the mouse with its mouse, and the wheel with
//! SendInput.

use std::time::Duration;

use uiautomation::inputs::{Keyboard, Mouse, MouseButton};
use uiautomation::types::Point;

use crate::desktop::action::Button;
use crate::desktop::error::DesktopError;
use crate::desktop::keys::{Key, KeyAction, Modifier, Named};
use crate::tool::{Blame, Blamed};

/// Why the keyboard or the mouse did not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub(super) enum InputError {
    /// Input was sent and refused: `what` was being done.
    #[error("{what} failed: {source}")]
    Failed {
        /// What was being done (`typing`, `clicking`).
        what: &'static str,
        /// Why.
        #[source]
        source: uiautomation::Error,
    },
    /// SendInput took none of the wheel's input.
    #[error("the wheel input was blocked")]
    WheelBlocked,
    /// SendInput took only part of the input (another desktop in front, a process of
    /// higher integrity).
    #[error("the input was blocked")]
    Blocked,
}

/// Input the system refuses to send (another desktop in front, a process of higher
/// integrity) is the machine's.
impl Blamed for InputError {
    fn blame(&self) -> Blame {
        Blame::Environment
    }
}

impl From<InputError> for DesktopError {
    fn from(e: InputError) -> Self {
        DesktopError::classified(e)
    }
}

/// `what` failed.
fn failed(what: &'static str) -> impl Fn(uiautomation::Error) -> InputError {
    move |source| InputError::Failed { what, source }
}

fn modifier_name(m: Modifier) -> &'static str {
    match m {
        Modifier::Shift => "SHIFT",
        Modifier::Ctrl => "CTRL",
        Modifier::Alt => "ALT",
        Modifier::Win => "WIN",
    }
}

/// A key in the keyboard's syntax: a name in braces, or a character (braces and
/// parentheses quoted).
fn key_text(key: Key) -> String {
    let named = |n: Named| match n {
        Named::Enter => "ENTER".to_string(),
        Named::Tab => "TAB".to_string(),
        Named::Escape => "ESC".to_string(),
        Named::Backspace => "BACK".to_string(),
        Named::Delete => "DEL".to_string(),
        Named::Insert => "INSERT".to_string(),
        Named::Home => "HOME".to_string(),
        Named::End => "END".to_string(),
        Named::PageUp => "PGUP".to_string(),
        Named::PageDown => "PGDN".to_string(),
        Named::Up => "UP".to_string(),
        Named::Down => "DOWN".to_string(),
        Named::Left => "LEFT".to_string(),
        Named::Right => "RIGHT".to_string(),
        Named::Space => "SPACE".to_string(),
        Named::CapsLock => "CAPSLOCK".to_string(),
        Named::PrintScreen => "PRINTSCREEN".to_string(),
        Named::Menu => "APPS".to_string(),
        Named::F(n) => format!("F{n}"),
    };
    match key {
        Key::Named(n) => format!("{{{}}}", named(n)),
        Key::Modifier(m) => format!("{{{}}}", modifier_name(m)),
        Key::Char(c @ ('{' | '}' | '(' | ')')) => format!("{{{c}}}"),
        Key::Char('\n') => "{ENTER}".to_string(),
        Key::Char('\t') => "{TAB}".to_string(),
        Key::Char(c) => c.to_string(),
    }
}

/// Types the keys into whatever has the focus.
pub(super) fn send(actions: &[KeyAction]) -> Result<(), InputError> {
    let mut keyboard = Keyboard::new().interval(10);
    for action in actions {
        match action {
            KeyAction::Tap { key, held } if held.is_empty() => {
                keyboard
                    .send_keys(&key_text(*key))
                    .map_err(failed("typing"))?;
            }
            KeyAction::Tap { key, held } => {
                let mods: String = held
                    .iter()
                    .map(|m| format!("{{{}}}", modifier_name(*m)))
                    .collect();
                let text = format!("{mods}({})", key_text(*key));
                keyboard.send_keys(&text).map_err(failed("typing"))?;
            }
            KeyAction::Down(key) => keyboard
                .begin_hold_keys(&key_text(*key))
                .map_err(failed("holding a key"))?,
            KeyAction::Up(_) => keyboard.end_hold_keys().map_err(failed("releasing keys"))?,
        }
        std::thread::sleep(action.pause());
    }
    Ok(())
}

fn mouse_button(button: Button) -> MouseButton {
    match button {
        // The crate's mouse has no side buttons: those go by `pointer`'s SendInput.
        Button::Left | Button::Back | Button::Forward => MouseButton::LEFT,
        Button::Middle => MouseButton::MIDDLE,
        Button::Right => MouseButton::RIGHT,
    }
}

/// Clicks at a point of the screen.
pub(super) fn click_at(at: (i32, i32), button: Button, double: bool) -> Result<(), InputError> {
    let mouse = Mouse::new();
    mouse
        .move_to(&Point::new(at.0, at.1))
        .map_err(failed("moving the mouse"))?;
    let done = if double {
        mouse.double_click_button(mouse_button(button))
    } else {
        mouse.click_button(mouse_button(button))
    };
    done.map_err(failed("clicking"))
}

/// Drags from one point to another, holding a modifier meanwhile.
pub(super) fn drag(
    from: (i32, i32),
    to: (i32, i32),
    button: Button,
    duration: Duration,
    held: Option<Modifier>,
) -> Result<(), InputError> {
    let mut mouse = Mouse::new().move_time(duration.as_millis().min(60_000) as u64);
    if let Some(m) = held {
        mouse = mouse.holdkeys(&format!("{{{}}}", modifier_name(m)));
    }
    mouse
        .move_to(&Point::new(from.0, from.1))
        .map_err(failed("moving the mouse"))?;
    mouse
        .drag_to(mouse_button(button), &Point::new(to.0, to.1))
        .map_err(failed("dragging"))
}

/// Turns the wheel over a point: `notches` up when positive.
pub(super) fn wheel(at: (i32, i32), notches: i32) -> Result<(), InputError> {
    use windows::Win32::UI::Input::KeyboardAndMouse::{
        INPUT, INPUT_0, INPUT_MOUSE, MOUSEEVENTF_WHEEL, MOUSEINPUT, SendInput,
    };
    Mouse::new()
        .move_to(&Point::new(at.0, at.1))
        .map_err(failed("moving the mouse"))?;
    const WHEEL_DELTA: i32 = 120;
    let input = INPUT {
        r#type: INPUT_MOUSE,
        Anonymous: INPUT_0 {
            mi: MOUSEINPUT {
                dx: 0,
                dy: 0,
                mouseData: notches.clamp(-100, 100).wrapping_mul(WHEEL_DELTA) as u32,
                dwFlags: MOUSEEVENTF_WHEEL,
                time: 0,
                dwExtraInfo: 0,
            },
        },
    };
    // SAFETY: one well-formed INPUT, its size as the API asks.
    let sent = unsafe { SendInput(&[input], std::mem::size_of::<INPUT>() as i32) };
    if sent == 1 {
        Ok(())
    } else {
        Err(InputError::WheelBlocked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_written_in_the_keyboards_syntax() {
        assert_eq!(key_text(Key::Char('(')), "{(}");
        assert_eq!(key_text(Key::Named(Named::F(5))), "{F5}");
        assert_eq!(key_text(Key::Char('a')), "a");
    }
}
