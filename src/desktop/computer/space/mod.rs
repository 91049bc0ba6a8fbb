//! Coordinates, done once: the image a computer-use model is shown of the desktop (the
//! whole screen, or the target window), fitted as its provider prescribes, and the
//! mapping of every point the model names in it back to a desktop pixel.
//!
//! A model names points in its own space: pixels of the image it saw (OpenAI, Anthropic,
//! UI-TARS-1.5, Qwen2.5-VL) or a 0–1000 grid over it (UI-TARS 1 and 2, Qwen3-VL). The
//! image it saw is the screen's region, fitted: at full resolution (OpenAI, `detail:
//! original`); within Anthropic's bound (long edge ≤ 1568 px, ≤ 1568 tiles of 28 px:
//! larger images are resized again by the server and clicks drift); Qwen2-VL's
//! `smart_resize` (sides multiples of 28, pixels within bounds); or UFO's letterbox
//! `SCALER` (`ufo/automator/ui_control/screenshot.py` `rescale_image`: scaled by
//! `min(sw/rw, sh/rh)`, pasted at (0, 0) on a black canvas; `controller.py`
//! `transform_scaled_point_to_raw` divides by the same ratio). A point outside the
//! picture (beyond the image, or on a letterbox's black band) is refused, never clamped
//! onto something else.

use serde::{Deserialize, Serialize};

use crate::desktop::control::Rect;
use crate::desktop::screenshot::Image;

mod fit;

use fit::fitted;

/// How the picture is fitted before it is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "fit", rename_all = "snake_case")]
pub(crate) enum Fit {
    /// As it is.
    Original,
    /// Its longer side at most this many pixels (for grid-coordinate models, whose
    /// points do not depend on the size).
    MaxSide {
        /// The bound.
        max_side: u32,
    },
    /// Anthropic's bound: long edge ≤ 1568 px and ≤ 1568 tiles of 28×28 px.
    Anthropic,
    /// Qwen2-VL's `smart_resize`: each side the nearest multiple of `factor`, the pixels
    /// then brought within `[min_pixels, max_pixels]`.
    SmartResize {
        /// The patch size the sides are multiples of.
        factor: u32,
        /// The fewest pixels.
        min_pixels: u64,
        /// The most pixels.
        max_pixels: u64,
    },
    /// UFO's `SCALER`: scaled to fit within `width` x `height`, pasted at the top left
    /// of a black canvas of that size.
    Letterbox {
        /// The canvas's width.
        width: u32,
        /// The canvas's height.
        height: u32,
    },
}

/// How a model names a point of the image it saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Units {
    /// Pixels of the image.
    Pixels,
    /// `0..=n` across each side of the image (0–1000: UI-TARS, Qwen3-VL).
    Grid(u32),
}

/// A point a model named that the picture does not show.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("({x}, {y}) is outside the screenshot ({what}): point inside it")]
pub(crate) struct OffPicture {
    /// Across, as the model gave it.
    pub(crate) x: f64,
    /// Down.
    pub(crate) y: f64,
    /// The picture's space, in words.
    pub(crate) what: String,
}

/// The space of one picture: what part of the desktop it shows, the image the model
/// saw, and how the model names its points.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Space {
    /// The part of the desktop the picture shows, in desktop pixels (the screen, or the
    /// target window's part of it).
    pub(crate) region: Rect,
    /// The image the model saw: width and height.
    pub(crate) image: (u32, u32),
    /// Where the region is drawn in it (the whole image, but for a letterbox).
    pub(crate) content: (u32, u32),
    /// Desktop pixels per image pixel, across and down.
    pub(crate) scale: (f64, f64),
    /// How the model names points.
    pub(crate) units: Units,
}

impl Space {
    /// The picture of `region` (desktop pixels, clipped to the screen) in `screen`
    /// (the whole screen), fitted as `fit`, and its space.
    pub(crate) fn picture(screen: &Image, region: Rect, fit: Fit, units: Units) -> (Image, Space) {
        let region = clip(region, screen);
        let raw = if region
            == (Rect {
                x: 0,
                y: 0,
                width: screen.width as i32,
                height: screen.height as i32,
            }) {
            screen.clone()
        } else {
            screen.cropped(region)
        };
        let (rw, rh) = (raw.width.max(1), raw.height.max(1));
        let (image, content, scale) = match fit {
            Fit::Letterbox { width, height } => {
                let ratio =
                    (f64::from(width) / f64::from(rw)).min(f64::from(height) / f64::from(rh));
                // UFO truncates the scaled size (`int(raw_width * scale_ratio)`).
                let (cw, ch) = (
                    ((f64::from(rw) * ratio) as u32).max(1),
                    ((f64::from(rh) * ratio) as u32).max(1),
                );
                let image = raw.resized(cw, ch).on_canvas(width, height);
                (image, (cw, ch), (1.0 / ratio, 1.0 / ratio))
            }
            other => {
                let (w, h) = fitted(other, rw, rh);
                let image = if (w, h) == (rw, rh) {
                    raw
                } else {
                    raw.resized(w, h)
                };
                let scale = (f64::from(rw) / f64::from(w), f64::from(rh) / f64::from(h));
                (image, (w, h), scale)
            }
        };
        let space = Space {
            region,
            image: (image.width, image.height),
            content,
            scale,
            units,
        };
        (image, space)
    }

    /// The desktop pixel of the model's point `(x, y)`.
    pub(crate) fn to_desktop(&self, x: f64, y: f64) -> Result<(i32, i32), OffPicture> {
        let off = || OffPicture {
            x,
            y,
            what: self.describe(),
        };
        if !x.is_finite() || !y.is_finite() {
            return Err(off());
        }
        // The point in the picture, continuous: a pixel's centre for pixel units.
        let (px, py) = match self.units {
            Units::Pixels => (x + 0.5, y + 0.5),
            Units::Grid(n) => {
                let n = f64::from(n.max(1));
                if !(0.0..=n).contains(&x) || !(0.0..=n).contains(&y) {
                    return Err(off());
                }
                (
                    x / n * f64::from(self.content.0),
                    y / n * f64::from(self.content.1),
                )
            }
        };
        let (cw, ch) = (f64::from(self.content.0), f64::from(self.content.1));
        if !(0.0..=cw).contains(&px) || !(0.0..=ch).contains(&py) {
            return Err(off());
        }
        let last = |start: i32, len: i32| start + (len - 1).max(0);
        let dx = (f64::from(self.region.x) + (px * self.scale.0).floor()) as i32;
        let dy = (f64::from(self.region.y) + (py * self.scale.1).floor()) as i32;
        Ok((
            dx.clamp(self.region.x, last(self.region.x, self.region.width)),
            dy.clamp(self.region.y, last(self.region.y, self.region.height)),
        ))
    }

    /// The model's point for the desktop pixel `at` (where the pointer is, told back).
    pub(crate) fn to_model(&self, at: (i32, i32)) -> (i64, i64) {
        let px = f64::from(at.0 - self.region.x) / self.scale.0;
        let py = f64::from(at.1 - self.region.y) / self.scale.1;
        let (x, y) = match self.units {
            Units::Pixels => (px, py),
            Units::Grid(n) => (
                px / f64::from(self.content.0.max(1)) * f64::from(n),
                py / f64::from(self.content.1.max(1)) * f64::from(n),
            ),
        };
        (x.floor() as i64, y.floor() as i64)
    }

    /// The desktop rectangle of the model's region from corner `(x0, y0)` to corner
    /// `(x1, y1)`: corners are edges, not pixels (the picture's far edge is in it).
    pub(crate) fn rect_to_desktop(
        &self,
        (x0, y0): (f64, f64),
        (x1, y1): (f64, f64),
    ) -> Result<Rect, OffPicture> {
        let a = self.edge_to_desktop(x0.min(x1), y0.min(y1))?;
        let b = self.edge_to_desktop(x0.max(x1), y0.max(y1))?;
        Ok(Rect {
            x: a.0,
            y: a.1,
            width: (b.0 - a.0).max(1),
            height: (b.1 - a.1).max(1),
        })
    }

    /// The desktop place of the edge point `(x, y)` of the picture (from its top left
    /// corner to its bottom right one, both in).
    fn edge_to_desktop(&self, x: f64, y: f64) -> Result<(i32, i32), OffPicture> {
        let off = || OffPicture {
            x,
            y,
            what: self.describe(),
        };
        let (cw, ch) = (f64::from(self.content.0), f64::from(self.content.1));
        let (px, py) = match self.units {
            Units::Pixels => (x, y),
            Units::Grid(n) => {
                let n = f64::from(n.max(1));
                (x / n * cw, y / n * ch)
            }
        };
        if !px.is_finite()
            || !py.is_finite()
            || !(0.0..=cw).contains(&px)
            || !(0.0..=ch).contains(&py)
        {
            return Err(off());
        }
        Ok((
            (f64::from(self.region.x) + (px * self.scale.0).round()) as i32,
            (f64::from(self.region.y) + (py * self.scale.1).round()) as i32,
        ))
    }

    /// The space in words, for the model and the record: `pixels of the 1280x800
    /// screenshot of the screen at (0, 0)`.
    pub(crate) fn describe(&self) -> String {
        let units = match self.units {
            Units::Pixels => "pixels".to_string(),
            Units::Grid(n) => format!("0-{n} grid"),
        };
        let mut text = format!(
            "{units} of the {}x{} screenshot of the desktop's {}x{} at ({}, {})",
            self.image.0,
            self.image.1,
            self.region.width,
            self.region.height,
            self.region.x,
            self.region.y
        );
        if self.content != self.image {
            text.push_str(&format!(
                ", drawn in its top left {}x{}",
                self.content.0, self.content.1
            ));
        }
        text
    }
}

/// `region` clipped to `screen` (a window partly off the screen shows its visible part).
fn clip(region: Rect, screen: &Image) -> Rect {
    let (sw, sh) = (screen.width as i32, screen.height as i32);
    let x0 = region.x.clamp(0, sw);
    let y0 = region.y.clamp(0, sh);
    let x1 = region.right().clamp(0, sw);
    let y1 = region.bottom().clamp(0, sh);
    if x1 <= x0 || y1 <= y0 {
        return Rect {
            x: 0,
            y: 0,
            width: sw,
            height: sh,
        };
    }
    Rect {
        x: x0,
        y: y0,
        width: x1 - x0,
        height: y1 - y0,
    }
}

#[cfg(test)]
pub(crate) mod golden;
#[cfg(test)]
mod tests;
