//! The size a picture is fitted to before it is sent: Anthropic's bound, Qwen2-VL's
//! `smart_resize`, a longest side.

use super::Fit;

/// The largest side and tile count Anthropic takes without resizing again.
const ANTHROPIC_EDGE: u32 = 1568;
const ANTHROPIC_TILES: u64 = 1568;
const ANTHROPIC_TILE: u32 = 28;

/// The size an image of `w` x `h` is fitted to.
pub(super) fn fitted(fit: Fit, w: u32, h: u32) -> (u32, u32) {
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
