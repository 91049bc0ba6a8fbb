//! The computer-use tools: what an operator agent does on the desktop, as a person at
//! it would, in desktop pixels (UFO's operator commands, `controller.py`: `click`,
//! `double_click`, `drag`, `keypress`, `move`, `scroll`, `type`, `wait`; and what
//! today's models also send: `triple_click`, `mouse_down`, `mouse_up`, `hold_key`,
//! `screenshot`, `zoom`, `cursor_position`). Each is a tool call like any other, so a
//! recorded operator run replays with no model.
//!
//! A pointer action names its desktop pixel (`x`, `y`) and, when recorded, the element
//! it hit (`element`, with the place on it) and the window it acted in (`window`): a
//! replay acts on the element where it is now, else at the same place relative to the
//! window. What the model's own coordinates were is kept beside them (`model`), for the
//! record only. How a model's point becomes a desktop pixel is `space`'s; key names,
//! `keys`'.

use std::time::Duration;

pub(crate) mod keys;
mod parse;
pub(crate) mod space;
mod specs;

pub(crate) use specs::computer_tools;

use super::action::Button;
use super::control::Rect;
use super::element::Element;
use super::keys::KeyAction;
use crate::tool::{Blame, Blamed};

/// The longest text one `type` types.
pub(crate) const MAX_TYPED: usize = 10_000;
/// The most points a drag's path has.
const MAX_PATH: usize = 1000;
/// The most wheel notches of one scroll, and repeats of one key press.
const MAX_REPEAT: i64 = 100;
/// The longest a key is held.
const MAX_HOLD: f64 = 60.0;

/// An element a recording hit, and the place on it (fractions of its width and height).
pub(crate) type Recorded = (Element, (f64, f64));

/// Where a pointer action acts.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Aim {
    /// The desktop pixel.
    pub(crate) at: (i32, i32),
    /// The element a recording hit there, and the place on it (fractions).
    pub(crate) element: Option<Recorded>,
    /// The window the recording acted in, where it was.
    pub(crate) window: Option<Rect>,
}

/// A computer-use action, its arguments read.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ComputerAction {
    /// `click`, `double_click`, `triple_click`: a button pressed `count` times.
    Click {
        /// Where (the pointer's place when `None`).
        aim: Option<Aim>,
        /// Which button.
        button: Button,
        /// 1, 2 or 3.
        count: u8,
        /// Keys held meanwhile.
        held: Vec<KeyAction>,
    },
    /// `move`: the pointer to a point.
    Move {
        /// Where.
        aim: Aim,
        /// Keys held meanwhile.
        held: Vec<KeyAction>,
    },
    /// `drag`: a button held along a path.
    Drag {
        /// The points, in order (at least two).
        path: Vec<(i32, i32)>,
        /// The element a recording's drag started on, and the place on it.
        element: Option<Recorded>,
        /// The window the recording acted in, where it was.
        window: Option<Rect>,
        /// Which button.
        button: Button,
        /// Keys held meanwhile.
        held: Vec<KeyAction>,
    },
    /// `scroll`: wheel notches across and down (positive: right and down).
    Scroll {
        /// Where (the pointer's place when `None`).
        aim: Option<Aim>,
        /// Notches across.
        dx: i32,
        /// Notches down.
        dy: i32,
        /// Keys held meanwhile.
        held: Vec<KeyAction>,
    },
    /// `mouse_down` / `mouse_up`.
    Button {
        /// Where (the pointer's place when `None`).
        aim: Option<Aim>,
        /// Which button.
        button: Button,
        /// Pressed (else released).
        down: bool,
    },
    /// `keypress`: one chord, `repeat` times.
    Keypress {
        /// The chord as key actions.
        chord: Vec<KeyAction>,
        /// How often.
        repeat: u32,
    },
    /// `hold_key`: a chord held down for a while.
    HoldKey {
        /// The chord as key actions.
        chord: Vec<KeyAction>,
        /// For how long.
        duration: Duration,
    },
    /// `type`: text typed as written.
    Type(String),
    /// `screenshot`: the screen now.
    Screenshot,
    /// `zoom`: a part of the screen, close up.
    Zoom(Rect),
    /// `cursor_position`: where the pointer is.
    CursorPosition,
}

/// Why a computer-use call's arguments cannot be read: the agent's.
#[derive(Debug, PartialEq, thiserror::Error)]
pub(crate) enum ComputerArgError {
    /// A coordinate not given or not a number.
    #[error("`{tool}` needs `{key}`: a whole number of desktop pixels")]
    Coordinate {
        /// The tool.
        tool: String,
        /// The argument.
        key: &'static str,
    },
    /// A button no mouse has.
    #[error("unknown mouse button `{0}` (use left, right, middle, wheel, back or forward)")]
    Button(String),
    /// A key name the table does not know.
    #[error(transparent)]
    Key(#[from] keys::UnknownKey),
    /// Keys not given as a list of names.
    #[error("`{0}` must be a list of key names, such as [\"ctrl\", \"s\"]")]
    NotKeys(&'static str),
    /// A chord with no key.
    #[error("`keypress` needs at least one key in `keys`")]
    NoKeys,
    /// A path of fewer than two points, or not of points.
    #[error("`drag` needs a `path` of 2 to {MAX_PATH} points, each {{\"x\": .., \"y\": ..}}")]
    Path,
    /// A count out of range.
    #[error("`{0}` must be a whole number from {1} to {MAX_REPEAT}")]
    Count(&'static str, i64),
    /// A duration out of range.
    #[error("`{0}` must be a number of seconds from 0 to {MAX_HOLD}")]
    Seconds(&'static str),
    /// Text over the bound.
    #[error("`type` takes at most {MAX_TYPED} characters at once ({0} given): type it in parts")]
    LongText(usize),
    /// A recorded element that cannot be read.
    #[error("`element` is not a recorded element: {0}")]
    Element(String),
    /// A rectangle that is not one.
    #[error("`{0}` must be {{\"x\", \"y\", \"width\", \"height\"}} in desktop pixels, with a size")]
    Rect(&'static str),
    /// Not a computer-use tool.
    #[error("`{0}` is not a computer-use tool")]
    NotComputerTool(String),
}

impl Blamed for ComputerArgError {
    fn blame(&self) -> Blame {
        Blame::Agent
    }
}

/// Whether `tool` is one of the computer-use tools.
pub(crate) fn is_computer_tool(tool: &str) -> bool {
    crate::tool::desktop_names::COMPUTER_TOOLS.contains(&tool)
}

#[cfg(test)]
mod tests;
