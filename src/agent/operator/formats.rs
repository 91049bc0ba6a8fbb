//! The action formats of open computer-use models over chat completions: each a row of
//! the table, naming the syntax the model writes its actions in, how its screenshot is
//! fitted and in what space its points are. A new model is a row, not a new loop.
//!
//! UI-TARS v1 and UI-TARS-2 point on a 0–1000 grid; UI-TARS-1.5 in pixels of its
//! `smart_resize`d image (factor 28, 100 to 16384 patches: ByteDance's
//! `README_coordinates.md`); Qwen2.5-VL in pixels of its resized image (factor 28, 4 to
//! 16384 patches: `qwen_vl_utils`); Qwen3-VL on a 0–1000 grid (implementations divide
//! by 1000, some by 999: 1000 here, settled by a golden test).

use crate::desktop::computer::space::{Fit, Units};
use crate::llm::computer::Syntax;

/// One format.
#[derive(Debug, PartialEq)]
pub(crate) struct ChatFormat {
    /// Its name (`[operator] format`).
    pub(crate) name: &'static str,
    /// How the model writes its actions.
    pub(crate) syntax: Syntax,
    /// How its screenshot is fitted.
    pub(crate) fit: Fit,
    /// In what space its points are.
    pub(crate) units: Units,
}

const PATCH: u64 = 28 * 28;

/// The formats.
pub(crate) const FORMATS: &[ChatFormat] = &[
    ChatFormat {
        name: "ui-tars",
        syntax: Syntax::UiTars,
        fit: Fit::MaxSide { max_side: 1280 },
        units: Units::Grid(1000),
    },
    ChatFormat {
        name: "ui-tars-1.5",
        syntax: Syntax::UiTars,
        fit: Fit::SmartResize {
            factor: 28,
            min_pixels: 100 * PATCH,
            max_pixels: 16384 * PATCH,
        },
        units: Units::Pixels,
    },
    ChatFormat {
        name: "ui-tars-2",
        syntax: Syntax::UiTars2,
        fit: Fit::MaxSide { max_side: 1280 },
        units: Units::Grid(1000),
    },
    ChatFormat {
        name: "qwen2.5-vl",
        syntax: Syntax::QwenToolCall,
        fit: Fit::SmartResize {
            factor: 28,
            min_pixels: 4 * PATCH,
            max_pixels: 16384 * PATCH,
        },
        units: Units::Pixels,
    },
    ChatFormat {
        name: "qwen3-vl",
        syntax: Syntax::QwenToolCall,
        fit: Fit::MaxSide { max_side: 1280 },
        units: Units::Grid(1000),
    },
];

/// The format named `name` (any case).
pub(crate) fn format_named(name: &str) -> Option<&'static ChatFormat> {
    FORMATS
        .iter()
        .find(|f| f.name.eq_ignore_ascii_case(name.trim()))
}

/// The formats' names, for an error.
pub(crate) fn format_names() -> String {
    FORMATS
        .iter()
        .map(|f| f.name)
        .collect::<Vec<_>>()
        .join(", ")
}
