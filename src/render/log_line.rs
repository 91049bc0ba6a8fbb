//! A line of a task's `task.log`: time, level, message (continuation lines indented).

use crate::event::LogLine;

/// `2026-11-21T10:00:00.123Z INFO  message`.
pub(crate) fn log_line(line: &LogLine) -> String {
    let level = line.level.as_str();
    format!(
        "{} {level:<5} {}",
        line.at,
        line.message.replace('\n', "\n    ")
    )
}
