//! Reporters: everything the user sees of a run, on screen and on disk. They consume
//! the core's events (see `event`) and never influence the run. `Reporter` fans each
//! event out to the stats, the result files and the terminal, on its own thread so
//! the core never waits for a disk or a terminal.

mod atomic;
mod compare;
mod display;
mod junit;
mod markdown;
mod merge;
mod rebuild;
mod repeats;
mod rerender;
mod stats;
mod store;
mod summary;
mod task_files;
mod trajectory;
mod validate;
mod writers;

use std::thread::JoinHandle;

pub use atomic::{append_line, write_atomic, write_json};
pub use compare::{Change, Comparison, Rate, Side, compare, compare_md};
pub use display::{Display, DisplayMode, summary_line};
pub use junit::junit_xml;
pub use markdown::report_md;
pub use merge::{MergeReport, merge, merge_summary};
pub use rebuild::{StoredTask, load_records, write_summaries};
pub use repeats::{RepeatTotals, TaskRate, has_repeats, rates, repeat_totals};
pub use rerender::{Rerendered, rerender};
pub use stats::RunStats;
pub use store::Store;
pub use summary::{SummaryRow, Totals, summary_csv, summary_json, tasks_status, totals};
pub use trajectory::render as render_trajectory;
pub use validate::validation_report;

use crate::event::{Event, EventReceiver};

/// Fans events out to the stats, the store and the display.
pub struct Reporter {
    stats: RunStats,
    store: Store,
    display: Display,
}

impl Reporter {
    /// A reporter writing files through `store` and showing progress on `display`.
    pub fn new(store: Store, display: Display) -> Self {
        Self {
            stats: RunStats::default(),
            store,
            display,
        }
    }

    /// Handles one event.
    pub fn report(&mut self, event: &Event) {
        self.stats.observe(event);
        self.store.handle(event);
        if let Event::RunFinished(_) = event {
            self.stats.write_errors = self.store.errors();
        }
        self.display.handle(event, &self.stats);
    }

    /// The run's statistics.
    pub fn finish(self) -> RunStats {
        self.stats
    }

    /// Runs the reporter on its own thread until the event stream ends.
    pub fn spawn(mut self, mut events: EventReceiver) -> JoinHandle<RunStats> {
        std::thread::Builder::new()
            .name("reporter".into())
            .spawn(move || {
                while let Some(event) = events.blocking_recv() {
                    self.report(&event);
                }
                self.finish()
            })
            .expect("spawning the reporter thread")
    }
}
