//! The X keysyms of the keys and modifiers a task types (X's keysym conventions:
//! Latin-1 characters as themselves, others as `0x0100_0000 | code point`).

use x11rb::protocol::xproto::Keysym;

use crate::desktop::keys::{Key, Modifier, Named};

/// The X keysym of a modifier (its left key).
pub(super) fn modifier_keysym(m: Modifier) -> Keysym {
    match m {
        Modifier::Shift => 0xffe1,
        Modifier::Ctrl => 0xffe3,
        Modifier::Alt => 0xffe9,
        Modifier::Win => 0xffeb,
    }
}

/// The X keysym of a key.
pub(super) fn key_keysym(key: Key) -> Keysym {
    match key {
        Key::Char('\n') => 0xff0d,
        Key::Char('\t') => 0xff09,
        Key::Char(c) => {
            let code = u32::from(c);
            if (0x20..=0x7e).contains(&code) || (0xa0..=0xff).contains(&code) {
                code
            } else {
                0x0100_0000 | code
            }
        }
        Key::Modifier(m) => modifier_keysym(m),
        Key::Named(named) => match named {
            Named::Enter => 0xff0d,
            Named::Tab => 0xff09,
            Named::Escape => 0xff1b,
            Named::Backspace => 0xff08,
            Named::Delete => 0xffff,
            Named::Insert => 0xff63,
            Named::Home => 0xff50,
            Named::End => 0xff57,
            Named::PageUp => 0xff55,
            Named::PageDown => 0xff56,
            Named::Left => 0xff51,
            Named::Up => 0xff52,
            Named::Right => 0xff53,
            Named::Down => 0xff54,
            Named::Space => 0x20,
            Named::CapsLock => 0xffe5,
            Named::PrintScreen => 0xff61,
            Named::Menu => 0xff67,
            Named::F(n) => 0xffbe + u32::from(n.saturating_sub(1)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keysyms_follow_x_conventions() {
        assert_eq!(key_keysym(Key::Char('a')), 0x61);
        assert_eq!(key_keysym(Key::Char('é')), 0xe9);
        assert_eq!(key_keysym(Key::Char('€')), 0x0100_20ac);
        assert_eq!(key_keysym(Key::Named(Named::F(5))), 0xffc2);
        assert_eq!(key_keysym(Key::Named(Named::Enter)), 0xff0d);
    }
}
