//! The X display of a task's desktop, from the runner's side: input through XTEST
//! (the keyboard and the mouse as a person would use them) and screenshots through
//! GetImage. The connection goes to the display's socket by its path on this machine
//! (the desktop's `/tmp` is the task's temporary folder), so nothing depends on the
//! runner's own `DISPLAY`.

use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::Arc;

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    ClientMessageEvent, ConnectionExt as _, EventMask, ImageFormat, Keycode,
};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::{DefaultStream, RustConnection};

use crate::desktop::action::Button;
use crate::desktop::screenshot::Image;

mod error;
mod keyboard;
mod keysyms;
mod pointer;

pub(super) use error::X11Error;

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
    use crate::desktop::error::DesktopError;
    use crate::tool::{Blame, Blamed};

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
