//! pywinauto's key syntax, as UFO's `keyboard_input` passes it (`type_keys` with spaces
//! kept): `^s` (Ctrl+S), `+` Shift, `%` Alt, `~` Enter, `{ENTER}`, `{TAB 3}` (three
//! times), `{VK_F5}`, `{+}` for a literal plus, `+(abc)` (Shift held over a group),
//! `{CTRL down}` / `{CTRL up}`. Parsed once into key presses that every platform's
//! backend can send.

use std::fmt;

/// A key that is not a character.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Named {
    Enter,
    Tab,
    Escape,
    Backspace,
    Delete,
    Insert,
    Home,
    End,
    PageUp,
    PageDown,
    Up,
    Down,
    Left,
    Right,
    Space,
    CapsLock,
    PrintScreen,
    Menu,
    /// F1 to F24.
    F(u8),
}

/// A modifier key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Modifier {
    Shift,
    Ctrl,
    Alt,
    Win,
}

/// One key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Key {
    /// A character, typed as itself.
    Char(char),
    /// A named key.
    Named(Named),
    /// A modifier on its own (`{CTRL down}`).
    Modifier(Modifier),
}

/// What to do with a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum KeyAction {
    /// Press and release `key` while `held` are down.
    Tap {
        /// The key.
        key: Key,
        /// Modifiers held for it, in order.
        held: Vec<Modifier>,
    },
    /// Press and keep down.
    Down(Key),
    /// Release.
    Up(Key),
}

impl KeyAction {
    /// How long to let the app take this key in before the next, as a typist would: a
    /// character is quick; a key that moves or acts (Enter, arrows, Home) and above all
    /// a chord (Ctrl+Home) get time, since an app busy with the last key may read the
    /// modifiers' state late (LibreOffice Calc under load read Ctrl+Home, Down as
    /// Ctrl+Down, moving the cell cursor elsewhere).
    pub(crate) fn pause(&self) -> std::time::Duration {
        use std::time::Duration;
        match self {
            Self::Tap {
                key: Key::Char(_),
                held,
            } if held.is_empty() => Duration::from_millis(5),
            Self::Tap { held, .. } if !held.is_empty() => Duration::from_millis(60),
            Self::Tap { .. } | Self::Down(_) | Self::Up(_) => Duration::from_millis(30),
        }
    }
}

/// Why a key string cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KeyError {
    /// The offending text.
    pub(crate) at: String,
    /// What is wrong.
    pub(crate) why: &'static str,
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot read the keys at `{}`: {} (pywinauto syntax: ^ Ctrl, + Shift, % Alt, {{ENTER}}, {{TAB 2}}, {{+}} for a literal +)",
            self.at, self.why
        )
    }
}

impl std::error::Error for KeyError {}

/// The most times one `{KEY N}` repeats.
const MAX_REPEAT: u32 = 1000;

/// Parses a pywinauto key string into key actions.
pub(crate) fn parse(keys: &str) -> Result<Vec<KeyAction>, KeyError> {
    let chars: Vec<char> = keys.chars().collect();
    let mut out = Vec::new();
    let mut held: Vec<Modifier> = Vec::new();
    // Modifiers held over a `( ... )` group, one entry per open group.
    let mut groups: Vec<Vec<Modifier>> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let modifier = match c {
            '^' => Some(Modifier::Ctrl),
            '+' => Some(Modifier::Shift),
            '%' => Some(Modifier::Alt),
            _ => None,
        };
        if let Some(m) = modifier {
            if !held.contains(&m) {
                held.push(m);
            }
            i += 1;
            continue;
        }
        match c {
            '(' => {
                groups.push(std::mem::take(&mut held));
                i += 1;
            }
            ')' => {
                if groups.pop().is_none() {
                    return Err(error_at(&chars, i, "`)` without its `(`"));
                }
                i += 1;
            }
            '{' => {
                i = braced_at(&chars, i, &all_held(&groups, &held), &mut out)?;
                held.clear();
            }
            _ => {
                let key = match c {
                    '~' => Key::Named(Named::Enter),
                    '\n' => Key::Named(Named::Enter),
                    '\t' => Key::Named(Named::Tab),
                    c => Key::Char(c),
                };
                out.push(KeyAction::Tap {
                    key,
                    held: all_held(&groups, &held),
                });
                held.clear();
                i += 1;
            }
        }
    }
    if !groups.is_empty() {
        return Err(KeyError {
            at: ending(keys),
            why: "`(` without its `)`",
        });
    }
    if !held.is_empty() {
        return Err(KeyError {
            at: ending(keys),
            why: "a modifier with no key after it",
        });
    }
    Ok(out)
}

/// The error `why` at `chars[at..]`.
fn error_at(chars: &[char], at: usize, why: &'static str) -> KeyError {
    KeyError {
        at: chars[at..].iter().take(20).collect(),
        why,
    }
}

/// The last characters of `keys`, for an error at its end.
fn ending(keys: &str) -> String {
    keys.chars()
        .rev()
        .take(20)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect()
}

/// Reads the `{...}` at `chars[i]` into `out`, each tap with `held` down; the index
/// after it.
fn braced_at(
    chars: &[char],
    i: usize,
    held: &[Modifier],
    out: &mut Vec<KeyAction>,
) -> Result<usize, KeyError> {
    // `{}}`, `{{}` and the like: the brace itself is the key's name.
    let close = chars[i + 1..]
        .iter()
        .skip(1)
        .position(|&c| c == '}')
        .map(|p| i + 2 + p)
        .ok_or_else(|| error_at(chars, i, "`{` without its `}`"))?;
    let inner: String = chars[i + 1..close].iter().collect();
    match braced(&inner).map_err(|why| error_at(chars, i, why))? {
        Braced::Tap(key, n) => {
            for _ in 0..n {
                out.push(KeyAction::Tap {
                    key,
                    held: held.to_vec(),
                });
            }
        }
        Braced::Down(key) => out.push(KeyAction::Down(key)),
        Braced::Up(key) => out.push(KeyAction::Up(key)),
    }
    Ok(close + 1)
}

/// The modifiers held by the open groups and just before the key, each once.
fn all_held(groups: &[Vec<Modifier>], held: &[Modifier]) -> Vec<Modifier> {
    let mut all: Vec<Modifier> = Vec::new();
    for m in groups.iter().flatten().chain(held) {
        if !all.contains(m) {
            all.push(*m);
        }
    }
    all
}

/// What a `{...}` says.
enum Braced {
    Tap(Key, u32),
    Down(Key),
    Up(Key),
}

fn braced(inner: &str) -> Result<Braced, &'static str> {
    if inner.chars().count() == 1 {
        return Ok(Braced::Tap(
            Key::Char(inner.chars().next().unwrap_or(' ')),
            1,
        ));
    }
    let mut words = inner.split_whitespace();
    let name = words.next().ok_or("an empty `{}`")?;
    let key = key_named(name).ok_or("no key has this name")?;
    match words.next() {
        None => Ok(Braced::Tap(key, 1)),
        Some(w) if w.eq_ignore_ascii_case("down") => Ok(Braced::Down(key)),
        Some(w) if w.eq_ignore_ascii_case("up") => Ok(Braced::Up(key)),
        Some(w) => match w.parse::<u32>() {
            Ok(n) if n <= MAX_REPEAT => Ok(Braced::Tap(key, n)),
            Ok(_) => Err("a key repeated more than 1000 times"),
            Err(_) => Err("after a key's name comes a count, `down` or `up`"),
        },
    }
}

/// A key by its pywinauto name (`ENTER`, `VK_RETURN`, `F5`, `CTRL`, ...), any case.
fn key_named(name: &str) -> Option<Key> {
    let upper = name.to_ascii_uppercase();
    let name = upper.strip_prefix("VK_").unwrap_or(&upper);
    let named = match name {
        "ENTER" | "RETURN" => Named::Enter,
        "TAB" => Named::Tab,
        "ESC" | "ESCAPE" => Named::Escape,
        "BACKSPACE" | "BS" | "BKSP" | "BACK" => Named::Backspace,
        "DELETE" | "DEL" => Named::Delete,
        "INSERT" | "INS" => Named::Insert,
        "HOME" => Named::Home,
        "END" => Named::End,
        "PGUP" | "PRIOR" | "PAGEUP" => Named::PageUp,
        "PGDN" | "NEXT" | "PAGEDOWN" => Named::PageDown,
        "UP" => Named::Up,
        "DOWN" => Named::Down,
        "LEFT" => Named::Left,
        "RIGHT" => Named::Right,
        "SPACE" => Named::Space,
        "CAPSLOCK" | "CAPITAL" => Named::CapsLock,
        "PRTSC" | "SNAPSHOT" | "PRINT" => Named::PrintScreen,
        "APPS" => Named::Menu,
        "SHIFT" | "LSHIFT" | "RSHIFT" => return Some(Key::Modifier(Modifier::Shift)),
        "CTRL" | "CONTROL" | "LCONTROL" | "RCONTROL" => {
            return Some(Key::Modifier(Modifier::Ctrl));
        }
        "ALT" | "MENU" | "LMENU" | "RMENU" => return Some(Key::Modifier(Modifier::Alt)),
        "LWIN" | "RWIN" | "WIN" => return Some(Key::Modifier(Modifier::Win)),
        f if f.starts_with('F') => {
            let n: u8 = f[1..].parse().ok()?;
            if !(1..=24).contains(&n) {
                return None;
            }
            Named::F(n)
        }
        _ => return None,
    };
    Some(Key::Named(named))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tap(key: Key, held: &[Modifier]) -> KeyAction {
        KeyAction::Tap {
            key,
            held: held.to_vec(),
        }
    }

    #[test]
    fn text_and_spaces_are_typed_as_they_are() {
        assert_eq!(
            parse("Hi you").unwrap(),
            "Hi you"
                .chars()
                .map(|c| tap(Key::Char(c), &[]))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn modifiers_apply_to_the_next_key_or_group() {
        assert_eq!(
            parse("^s").unwrap(),
            vec![tap(Key::Char('s'), &[Modifier::Ctrl])]
        );
        assert_eq!(
            parse("^+{F5}a").unwrap(),
            vec![
                tap(Key::Named(Named::F(5)), &[Modifier::Ctrl, Modifier::Shift]),
                tap(Key::Char('a'), &[])
            ]
        );
        assert_eq!(
            parse("+(ab)c").unwrap(),
            vec![
                tap(Key::Char('a'), &[Modifier::Shift]),
                tap(Key::Char('b'), &[Modifier::Shift]),
                tap(Key::Char('c'), &[])
            ]
        );
    }

    #[test]
    fn braces_name_keys_repeat_them_and_escape_specials() {
        assert_eq!(
            parse("Hello{TAB}{enter}~").unwrap()[5..],
            [
                tap(Key::Named(Named::Tab), &[]),
                tap(Key::Named(Named::Enter), &[]),
                tap(Key::Named(Named::Enter), &[])
            ]
        );
        assert_eq!(parse("{DOWN 3}").unwrap().len(), 3);
        assert_eq!(
            parse("{+}{%}{^}{{}{}}{(}").unwrap(),
            ['+', '%', '^', '{', '}', '(']
                .map(|c| tap(Key::Char(c), &[]))
                .to_vec()
        );
        assert_eq!(
            parse("{VK_RETURN}{CTRL down}a{CTRL up}").unwrap(),
            vec![
                tap(Key::Named(Named::Enter), &[]),
                KeyAction::Down(Key::Modifier(Modifier::Ctrl)),
                tap(Key::Char('a'), &[]),
                KeyAction::Up(Key::Modifier(Modifier::Ctrl)),
            ]
        );
    }

    #[test]
    fn mistakes_say_where_and_what() {
        for (keys, why) in [
            ("{ENTER", "`{` without its `}`"),
            ("{NOPE}", "no key has this name"),
            (
                "{TAB x}",
                "after a key's name comes a count, `down` or `up`",
            ),
            ("{TAB 99999}", "a key repeated more than 1000 times"),
            ("a)", "`)` without its `(`"),
            ("+(ab", "`(` without its `)`"),
            ("abc^", "a modifier with no key after it"),
            ("{}", "`{` without its `}`"),
        ] {
            let e = parse(keys).unwrap_err();
            assert_eq!(e.why, why, "{keys}");
            assert!(e.to_string().contains("pywinauto syntax"));
        }
    }
}
