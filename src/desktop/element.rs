//! The accessible element under a point: what a computer-use action at a pixel acted
//! on, as the accessibility tree names it (AT-SPI's hit test inside the target window
//! on Linux, UI Automation's `ElementFromPoint` on Windows). It is recorded beside every
//! operator action, so that a replay can find the element again and act at the same
//! place relative to it, wherever its window went, rather than at the recorded pixel.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::control::Rect;

/// One level of the way from a window down to an element.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PathStep {
    /// Its role (`push button`, AT-SPI's names; UIA's control types on Windows).
    pub(crate) role: String,
    /// Its accessible name (often empty).
    #[serde(default)]
    pub(crate) name: String,
    /// Its place among its parent's children.
    pub(crate) index: u32,
}

/// An element of the accessibility tree, where it is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Element {
    /// Its name.
    #[serde(default)]
    pub(crate) name: String,
    /// Its role.
    pub(crate) role: String,
    /// The window it is in: its title.
    #[serde(default)]
    pub(crate) window: String,
    /// The way to it from its window, the window's own level first.
    #[serde(default)]
    pub(crate) path: Vec<PathStep>,
    /// Where it is on the screen.
    pub(crate) rect: Rect,
}

/// How a live name is written for comparison with a recorded one (the workspace's
/// path as a placeholder: `executor::desktop`'s names).
pub(crate) type Neutral = dyn for<'a> Fn(&'a str) -> String + Send + Sync;

/// The most levels a path has (a deeper tree is cut there: the hit test stops).
pub(crate) const MAX_DEPTH: usize = 40;

impl Element {
    /// The point at `at` (fractions of its width and height) of the element.
    pub(crate) fn point(&self, at: (f64, f64)) -> (i32, i32) {
        let frac = |f: f64| {
            if f.is_finite() {
                f.clamp(0.0, 1.0)
            } else {
                0.5
            }
        };
        let x = f64::from(self.rect.x) + frac(at.0) * f64::from((self.rect.width - 1).max(0));
        let y = f64::from(self.rect.y) + frac(at.1) * f64::from((self.rect.height - 1).max(0));
        (x.round() as i32, y.round() as i32)
    }

    /// Where `point` is within the element, as fractions of its width and height.
    pub(crate) fn fraction(&self, point: (i32, i32)) -> (f64, f64) {
        let f = |p: i32, start: i32, len: i32| {
            if len <= 1 {
                0.5
            } else {
                ((f64::from(p - start)) / f64::from(len - 1)).clamp(0.0, 1.0)
            }
        };
        let round = |v: f64| (v * 1000.0).round() / 1000.0;
        (
            round(f(point.0, self.rect.x, self.rect.width)),
            round(f(point.1, self.rect.y, self.rect.height)),
        )
    }
}

impl fmt::Display for Element {
    /// `push button "Save" in "notes.txt - Mousepad"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.role)?;
        if !self.name.trim().is_empty() {
            write!(f, " {:?}", crate::text::shorten(self.name.trim(), 80))?;
        }
        if !self.window.trim().is_empty() {
            write!(f, " in {:?}", crate::text::shorten(self.window.trim(), 80))?;
        }
        Ok(())
    }
}

/// The path as one line: `frame "notes.txt - Mousepad" › scroll pane › text`.
pub(crate) fn path_text(path: &[PathStep]) -> String {
    path.iter()
        .map(|s| {
            if s.name.trim().is_empty() {
                s.role.clone()
            } else {
                format!("{} {:?}", s.role, crate::text::shorten(s.name.trim(), 60))
            }
        })
        .collect::<Vec<_>>()
        .join(" › ")
}

/// Of `candidates` (the children of one node, as role, name), the one `step` names:
/// the same role and name at the recorded index, else the only one with that role and
/// name, else (a name that changed, such as a document's title) the same role at the
/// recorded index.
pub(crate) fn pick_child(step: &PathStep, candidates: &[(String, String)]) -> Option<usize> {
    let same = |i: usize| {
        let (role, name) = &candidates[i];
        role == &step.role && name.trim() == step.name.trim()
    };
    let at = step.index as usize;
    if at < candidates.len() && same(at) {
        return Some(at);
    }
    let named: Vec<usize> = (0..candidates.len()).filter(|&i| same(i)).collect();
    match named.as_slice() {
        [one] => return Some(*one),
        [] => {}
        many => {
            // Several alike: the one nearest the recorded place.
            return many.iter().copied().min_by_key(|&i| i.abs_diff(at));
        }
    }
    (at < candidates.len() && candidates[at].0 == step.role).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn element(rect: Rect) -> Element {
        Element {
            name: "Save".into(),
            role: "push button".into(),
            window: "notes.txt - Mousepad".into(),
            path: vec![],
            rect,
        }
    }

    #[test]
    fn a_point_is_kept_relative_to_its_element() {
        let before = element(Rect {
            x: 100,
            y: 100,
            width: 201,
            height: 51,
        });
        let at = before.fraction((150, 125));
        assert_eq!(at, (0.25, 0.5));
        // Moved and made larger: the same place on it.
        let after = element(Rect {
            x: 300,
            y: 50,
            width: 401,
            height: 101,
        });
        assert_eq!(after.point(at), (400, 100));
        assert_eq!(
            before.to_string(),
            "push button \"Save\" in \"notes.txt - Mousepad\""
        );
    }

    #[test]
    fn a_recorded_step_finds_its_child() {
        let kids = |list: &[(&str, &str)]| -> Vec<(String, String)> {
            list.iter()
                .map(|(r, n)| (r.to_string(), n.to_string()))
                .collect()
        };
        let step = PathStep {
            role: "push button".into(),
            name: "Save".into(),
            index: 1,
        };
        let now = kids(&[("push button", "Open"), ("push button", "Save")]);
        assert_eq!(pick_child(&step, &now), Some(1));
        // Another button was added before it: found by its name.
        let moved = kids(&[
            ("push button", "New"),
            ("push button", "Open"),
            ("push button", "Save"),
        ]);
        assert_eq!(pick_child(&step, &moved), Some(2));
        // Renamed (a title), same role at the same place.
        let renamed = kids(&[("push button", "Open"), ("push button", "Save As")]);
        assert_eq!(pick_child(&step, &renamed), Some(1));
        let gone = kids(&[("label", "x")]);
        assert_eq!(pick_child(&step, &gone), None);
    }
}
