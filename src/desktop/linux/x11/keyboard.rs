//! The keyboard through XTEST: the keycode of each keysym (a spare key lent one no key
//! has), and keys typed with their held modifiers.

use std::time::Duration;

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{ConnectionExt as _, Keycode, Keysym};

use super::keysyms::{key_keysym, modifier_keysym};
use super::{Display, KEY_PRESS, KEY_RELEASE, X11Error};
use crate::desktop::keys::{KeyAction, Modifier};

impl Display {
    /// The keycode that types `keysym`, and whether Shift is needed; a spare keycode
    /// is given the keysym when no key has it.
    pub(super) async fn keycode_of(&self, keysym: Keysym) -> Result<(Keycode, bool), X11Error> {
        self.blocking(move |d| d.keycode_blocking(keysym)).await
    }

    fn keycode_blocking(&self, keysym: Keysym) -> Result<(Keycode, bool), X11Error> {
        let setup = self.conn.setup();
        let (min, max) = (setup.min_keycode, setup.max_keycode);
        let map = self
            .conn
            .get_keyboard_mapping(min, max - min + 1)?
            .reply()?;
        let per = usize::from(map.keysyms_per_keycode);
        let mut spare = None;
        for (i, syms) in map.keysyms.chunks(per).enumerate() {
            let code = min + i as u8;
            if syms.first() == Some(&keysym) {
                return Ok((code, false));
            }
            if syms.get(1) == Some(&keysym) {
                return Ok((code, true));
            }
            if syms.iter().all(|&s| s == 0) {
                spare = Some(code);
            }
        }
        let lent = &mut *self.lent.lock().unwrap_or_else(|p| p.into_inner());
        let code = match spare {
            Some(code) => code,
            None => {
                // Every spare key types a character given earlier: the oldest is given
                // this one, once the display has handled the keys typed with it.
                let code = lent.pop_front().ok_or(X11Error::NoSpareKey)?;
                self.sync()?;
                std::thread::sleep(Duration::from_millis(30));
                code
            }
        };
        lent.push_back(code);
        let syms = vec![keysym; per];
        self.conn
            .change_keyboard_mapping(1, code, map.keysyms_per_keycode, &syms)?;
        self.sync()?;
        // Clients learn of the new mapping asynchronously.
        std::thread::sleep(Duration::from_millis(30));
        Ok((code, false))
    }

    /// Types keys: each tap presses its held modifiers, the key, and releases them.
    pub(crate) async fn keys(&self, actions: Vec<KeyAction>) -> Result<(), X11Error> {
        self.blocking(move |d| {
            for action in &actions {
                match action {
                    KeyAction::Tap { key, held } => {
                        let (code, shift) = d.keycode_blocking(key_keysym(*key))?;
                        let mut mods: Vec<Keycode> = Vec::new();
                        for m in held {
                            mods.push(d.keycode_blocking(modifier_keysym(*m))?.0);
                        }
                        if shift && !held.contains(&Modifier::Shift) {
                            mods.push(d.keycode_blocking(modifier_keysym(Modifier::Shift))?.0);
                        }
                        for &m in &mods {
                            d.fake(KEY_PRESS, m, 0, 0)?;
                        }
                        d.fake(KEY_PRESS, code, 0, 0)?;
                        d.fake(KEY_RELEASE, code, 0, 0)?;
                        for &m in mods.iter().rev() {
                            d.fake(KEY_RELEASE, m, 0, 0)?;
                        }
                    }
                    KeyAction::Down(key) => {
                        let (code, _) = d.keycode_blocking(key_keysym(*key))?;
                        d.fake(KEY_PRESS, code, 0, 0)?;
                    }
                    KeyAction::Up(key) => {
                        let (code, _) = d.keycode_blocking(key_keysym(*key))?;
                        d.fake(KEY_RELEASE, code, 0, 0)?;
                    }
                }
                d.sync()?;
                std::thread::sleep(action.pause());
            }
            Ok(())
        })
        .await
    }
}
