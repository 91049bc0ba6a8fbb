//! Live reporters: everything the user sees of a run while it goes on, on screen and on
//! disk. They consume the core's events (see `event`) and never influence the run.
//! `Reporter` fans each event out to the statistics, the result files and the terminal;
//! the core runs it on its own thread, so it never waits for a disk or a terminal.

mod eta;
mod files;
mod lanes;
mod log_line;
mod rows;
mod spool;
mod stats;
mod terminal;

pub(crate) use files::ResultFiles;
pub(crate) use stats::RunStats;
pub(crate) use terminal::{Terminal, TerminalMode, summary_line};

use crate::event::{Event, EventSink};

/// Fans events out to the stats, the result files and the terminal.
pub(crate) struct Reporter {
    stats: RunStats,
    files: ResultFiles,
    terminal: Terminal,
}

impl Reporter {
    /// A reporter writing `files` and showing progress on `terminal`.
    pub(crate) fn new(files: ResultFiles, terminal: Terminal) -> Self {
        Self {
            stats: RunStats::default(),
            files,
            terminal,
        }
    }

    /// The run's statistics.
    pub(crate) fn finish(self) -> RunStats {
        self.stats
    }
}

impl EventSink for Reporter {
    fn handle(&mut self, event: &Event) {
        self.stats.observe(event);
        self.files.handle(event);
        if let Event::RunFinished(_) = event {
            self.stats.write_errors = self.files.errors();
            // The run ends once its files are written (a million rows take seconds).
            self.stats.stop_clock();
        }
        self.terminal.handle(event, &self.stats);
    }
}
