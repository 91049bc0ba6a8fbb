//! What the operator's model is shown: the screen as the step began (the whole desktop,
//! or the target window's part of it), fitted as the provider prescribes (full
//! resolution for OpenAI, Anthropic's bound, a chat format's own fit, or UFO's letterbox
//! `SCALER` when set), as PNG, with the space its points are in; and a zoomed region,
//! scaled up to fill the image budget.

use std::sync::Arc;

use super::settings::{OperatorSettings, Provider};
use crate::desktop::computer::space::{Fit, Space, Units};
use crate::desktop::control::Rect;
use crate::desktop::screenshot::{Image, ImageError};
use crate::executor::ScreenView;
use crate::llm::computer::Png;

/// What part of the desktop the operator works on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// The whole desktop (UFO's `operator` mode: the primary screen).
    Desktop,
    /// The selected window (UFO's `normal_operator`: the app window).
    Window,
}

/// How `settings`' provider fits a screenshot, and in what units its points are.
pub(super) fn fit_of(settings: &OperatorSettings) -> (Fit, Units) {
    let (fit, units) = match &settings.provider {
        Provider::OpenAi { .. } => (Fit::Original, Units::Pixels),
        Provider::Anthropic { .. } => (Fit::Anthropic, Units::Pixels),
        Provider::Chat { format } => (format.fit, format.units),
    };
    match settings.scaler {
        // UFO's letterbox: pixels of the canvas.
        Some((width, height)) if units == Units::Pixels => {
            (Fit::Letterbox { width, height }, units)
        }
        _ => (fit, units),
    }
}

/// The part of the screen `view` the operator of `target` is shown.
pub(super) fn region(view: &ScreenView, target: Target) -> Rect {
    let screen = Rect {
        x: 0,
        y: 0,
        width: view.clean.width as i32,
        height: view.clean.height as i32,
    };
    match target {
        Target::Desktop => screen,
        Target::Window => view.window_rect.filter(Rect::is_visible).unwrap_or(screen),
    }
}

/// The picture of `view` for the operator of `target`, and its space.
pub(super) fn picture(
    view: &ScreenView,
    target: Target,
    settings: &OperatorSettings,
) -> Result<(Png, Space), ImageError> {
    let (fit, units) = fit_of(settings);
    let (image, space) = Space::picture(&view.clean, region(view, target), fit, units);
    Ok((png(&image)?, space))
}

/// A screenshot of the whole screen (`screen`) shown as the region `region` of a
/// batch's picture was, with the same fit.
pub(super) fn refit(
    screen: &Image,
    region: Rect,
    settings: &OperatorSettings,
) -> Result<Png, ImageError> {
    let (fit, units) = fit_of(settings);
    let (image, _) = Space::picture(screen, region, fit, units);
    png(&image)
}

/// `image` as PNG.
pub(super) fn png(image: &Image) -> Result<Png, ImageError> {
    Ok(Png {
        bytes: Arc::new(image.png()?),
        width: image.width,
        height: image.height,
    })
}

/// A zoomed region (`image`, at desktop resolution) as the model is shown it: scaled up
/// to the largest size its provider takes, so that small things become legible.
pub(super) fn zoomed(image: &Image, settings: &OperatorSettings) -> Result<Png, ImageError> {
    let (fit, _) = fit_of(settings);
    let (w, h) = (image.width.max(1), image.height.max(1));
    let bound = match fit {
        Fit::Anthropic => 1568.0,
        Fit::MaxSide { max_side } => f64::from(max_side),
        _ => f64::from(w.max(h)).max(1024.0),
    };
    let s = (bound / f64::from(w.max(h))).max(1.0);
    let larger = image.resized(
        (f64::from(w) * s).round() as u32,
        (f64::from(h) * s).round() as u32,
    );
    let full = Rect {
        x: 0,
        y: 0,
        width: larger.width as i32,
        height: larger.height as i32,
    };
    let fitted = match fit {
        Fit::Letterbox { .. } | Fit::SmartResize { .. } => Fit::Original,
        other => other,
    };
    let (picture, _) = Space::picture(&larger, full, fitted, Units::Pixels);
    png(&picture)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::operator::formats::FORMATS;
    use crate::desktop::computer::space::golden::{red_centre, target_screen};
    use crate::llm::computer::{AnthropicTool, OpenAiTool};

    fn settings(provider: Provider, scaler: Option<(u32, u32)>) -> OperatorSettings {
        OperatorSettings {
            provider,
            keep_screenshots: 3,
            safety_checks: Default::default(),
            scaler,
            max_tokens: 100,
        }
    }

    /// Golden, for every provider and every format of the table: a target at a known
    /// place of the desktop, the point a perfect model names for it in the picture its
    /// provider is shown (in its units), and the desktop pixel that point must hit.
    #[test]
    fn every_provider_and_format_hits_the_target_it_was_shown() {
        let mut all = vec![
            (
                "openai",
                settings(
                    Provider::OpenAi {
                        tool: OpenAiTool::Computer,
                    },
                    None,
                ),
            ),
            (
                "openai+scaler",
                settings(
                    Provider::OpenAi {
                        tool: OpenAiTool::Computer,
                    },
                    Some((1024, 768)),
                ),
            ),
            (
                "anthropic",
                settings(
                    Provider::Anthropic {
                        tool: AnthropicTool::Toolset,
                    },
                    None,
                ),
            ),
        ];
        for format in FORMATS {
            all.push((format.name, settings(Provider::Chat { format }, None)));
        }
        let (w, h) = (1920, 1080);
        for (target, window) in [
            ((1500, 900), None),
            (
                (500, 400),
                Some(Rect {
                    x: 300,
                    y: 200,
                    width: 1000,
                    height: 700,
                }),
            ),
        ] {
            let clean = target_screen(w, h, target, 14);
            let view = ScreenView {
                annotated: clean.clone(),
                clean,
                listed: crate::executor::Listed::Nothing,
                window: None,
                window_rect: window,
                application: None,
            };
            let on = if window.is_some() {
                Target::Window
            } else {
                Target::Desktop
            };
            for (name, s) in &all {
                let (png, space) = picture(&view, on, s).unwrap();
                let shown = Image::from_png(&png.bytes, 1 << 30).unwrap();
                let (cx, cy) = red_centre(&shown);
                let named = match space.units {
                    Units::Pixels => (cx.round(), cy.round()),
                    Units::Grid(g) => (
                        ((cx + 0.5) / f64::from(shown.width) * f64::from(g)).round(),
                        ((cy + 0.5) / f64::from(shown.height) * f64::from(g)).round(),
                    ),
                };
                let hit = space.to_desktop(named.0, named.1).unwrap();
                assert!(
                    (hit.0 - target.0).abs() <= 7 && (hit.1 - target.1).abs() <= 7,
                    "{name}: named {named:?} in {}, hit {hit:?}, the target is at {target:?}",
                    space.describe()
                );
            }
        }
    }

    #[test]
    fn a_zoom_is_scaled_up_to_the_providers_budget() {
        let part = Image::new(200, 100);
        let anthropic = settings(
            Provider::Anthropic {
                tool: AnthropicTool::Toolset,
            },
            None,
        );
        let zoomed = zoomed(&part, &anthropic).unwrap();
        assert!(
            zoomed.width > 1000 && zoomed.width <= 1568,
            "{}",
            zoomed.width
        );
        assert_eq!(zoomed.width / zoomed.height, 2);
    }
}
