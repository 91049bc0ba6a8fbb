//! The X display of a task's desktop, from the runner's side: input through XTEST
//! (the keyboard and the mouse as a person would use them) and screenshots through
//! GetImage. The connection goes to the display's socket by its path on this machine
//! (the desktop's `/tmp` is the task's temporary folder), so nothing depends on the
//! runner's own `DISPLAY`.

use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    ClientMessageEvent, ConnectionExt as _, EventMask, ImageFormat, Keycode, Keysym,
};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::{DefaultStream, RustConnection};

use crate::desktop::keys::{Key, KeyAction, Modifier, Named};
use crate::desktop::screenshot::Image;
pub(crate) use crate::desktop::tools::Button;

const KEY_PRESS: u8 = 2;
const KEY_RELEASE: u8 = 3;
const BUTTON_PRESS: u8 = 4;
const BUTTON_RELEASE: u8 = 5;
const MOTION: u8 = 6;

fn button_number(button: Button) -> u8 {
    match button {
        Button::Left => 1,
        Button::Middle => 2,
        Button::Right => 3,
    }
}

/// A connection to one desktop's display.
#[derive(Clone)]
pub(crate) struct Display {
    conn: Arc<RustConnection>,
    root: u32,
    width: u16,
    height: u16,
}

fn x_error(e: impl std::fmt::Display) -> String {
    format!("the display failed: {e}")
}

impl Display {
    /// Connects to the display whose socket is at `socket`.
    pub(crate) fn connect(socket: &Path) -> Result<Self, String> {
        let stream = UnixStream::connect(socket)
            .map_err(|e| format!("cannot connect to the display at {}: {e}", socket.display()))?;
        let (stream, _) = DefaultStream::from_unix_stream(stream).map_err(x_error)?;
        let conn = RustConnection::connect_to_stream(stream, 0).map_err(x_error)?;
        let screen = &conn.setup().roots[0];
        let (root, width, height) = (screen.root, screen.width_in_pixels, screen.height_in_pixels);
        conn.xtest_get_version(2, 2)
            .map_err(x_error)?
            .reply()
            .map_err(|e| format!("the display has no XTEST: {e}"))?;
        Ok(Self {
            conn: Arc::new(conn),
            root,
            width,
            height,
        })
    }

    /// Runs blocking X requests off the async threads.
    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Self) -> Result<T, String> + Send + 'static,
    ) -> Result<T, String> {
        // A display that stops answering (an app grabbing the server) must not hold the
        // task: the request is given up (its thread ends when the desktop does).
        const LIMIT: std::time::Duration = std::time::Duration::from_secs(30);
        let this = self.clone();
        let work = tokio::task::spawn_blocking(move || work(&this));
        match tokio::time::timeout(LIMIT, work).await {
            Ok(done) => done.map_err(|e| format!("the display request panicked: {e}"))?,
            Err(_) => Err(format!(
                "the display did not answer within {}s",
                LIMIT.as_secs()
            )),
        }
    }

    fn fake(&self, kind: u8, detail: u8, x: i16, y: i16) -> Result<(), String> {
        self.conn
            .xtest_fake_input(kind, detail, 0, self.root, x, y, 0)
            .map_err(x_error)?;
        Ok(())
    }

    /// Waits until the display has handled every request sent so far.
    fn sync(&self) -> Result<(), String> {
        self.conn
            .get_input_focus()
            .map_err(x_error)?
            .reply()
            .map_err(x_error)?;
        Ok(())
    }

    fn clamp(&self, x: i32, y: i32) -> (i16, i16) {
        (
            x.clamp(0, i32::from(self.width) - 1) as i16,
            y.clamp(0, i32::from(self.height) - 1) as i16,
        )
    }

    /// Whether `(x, y)` is on the screen (where the pointer can be).
    pub(crate) fn shows(&self, x: i32, y: i32) -> bool {
        (0..i32::from(self.width)).contains(&x) && (0..i32::from(self.height)).contains(&y)
    }

    /// Moves the pointer to `(x, y)`.
    pub(crate) async fn move_to(&self, x: i32, y: i32) -> Result<(), String> {
        self.blocking(move |d| {
            let (x, y) = d.clamp(x, y);
            d.fake(MOTION, 0, x, y)?;
            d.sync()
        })
        .await
    }

    /// Clicks `button` at `(x, y)`, twice for a double click.
    pub(crate) async fn click(
        &self,
        x: i32,
        y: i32,
        button: Button,
        double: bool,
    ) -> Result<(), String> {
        self.blocking(move |d| {
            let (x, y) = d.clamp(x, y);
            d.fake(MOTION, 0, x, y)?;
            for _ in 0..if double { 2 } else { 1 } {
                d.fake(BUTTON_PRESS, button_number(button), x, y)?;
                d.fake(BUTTON_RELEASE, button_number(button), x, y)?;
            }
            d.sync()
        })
        .await
    }

    /// Turns the wheel over `(x, y)`: `notches` up when positive, down when negative.
    pub(crate) async fn wheel(&self, x: i32, y: i32, notches: i32) -> Result<(), String> {
        self.blocking(move |d| {
            let (x, y) = d.clamp(x, y);
            d.fake(MOTION, 0, x, y)?;
            let button = if notches >= 0 { 4 } else { 5 };
            for _ in 0..notches.unsigned_abs().min(100) {
                d.fake(BUTTON_PRESS, button, x, y)?;
                d.fake(BUTTON_RELEASE, button, x, y)?;
            }
            d.sync()
        })
        .await
    }

    /// Drags with `button` from one point to another over `duration`, holding `held`.
    pub(crate) async fn drag(
        &self,
        from: (i32, i32),
        to: (i32, i32),
        button: Button,
        duration: Duration,
        held: Option<Modifier>,
    ) -> Result<(), String> {
        const MOVES: i32 = 10;
        let held_code = match held {
            Some(m) => Some(self.keycode_of(modifier_keysym(m)).await?.0),
            None => None,
        };
        let (fx, fy) = self.clamp(from.0, from.1);
        self.blocking(move |d| {
            d.fake(MOTION, 0, fx, fy)?;
            if let Some(code) = held_code {
                d.fake(KEY_PRESS, code, 0, 0)?;
            }
            d.fake(BUTTON_PRESS, button_number(button), fx, fy)?;
            d.sync()
        })
        .await?;
        let mut moved = Ok(());
        for i in 1..=MOVES {
            tokio::time::sleep(duration / MOVES as u32).await;
            let step = |a: i32, b: i32| {
                (i64::from(a) + (i64::from(b) - i64::from(a)) * i64::from(i) / i64::from(MOVES))
                    as i32
            };
            let (x, y) = (step(from.0, to.0), step(from.1, to.1));
            moved = self.move_to(x, y).await;
            if moved.is_err() {
                break;
            }
        }
        // Released whatever happened on the way: a button or key left down would hold
        // the rest of the task.
        let (tx, ty) = self.clamp(to.0, to.1);
        let released = self
            .blocking(move |d| {
                d.fake(BUTTON_RELEASE, button_number(button), tx, ty)?;
                if let Some(code) = held_code {
                    d.fake(KEY_RELEASE, code, 0, 0)?;
                }
                d.sync()
            })
            .await;
        moved.and(released)
    }

    /// The keycode that types `keysym`, and whether Shift is needed; a spare keycode
    /// is given the keysym when no key has it.
    async fn keycode_of(&self, keysym: Keysym) -> Result<(Keycode, bool), String> {
        self.blocking(move |d| d.keycode_blocking(keysym)).await
    }

    fn keycode_blocking(&self, keysym: Keysym) -> Result<(Keycode, bool), String> {
        let setup = self.conn.setup();
        let (min, max) = (setup.min_keycode, setup.max_keycode);
        let map = self
            .conn
            .get_keyboard_mapping(min, max - min + 1)
            .map_err(x_error)?
            .reply()
            .map_err(x_error)?;
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
        let code = spare.ok_or("the display has no spare key to type this character on")?;
        let syms = vec![keysym; per];
        self.conn
            .change_keyboard_mapping(1, code, map.keysyms_per_keycode, &syms)
            .map_err(x_error)?;
        self.sync()?;
        // Clients learn of the new mapping asynchronously.
        std::thread::sleep(Duration::from_millis(30));
        Ok((code, false))
    }

    /// Types keys: each tap presses its held modifiers, the key, and releases them.
    pub(crate) async fn keys(&self, actions: Vec<KeyAction>) -> Result<(), String> {
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

    /// Asks every window on the screen to close, as a window manager's close button
    /// does (WM_DELETE_WINDOW), so that the app ends its own way (finishing a save).
    pub(crate) async fn close_windows(&self) -> Result<(), String> {
        self.blocking(|d| {
            let atom = |name: &[u8]| -> Result<u32, String> {
                Ok(d.conn
                    .intern_atom(false, name)
                    .map_err(x_error)?
                    .reply()
                    .map_err(x_error)?
                    .atom)
            };
            let (protocols, delete) = (atom(b"WM_PROTOCOLS")?, atom(b"WM_DELETE_WINDOW")?);
            let tree = d
                .conn
                .query_tree(d.root)
                .map_err(x_error)?
                .reply()
                .map_err(x_error)?;
            for window in tree.children {
                let event = ClientMessageEvent::new(32, window, protocols, [delete, 0, 0, 0, 0]);
                d.conn
                    .send_event(false, window, EventMask::NO_EVENT, event)
                    .map_err(x_error)?;
            }
            d.sync()
        })
        .await
    }

    /// The whole screen.
    pub(crate) async fn screenshot(&self) -> Result<Image, String> {
        self.blocking(|d| {
            let reply = d
                .conn
                .get_image(ImageFormat::Z_PIXMAP, d.root, 0, 0, d.width, d.height, !0)
                .map_err(x_error)?
                .reply()
                .map_err(|e| format!("cannot take a screenshot: {e}"))?;
            let (w, h) = (u32::from(d.width), u32::from(d.height));
            if reply.depth != 24 || reply.data.len() < (w * h * 4) as usize {
                return Err(format!(
                    "the display's pixel format is not 24-bit colour (depth {})",
                    reply.depth
                ));
            }
            let mut rgb = Vec::with_capacity((w * h * 3) as usize);
            for px in reply.data.chunks_exact(4).take((w * h) as usize) {
                rgb.extend_from_slice(&[px[2], px[1], px[0]]);
            }
            Ok(Image {
                width: w,
                height: h,
                rgb,
            })
        })
        .await
    }
}

/// The X keysym of a modifier (its left key).
fn modifier_keysym(m: Modifier) -> Keysym {
    match m {
        Modifier::Shift => 0xffe1,
        Modifier::Ctrl => 0xffe3,
        Modifier::Alt => 0xffe9,
        Modifier::Win => 0xffeb,
    }
}

/// The X keysym of a key.
fn key_keysym(key: Key) -> Keysym {
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
