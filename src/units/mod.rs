//! Leaf types and value parsers every floor may use: money and tokens, durations,
//! sizes and wall-clock timestamps. Nothing here knows about tasks, sessions or files.

mod cost;
mod duration;
mod size;
mod timestamp;

pub(crate) use cost::{Cost, Usage};
pub(crate) use duration::{as_human, duration_from_seconds, parse_duration, seconds};
pub(crate) use size::{format_size, parse_size};
pub(crate) use timestamp::Timestamp;
