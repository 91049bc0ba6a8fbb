//! The mouse through XTEST: moves, clicks, buttons held and let go, the wheel, drags
//! along a path as a hand moves.

use std::time::Duration;

use x11rb::protocol::xproto::ConnectionExt as _;

use super::keysyms::modifier_keysym;
use super::{
    BUTTON_PRESS, BUTTON_RELEASE, Display, KEY_PRESS, KEY_RELEASE, MOTION, WHEEL, X11Error,
    button_number,
};
use crate::desktop::action::Button;
use crate::desktop::keys::Modifier;

impl Display {
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
}
