//! Golden tests of the coordinates: each provider's fit, grids, letterboxes, and points
//! off the picture.

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
fn golden(size: (u32, u32), region: Rect, at: (i32, i32), fit: Fit, units: Units) -> (i32, i32) {
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
    let (_, space) = Space::picture(&Image::new(1280, 800), SCREEN, Fit::Original, Units::Pixels);
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
