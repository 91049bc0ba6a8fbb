//! What the golden tests of coordinates share: a screen with a target, and where a
//! perfect model sees it.

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
