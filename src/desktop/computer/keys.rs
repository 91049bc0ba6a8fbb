//! Key names as computer-use models write them, read into the keys every platform's
//! backend presses. One table for every provider: OpenAI's `keypress` names (`CTRL`,
//! `ENTER`, `ARROWDOWN`), Anthropic's xdotool keysyms (`ctrl`, `Return`, `Page_Down`,
//! `BackSpace`, `comma`), UI-TARS's and Qwen's hotkeys (`ctrl c`, `pagedown`), in any
//! case. A name the table does not know is the model's mistake, said with examples.

use crate::desktop::keys::{Key, KeyAction, Modifier, Named};

/// A key name no table row has.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "no key is named {0:?} (names such as ctrl, shift, alt, super, enter, tab, escape, backspace, delete, \
     home, end, page_up, page_down, up, down, left, right, space, f1-f24, a single character, or an \
     xdotool keysym such as comma or Page_Down)"
)]
pub(crate) struct UnknownKey(pub(crate) String);

/// The key `name` means.
pub(crate) fn key_named(name: &str) -> Result<Key, UnknownKey> {
    let trimmed = name.trim();
    let mut chars = trimmed.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        // A key, not a character: `A` is the A key (Shift is named when meant).
        return Ok(Key::Char(c.to_ascii_lowercase()));
    }
    if name.chars().count() == 1 {
        // A lone space or other whitespace character.
        return Ok(Key::Named(Named::Space));
    }
    let lower = trimmed.to_ascii_lowercase().replace(['-', ' '], "_");
    let modifier = match lower.as_str() {
        "ctrl" | "control" | "ctl" | "lctrl" | "rctrl" | "control_l" | "control_r" | "ctrl_l"
        | "ctrl_r" | "lcontrol" | "rcontrol" => Some(Modifier::Ctrl),
        "shift" | "lshift" | "rshift" | "shift_l" | "shift_r" => Some(Modifier::Shift),
        "alt" | "lalt" | "ralt" | "alt_l" | "alt_r" | "option" | "opt" | "altgr" => {
            Some(Modifier::Alt)
        }
        "super" | "super_l" | "super_r" | "win" | "windows" | "lwin" | "rwin" | "meta"
        | "meta_l" | "meta_r" | "cmd" | "command" | "hyper" => Some(Modifier::Win),
        _ => None,
    };
    if let Some(m) = modifier {
        return Ok(Key::Modifier(m));
    }
    if let Some(named) = named(&lower) {
        return Ok(Key::Named(named));
    }
    if let Some(c) = symbol(&lower) {
        return Ok(Key::Char(c));
    }
    Err(UnknownKey(name.to_string()))
}

/// The named keys, by every provider's spelling (lowercase, `-` and spaces as `_`).
fn named(lower: &str) -> Option<Named> {
    Some(match lower {
        "enter" | "return" | "kp_enter" | "ret" => Named::Enter,
        "tab" | "iso_left_tab" => Named::Tab,
        "esc" | "escape" => Named::Escape,
        "backspace" | "back_space" | "bksp" | "bs" | "back" => Named::Backspace,
        "delete" | "del" | "kp_delete" | "forward_delete" => Named::Delete,
        "insert" | "ins" | "kp_insert" => Named::Insert,
        "home" | "kp_home" => Named::Home,
        "end" | "kp_end" => Named::End,
        "pageup" | "page_up" | "pgup" | "prior" | "kp_prior" | "kp_page_up" => Named::PageUp,
        "pagedown" | "page_down" | "pgdn" | "next" | "kp_next" | "kp_page_down" => Named::PageDown,
        "up" | "arrowup" | "arrow_up" | "kp_up" => Named::Up,
        "down" | "arrowdown" | "arrow_down" | "kp_down" => Named::Down,
        "left" | "arrowleft" | "arrow_left" | "kp_left" => Named::Left,
        "right" | "arrowright" | "arrow_right" | "kp_right" => Named::Right,
        "space" | "spacebar" | "kp_space" => Named::Space,
        "capslock" | "caps_lock" | "caps" => Named::CapsLock,
        "printscreen" | "print_screen" | "print" | "prtscr" | "prtsc" | "prtscn" | "snapshot" => {
            Named::PrintScreen
        }
        "menu" | "apps" | "contextmenu" | "context_menu" => Named::Menu,
        f if f.starts_with('f') && f.len() <= 3 => {
            let n: u8 = f[1..].parse().ok()?;
            if !(1..=24).contains(&n) {
                return None;
            }
            Named::F(n)
        }
        _ => return None,
    })
}

/// The character keys named by their X keysym (`comma`, `minus`, `KP_Add`).
fn symbol(lower: &str) -> Option<char> {
    Some(match lower {
        "minus" | "kp_subtract" | "hyphen" => '-',
        "plus" | "kp_add" => '+',
        "equal" | "equals" | "kp_equal" => '=',
        "comma" | "kp_separator" => ',',
        "period" | "dot" | "kp_decimal" => '.',
        "slash" | "kp_divide" => '/',
        "backslash" => '\\',
        "semicolon" => ';',
        "colon" => ':',
        "apostrophe" | "quote" | "quoteright" => '\'',
        "quotedbl" => '"',
        "grave" | "quoteleft" | "backtick" => '`',
        "bracketleft" => '[',
        "bracketright" => ']',
        "braceleft" => '{',
        "braceright" => '}',
        "parenleft" => '(',
        "parenright" => ')',
        "less" => '<',
        "greater" => '>',
        "question" => '?',
        "exclam" => '!',
        "at" => '@',
        "numbersign" | "hash" => '#',
        "dollar" => '$',
        "percent" => '%',
        "asciicircum" => '^',
        "ampersand" => '&',
        "asterisk" | "kp_multiply" => '*',
        "underscore" => '_',
        "bar" | "pipe" => '|',
        "asciitilde" | "tilde" => '~',
        d if d.len() == 4 && d.starts_with("kp_") => {
            let c = d.chars().nth(3)?;
            c.is_ascii_digit().then_some(c)?
        }
        _ => return None,
    })
}

/// One chord, as a model names it: keys pressed together in order and released in
/// reverse (`["ctrl", "shift", "t"]`). The modifiers are held for the last key that
/// is not one; a chord of modifiers alone presses and releases them.
pub(crate) fn chord(names: &[String]) -> Result<Vec<KeyAction>, UnknownKey> {
    let keys: Vec<Key> = names
        .iter()
        .map(|n| key_named(n))
        .collect::<Result<_, _>>()?;
    let mut held: Vec<Modifier> = Vec::new();
    let mut plain: Vec<Key> = Vec::new();
    for key in keys {
        match key {
            Key::Modifier(m) if !held.contains(&m) => held.push(m),
            Key::Modifier(_) => {}
            other => plain.push(other),
        }
    }
    let Some(last) = plain.pop() else {
        // Modifiers alone (`["shift"]`): pressed and released.
        let mut out: Vec<KeyAction> = held
            .iter()
            .map(|m| KeyAction::Down(Key::Modifier(*m)))
            .collect();
        out.extend(held.iter().rev().map(|m| KeyAction::Up(Key::Modifier(*m))));
        return Ok(out);
    };
    // Other plain keys are pressed down first, in order (`["a", "b"]` together).
    let mut out: Vec<KeyAction> = plain.iter().map(|k| KeyAction::Down(*k)).collect();
    out.push(KeyAction::Tap { key: last, held });
    out.extend(plain.iter().rev().map(|k| KeyAction::Up(*k)));
    Ok(out)
}

/// A chord written as one text (`ctrl+s`, `ctrl shift t`, `Return`): split on `+`
/// (a lone `+` is the plus key) or, when it has none, on spaces.
pub(crate) fn split_chord(text: &str) -> Vec<String> {
    let text = text.trim();
    if text == "+" {
        return vec!["+".to_string()];
    }
    let parts: Vec<&str> = if text.contains('+') {
        let mut parts: Vec<&str> = text.split('+').collect();
        // `ctrl++`: the plus key after a modifier.
        if text.ends_with("++") {
            parts.retain(|p| !p.is_empty());
            parts.push("+");
        }
        parts
    } else {
        text.split_whitespace().collect()
    };
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn every_providers_spelling_is_read() {
        for (name, key) in [
            ("CTRL", Key::Modifier(Modifier::Ctrl)),
            ("ctrl", Key::Modifier(Modifier::Ctrl)),
            ("Control_L", Key::Modifier(Modifier::Ctrl)),
            ("cmd", Key::Modifier(Modifier::Win)),
            ("Return", Key::Named(Named::Enter)),
            ("ENTER", Key::Named(Named::Enter)),
            ("Page_Down", Key::Named(Named::PageDown)),
            ("pagedown", Key::Named(Named::PageDown)),
            ("PGDN", Key::Named(Named::PageDown)),
            ("ARROWLEFT", Key::Named(Named::Left)),
            ("BackSpace", Key::Named(Named::Backspace)),
            ("PRTSCR", Key::Named(Named::PrintScreen)),
            ("F12", Key::Named(Named::F(12))),
            ("comma", Key::Char(',')),
            (",", Key::Char(',')),
            ("KP_Add", Key::Char('+')),
            ("A", Key::Char('a')),
            ("é", Key::Char('é')),
            (" ", Key::Named(Named::Space)),
        ] {
            assert_eq!(key_named(name), Ok(key), "{name}");
        }
        let e = key_named("hyperspace").unwrap_err();
        assert!(e.to_string().starts_with("no key is named \"hyperspace\""));
        assert!(key_named("F25").is_err());
    }

    #[test]
    fn a_chord_holds_its_modifiers_for_its_key() {
        assert_eq!(
            chord(&names(&["CTRL", "SHIFT", "T"])).unwrap(),
            vec![KeyAction::Tap {
                key: Key::Char('t'),
                held: vec![Modifier::Ctrl, Modifier::Shift]
            }]
        );
        assert_eq!(
            chord(&names(&["shift"])).unwrap(),
            vec![
                KeyAction::Down(Key::Modifier(Modifier::Shift)),
                KeyAction::Up(Key::Modifier(Modifier::Shift))
            ]
        );
        assert_eq!(
            chord(&names(&["a", "b"])).unwrap(),
            vec![
                KeyAction::Down(Key::Char('a')),
                KeyAction::Tap {
                    key: Key::Char('b'),
                    held: vec![]
                },
                KeyAction::Up(Key::Char('a'))
            ]
        );
    }

    #[test]
    fn chord_texts_split_as_models_write_them() {
        assert_eq!(split_chord("ctrl+s"), names(&["ctrl", "s"]));
        assert_eq!(
            split_chord("ctrl+shift+Escape"),
            names(&["ctrl", "shift", "Escape"])
        );
        assert_eq!(split_chord("ctrl c"), names(&["ctrl", "c"]));
        assert_eq!(split_chord("Return"), names(&["Return"]));
        assert_eq!(split_chord("+"), names(&["+"]));
        assert_eq!(split_chord("ctrl++"), names(&["ctrl", "+"]));
    }
}
