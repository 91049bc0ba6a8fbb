//! A line of a task's `task.log`: time, level, message (continuation lines indented).

use crate::event::LogLine;

/// `2026-11-21T10:00:00.123Z INFO  message`.
pub(crate) fn log_line(line: &LogLine) -> String {
    let level = line.level.as_str();
    // Control codes (a task file's names, a command's words) are shown, not obeyed.
    format!(
        "{} {level:<5} {}",
        line.at,
        crate::text::printable(&line.message.replace('\n', "\n    "))
    )
}
