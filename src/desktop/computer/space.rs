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

/// The largest side and tile count Anthropic takes without resizing again.
const ANTHROPIC_EDGE: u32 = 1568;
const ANTHROPIC_TILES: u64 = 1568;
const ANTHROPIC_TILE: u32 = 28;

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

/// The size an image of `w` x `h` is fitted to.
fn fitted(fit: Fit, w: u32, h: u32) -> (u32, u32) {
    match fit {
        Fit::Original | Fit::Letterbox { .. } => (w, h),
        Fit::MaxSide { max_side } => {
            let longer = w.max(h);
            if longer <= max_side {
                return (w, h);
            }
            let s = f64::from(max_side) / f64::from(longer);
            scaled(w, h, s)
        }
        Fit::Anthropic => anthropic(w, h),
        Fit::SmartResize {
            factor,
            min_pixels,
            max_pixels,
        } => smart_resize(w, h, factor.max(1), min_pixels, max_pixels),
    }
}

fn scaled(w: u32, h: u32, s: f64) -> (u32, u32) {
    (
        ((f64::from(w) * s).round() as u32).max(1),
        ((f64::from(h) * s).round() as u32).max(1),
    )
}

/// Anthropic's bound: the largest size at the image's aspect with long edge ≤ 1568 and
/// ≤ 1568 tiles of 28×28 px (as their reference harness scales before sending).
fn anthropic(w: u32, h: u32) -> (u32, u32) {
    let tiles = |w: u32, h: u32| {
        u64::from(w.div_ceil(ANTHROPIC_TILE)) * u64::from(h.div_ceil(ANTHROPIC_TILE))
    };
    if w.max(h) <= ANTHROPIC_EDGE && tiles(w, h) <= ANTHROPIC_TILES {
        return (w, h);
    }
    let area = f64::from(w) * f64::from(h);
    let budget = (ANTHROPIC_TILES * u64::from(ANTHROPIC_TILE * ANTHROPIC_TILE)) as f64;
    let mut s = (f64::from(ANTHROPIC_EDGE) / f64::from(w.max(h))).min((budget / area).sqrt());
    let mut size = scaled(w, h, s.min(1.0));
    // Rounding up to whole tiles can still overshoot: shrink until it fits.
    while tiles(size.0, size.1) > ANTHROPIC_TILES || size.0.max(size.1) > ANTHROPIC_EDGE {
        s *= 0.995;
        size = scaled(w, h, s);
    }
    size
}

/// Python's `round`: halves go to the even neighbour (Qwen's code runs in Python).
fn round_half_even(x: f64) -> f64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
        r - x.signum()
    } else {
        r
    }
}

/// Qwen2-VL's `smart_resize` (`qwen_vl_utils`, also UI-TARS-1.5's): height and width
/// the nearest multiples of `factor`, then scaled (keeping that) into the pixel bounds.
fn smart_resize(w: u32, h: u32, factor: u32, min_pixels: u64, max_pixels: u64) -> (u32, u32) {
    let f = f64::from(factor);
    let (wf, hf) = (f64::from(w), f64::from(h));
    let mut h_bar = (round_half_even(hf / f) * f).max(f);
    let mut w_bar = (round_half_even(wf / f) * f).max(f);
    if h_bar * w_bar > max_pixels as f64 {
        let beta = (hf * wf / max_pixels as f64).sqrt();
        h_bar = ((hf / beta / f).floor() * f).max(f);
        w_bar = ((wf / beta / f).floor() * f).max(f);
    } else if h_bar * w_bar < min_pixels as f64 {
        let beta = (min_pixels as f64 / (hf * wf)).sqrt();
        h_bar = (hf * beta / f).ceil() * f;
        w_bar = (wf * beta / f).ceil() * f;
    }
    (w_bar as u32, h_bar as u32)
}

/// What the golden tests of coordinates share: a screen with a target, and where a
/// perfect model sees it.
#[cfg(test)]
pub(crate) mod golden {
    use crate::desktop::screenshot::Image;

    /// A screen of `w` x `h` with a red square of `side` px centred at `at`.
    pub(crate) fn target_screen(w: u32, h: u32, at: (i32, i32), side: i32) -> Image {
        let mut image = Image::new(w, h);
        for y in (at.1 - side / 2)..(at.1 + side / 2) {
            for x in (at.0 - side / 2)..(at.0 + side / 2) {
                let i = ((y as u32 * w + x as u32) * 3) as usize;
                image.rgb[i..i + 3].copy_from_slice(&[255, 0, 0]);
            }
        }
        image
    }

    /// The centre of the reddest pixels of `image`: where a perfect model points.
    pub(crate) fn red_centre(image: &Image) -> (f64, f64) {
        let (mut sx, mut sy, mut n) = (0.0, 0.0, 0.0);
        for y in 0..image.height {
            for x in 0..image.width {
                let i = ((y * image.width + x) * 3) as usize;
                if image.rgb[i] > 128 && image.rgb[i + 1] < 100 {
                    sx += f64::from(x);
                    sy += f64::from(y);
                    n += 1.0;
                }
            }
        }
        assert!(n > 0.0, "no target in the picture");
        (sx / n, sy / n)
    }
}

#[cfg(test)]
mod tests {
    use super::golden::{red_centre, target_screen};
    use super::*;

    const SCREEN: Rect = Rect {
        x: 0,
        y: 0,
        width: 1280,
        height: 800,
    };

    /// Golden: the target at `at` on a screen of `size`, shown as `fit` in `units`, the
    /// point a perfect model names, and the desktop pixel it must hit (within the
    /// target's square of `side`).
    fn golden(
        size: (u32, u32),
        region: Rect,
        at: (i32, i32),
        fit: Fit,
        units: Units,
    ) -> (i32, i32) {
        let side = 12;
        let screen = target_screen(size.0, size.1, at, side);
        let (picture, space) = Space::picture(&screen, region, fit, units);
        let (cx, cy) = red_centre(&picture);
        let named = match units {
            Units::Pixels => (cx.round(), cy.round()),
            Units::Grid(n) => (
                (cx + 0.5) / f64::from(picture.width) * f64::from(n),
                (cy + 0.5) / f64::from(picture.height) * f64::from(n),
            ),
        };
        let hit = space.to_desktop(named.0, named.1).unwrap();
        assert!(
            (hit.0 - at.0).abs() <= side / 2 && (hit.1 - at.1).abs() <= side / 2,
            "{fit:?} {units:?}: the model's {named:?} hit {hit:?}, the target is at {at:?} ({})",
            space.describe()
        );
        hit
    }

    #[test]
    fn golden_openai_full_resolution_on_the_screen_and_in_a_window() {
        assert_eq!(
            golden(
                (1280, 800),
                SCREEN,
                (900, 333),
                Fit::Original,
                Units::Pixels
            ),
            (900, 333)
        );
        let window = Rect {
            x: 200,
            y: 150,
            width: 700,
            height: 500,
        };
        golden(
            (1280, 800),
            window,
            (450, 600),
            Fit::Original,
            Units::Pixels,
        );
    }

    #[test]
    fn golden_anthropic_resized_to_its_bound() {
        // 1920x1080 is more than 1568 tiles: resized, and points mapped back.
        let full = Rect {
            x: 0,
            y: 0,
            width: 1920,
            height: 1080,
        };
        let screen = Image::new(1920, 1080);
        let (picture, _) = Space::picture(&screen, full, Fit::Anthropic, Units::Pixels);
        assert!(picture.width <= 1568);
        let tiles = picture.width.div_ceil(28) * picture.height.div_ceil(28);
        assert!(
            tiles <= 1568,
            "{}x{}: {tiles}",
            picture.width,
            picture.height
        );
        golden(
            (1920, 1080),
            full,
            (1700, 950),
            Fit::Anthropic,
            Units::Pixels,
        );
        // 1280x800 fits as it is.
        let (same, space) = Space::picture(
            &Image::new(1280, 800),
            SCREEN,
            Fit::Anthropic,
            Units::Pixels,
        );
        assert_eq!(
            (same.width, same.height, space.scale),
            (1280, 800, (1.0, 1.0))
        );
    }

    #[test]
    fn golden_qwen_and_ui_tars_smart_resize_and_grids() {
        let qwen = Fit::SmartResize {
            factor: 28,
            min_pixels: 3136,
            max_pixels: 12_845_056,
        };
        let (picture, _) = Space::picture(&Image::new(1280, 800), SCREEN, qwen, Units::Pixels);
        assert_eq!((picture.width, picture.height), (1288, 812));
        golden((1280, 800), SCREEN, (40, 760), qwen, Units::Pixels);
        let small = Fit::SmartResize {
            factor: 28,
            min_pixels: 3136,
            max_pixels: 1024 * 28 * 28,
        };
        golden(
            (1920, 1080),
            Rect {
                x: 0,
                y: 0,
                width: 1920,
                height: 1080,
            },
            (1500, 100),
            small,
            Units::Pixels,
        );
        for grid in [Units::Grid(1000), Units::Grid(999)] {
            golden(
                (1280, 800),
                SCREEN,
                (1100, 50),
                Fit::MaxSide { max_side: 1024 },
                grid,
            );
        }
    }

    #[test]
    fn golden_ufo_letterbox_scaler() {
        let scaler = Fit::Letterbox {
            width: 1024,
            height: 768,
        };
        let window = Rect {
            x: 100,
            y: 40,
            width: 1000,
            height: 500,
        };
        let screen = Image::new(1280, 800);
        let (picture, space) = Space::picture(&screen, window, scaler, Units::Pixels);
        assert_eq!((picture.width, picture.height), (1024, 768));
        assert_eq!(space.content, (1024, 512));
        golden((1280, 800), window, (1000, 500), scaler, Units::Pixels);
        // The black band below the window is not on the picture.
        let e = space.to_desktop(500.0, 600.0).unwrap_err();
        assert!(
            e.to_string().contains("drawn in its top left 1024x512"),
            "{e}"
        );
    }

    #[test]
    fn points_off_the_picture_are_refused_not_clamped() {
        let (_, space) =
            Space::picture(&Image::new(1280, 800), SCREEN, Fit::Original, Units::Pixels);
        assert_eq!(space.to_desktop(1279.0, 799.0).unwrap(), (1279, 799));
        for (x, y) in [(1280.0, 10.0), (-1.0, 10.0), (10.0, 900.0), (f64::NAN, 1.0)] {
            let e = space.to_desktop(x, y).unwrap_err();
            assert!(e.to_string().contains("outside the screenshot"), "{e}");
        }
        let (_, grid) = Space::picture(
            &Image::new(1280, 800),
            SCREEN,
            Fit::Original,
            Units::Grid(1000),
        );
        assert_eq!(grid.to_desktop(1000.0, 1000.0).unwrap(), (1279, 799));
        assert!(grid.to_desktop(1001.0, 5.0).is_err());
        assert_eq!(grid.to_model((640, 400)), (500, 500));
        // A zoom's corners are edges: the whole picture is a region of it.
        let whole = space
            .rect_to_desktop((640.0, 400.0), (1280.0, 800.0))
            .unwrap();
        assert_eq!(
            whole,
            Rect {
                x: 640,
                y: 400,
                width: 640,
                height: 400
            }
        );
    }

    #[test]
    fn a_window_off_the_screen_shows_its_visible_part() {
        let window = Rect {
            x: 1000,
            y: 700,
            width: 600,
            height: 400,
        };
        let (picture, space) =
            Space::picture(&Image::new(1280, 800), window, Fit::Original, Units::Pixels);
        assert_eq!((picture.width, picture.height), (280, 100));
        assert_eq!(space.to_desktop(0.0, 0.0).unwrap(), (1000, 700));
    }
}
