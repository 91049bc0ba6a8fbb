//! The X display of a task's desktop, from the runner's side: input through XTEST
//! (the keyboard and the mouse as a person would use them) and screenshots through
//! GetImage. The connection goes to the display's socket by its path on this machine
//! (the desktop's `/tmp` is the task's temporary folder), so nothing depends on the
//! runner's own `DISPLAY`.

use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use x11rb::connection::Connection;
use x11rb::errors::{ConnectError, ConnectionError, ReplyError};
use x11rb::protocol::xproto::{
    ClientMessageEvent, ConnectionExt as _, EventMask, ImageFormat, Keycode, Keysym,
};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::{DefaultStream, RustConnection};

use crate::desktop::action::Button;
use crate::desktop::error::DesktopError;
use crate::desktop::keys::{KeyAction, Modifier};
use crate::desktop::screenshot::Image;
use crate::tool::{Blame, Blamed};

mod keysyms;

use keysyms::{key_keysym, modifier_keysym};

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
        Button::Back => 8,
        Button::Forward => 9,
    }
}

/// The wheel's buttons: up, down, left, right.
const WHEEL: [u8; 4] = [4, 5, 6, 7];

/// A connection to one desktop's display.
#[derive(Clone)]
pub(crate) struct Display {
    conn: Arc<RustConnection>,
    root: u32,
    width: u16,
    height: u16,
    /// The spare keycodes given a character to type, oldest first: when none is left,
    /// the oldest is given the next character (a text of any length and alphabet types).
    lent: Arc<std::sync::Mutex<std::collections::VecDeque<Keycode>>>,
}

/// Why the display did not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub(super) enum X11Error {
    /// Its socket does not take a connection.
    #[error("cannot connect to the display at {}: {source}", socket.display())]
    Connect {
        /// The socket.
        socket: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The connection could not be set up.
    #[error("the display failed: {0}")]
    Stream(#[source] std::io::Error),
    /// The display refused the connection.
    #[error("the display failed: {0}")]
    Setup(#[from] ConnectError),
    /// A request could not be sent.
    #[error("the display failed: {0}")]
    Request(#[from] ConnectionError),
    /// A request failed.
    #[error("the display failed: {0}")]
    Reply(#[from] ReplyError),
    /// The display cannot fake input.
    #[error("the display has no XTEST: {0}")]
    NoXtest(#[source] ReplyError),
    /// The thread of a request panicked.
    #[error("the display request panicked: {0}")]
    Panicked(#[source] tokio::task::JoinError),
    /// The display did not answer in time (an app grabbing the server).
    #[error("the display did not answer within {0}s")]
    NotAnswering(u64),
    /// Every spare keycode already types another character the task typed.
    #[error("the display has no spare key to type this character on")]
    NoSpareKey,
    /// The screen cannot be read.
    #[error("cannot take a screenshot: {0}")]
    Screenshot(#[source] ReplyError),
    /// A screen in a format this does not read.
    #[error("the display's pixel format is not 24-bit colour (depth {0})")]
    PixelFormat(u8),
}

/// The display is the machine's: its failures are the environment's. A character no
/// key is left to type is the agent's (it can set the text instead).
impl Blamed for X11Error {
    fn blame(&self) -> Blame {
        match self {
            Self::NoSpareKey => Blame::Agent,
            _ => Blame::Environment,
        }
    }
}

impl From<X11Error> for DesktopError {
    fn from(e: X11Error) -> Self {
        DesktopError::classified(e)
    }
}

impl Display {
    /// Connects to the display whose socket is at `socket`.
    pub(crate) fn connect(socket: &Path) -> Result<Self, X11Error> {
        let stream = UnixStream::connect(socket).map_err(|source| X11Error::Connect {
            socket: socket.to_path_buf(),
            source,
        })?;
        let (stream, _) = DefaultStream::from_unix_stream(stream).map_err(X11Error::Stream)?;
        let conn = RustConnection::connect_to_stream(stream, 0)?;
        let screen = &conn.setup().roots[0];
        let (root, width, height) = (screen.root, screen.width_in_pixels, screen.height_in_pixels);
        conn.xtest_get_version(2, 2)?
            .reply()
            .map_err(X11Error::NoXtest)?;
        Ok(Self {
            conn: Arc::new(conn),
            root,
            width,
            height,
            lent: Arc::default(),
        })
    }

    /// Runs blocking X requests off the async threads.
    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Self) -> Result<T, X11Error> + Send + 'static,
    ) -> Result<T, X11Error> {
        // A display that stops answering (an app grabbing the server) must not hold the
        // task: the request is given up (its thread ends when the desktop does).
        const LIMIT: std::time::Duration = std::time::Duration::from_secs(30);
        let this = self.clone();
        let work = tokio::task::spawn_blocking(move || work(&this));
        match tokio::time::timeout(LIMIT, work).await {
            Ok(done) => done.map_err(X11Error::Panicked)?,
            Err(_) => Err(X11Error::NotAnswering(LIMIT.as_secs())),
        }
    }

    fn fake(&self, kind: u8, detail: u8, x: i16, y: i16) -> Result<(), X11Error> {
        self.conn
            .xtest_fake_input(kind, detail, 0, self.root, x, y, 0)?;
        Ok(())
    }

    /// Waits until the display has handled every request sent so far.
    fn sync(&self) -> Result<(), X11Error> {
        self.conn.get_input_focus()?.reply()?;
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
    pub(crate) async fn move_to(&self, x: i32, y: i32) -> Result<(), X11Error> {
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
    ) -> Result<(), X11Error> {
        self.click_times(x, y, button, if double { 2 } else { 1 })
            .await
    }

    /// Clicks `button` at `(x, y)` `count` times in a row (a double or triple click).
    pub(crate) async fn click_times(
        &self,
        x: i32,
        y: i32,
        button: Button,
        count: u8,
    ) -> Result<(), X11Error> {
        self.blocking(move |d| {
            let (x, y) = d.clamp(x, y);
            d.fake(MOTION, 0, x, y)?;
            for _ in 0..count.max(1) {
                d.fake(BUTTON_PRESS, button_number(button), x, y)?;
                d.fake(BUTTON_RELEASE, button_number(button), x, y)?;
            }
            d.sync()
        })
        .await
    }

    /// Presses (or releases) `button` where the pointer is.
    pub(crate) async fn button(&self, button: Button, down: bool) -> Result<(), X11Error> {
        self.blocking(move |d| {
            let kind = if down { BUTTON_PRESS } else { BUTTON_RELEASE };
            d.fake(kind, button_number(button), 0, 0)?;
            d.sync()
        })
        .await
    }

    /// Turns the wheel where the pointer is: `dx` notches right (left when negative),
    /// `dy` down (up when negative).
    pub(crate) async fn scroll(&self, dx: i32, dy: i32) -> Result<(), X11Error> {
        self.blocking(move |d| {
            for (notches, less, more) in [(dy, WHEEL[0], WHEEL[1]), (dx, WHEEL[2], WHEEL[3])] {
                let button = if notches < 0 { less } else { more };
                for _ in 0..notches.unsigned_abs().min(100) {
                    d.fake(BUTTON_PRESS, button, 0, 0)?;
                    d.fake(BUTTON_RELEASE, button, 0, 0)?;
                    d.sync()?;
                }
            }
            Ok(())
        })
        .await
    }

    /// Drags with `button` along `path`: pressed at its first point, moved through
    /// every point (in steps of a few pixels, as a hand moves), released at its last.
    pub(crate) async fn drag_path(
        &self,
        path: Vec<(i32, i32)>,
        button: Button,
    ) -> Result<(), X11Error> {
        const STEP: f64 = 8.0;
        // The moves of the whole path, at most (a long path moves in longer steps).
        const MOVES: f64 = 400.0;
        let Some(&first) = path.first() else {
            return Ok(());
        };
        let length: f64 = path
            .windows(2)
            .map(|w| {
                let (dx, dy) = (f64::from(w[1].0 - w[0].0), f64::from(w[1].1 - w[0].1));
                dx.abs().max(dy.abs())
            })
            .sum();
        let step_px = STEP.max(length / MOVES);
        let (fx, fy) = self.clamp(first.0, first.1);
        self.blocking(move |d| {
            d.fake(MOTION, 0, fx, fy)?;
            d.fake(BUTTON_PRESS, button_number(button), fx, fy)?;
            d.sync()
        })
        .await?;
        let mut moved = Ok(());
        let mut last = first;
        'path: for &point in &path[1..] {
            let (dx, dy) = (f64::from(point.0 - last.0), f64::from(point.1 - last.1));
            let steps = ((dx.abs().max(dy.abs()) / step_px).ceil() as i32).clamp(1, 200);
            for i in 1..=steps {
                let t = f64::from(i) / f64::from(steps);
                let x = last.0 + (dx * t).round() as i32;
                let y = last.1 + (dy * t).round() as i32;
                moved = self.move_to(x, y).await;
                if moved.is_err() {
                    break 'path;
                }
                tokio::time::sleep(Duration::from_millis(4)).await;
            }
            last = point;
        }
        // Released whatever happened on the way: a button left down would hold the
        // rest of the task.
        let end = path.last().copied().unwrap_or(first);
        let (tx, ty) = self.clamp(end.0, end.1);
        let released = self
            .blocking(move |d| {
                d.fake(BUTTON_RELEASE, button_number(button), tx, ty)?;
                d.sync()
            })
            .await;
        moved.and(released)
    }

    /// Where the pointer is.
    pub(crate) async fn pointer(&self) -> Result<(i32, i32), X11Error> {
        self.blocking(|d| {
            let reply = d.conn.query_pointer(d.root)?.reply()?;
            Ok((i32::from(reply.root_x), i32::from(reply.root_y)))
        })
        .await
    }

    /// Turns the wheel over `(x, y)`: `notches` up when positive, down when negative.
    pub(crate) async fn wheel(&self, x: i32, y: i32, notches: i32) -> Result<(), X11Error> {
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
    ) -> Result<(), X11Error> {
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
    async fn keycode_of(&self, keysym: Keysym) -> Result<(Keycode, bool), X11Error> {
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

    /// Asks every window on the screen to close, as a window manager's close button
    /// does (WM_DELETE_WINDOW), so that the app ends its own way (finishing a save).
    pub(crate) async fn close_windows(&self) -> Result<(), X11Error> {
        self.blocking(|d| {
            let atom = |name: &[u8]| -> Result<u32, X11Error> {
                Ok(d.conn.intern_atom(false, name)?.reply()?.atom)
            };
            let (protocols, delete) = (atom(b"WM_PROTOCOLS")?, atom(b"WM_DELETE_WINDOW")?);
            let tree = d.conn.query_tree(d.root)?.reply()?;
            for window in tree.children {
                let event = ClientMessageEvent::new(32, window, protocols, [delete, 0, 0, 0, 0]);
                d.conn
                    .send_event(false, window, EventMask::NO_EVENT, event)?;
            }
            d.sync()
        })
        .await
    }

    /// The whole screen.
    pub(crate) async fn screenshot(&self) -> Result<Image, X11Error> {
        self.blocking(|d| {
            let reply = d
                .conn
                .get_image(ImageFormat::Z_PIXMAP, d.root, 0, 0, d.width, d.height, !0)?
                .reply()
                .map_err(X11Error::Screenshot)?;
            let (w, h) = (u32::from(d.width), u32::from(d.height));
            if reply.depth != 24 || reply.data.len() < (w * h * 4) as usize {
                return Err(X11Error::PixelFormat(reply.depth));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_display_that_is_not_there_is_the_machines() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("X0");
        let Err(e) = Display::connect(&socket) else {
            panic!("connected to nothing");
        };
        let words = format!("cannot connect to the display at {}: ", socket.display());
        assert!(e.to_string().starts_with(&words), "{e}");
        let failure = DesktopError::from(e).failure();
        assert_eq!(failure.blame, Blame::Environment);
        assert!(failure.message.starts_with(&words), "{}", failure.message);
        // The io error's words are said once.
        assert_eq!(
            failure.message.matches(": ").count(),
            1,
            "{}",
            failure.message
        );
    }

    #[test]
    fn display_failures_are_the_machines_and_a_missing_key_the_agents() {
        let slow = DesktopError::from(X11Error::NotAnswering(30));
        assert!(matches!(slow, DesktopError::Desktop { .. }));
        assert_eq!(
            slow.failure().message,
            "the display did not answer within 30s"
        );
        assert_eq!(X11Error::PixelFormat(16).blame(), Blame::Environment);
        let key = DesktopError::from(X11Error::NoSpareKey);
        assert!(matches!(key, DesktopError::Refused { .. }));
        assert_eq!(key.failure().blame, Blame::Agent);
    }
}
