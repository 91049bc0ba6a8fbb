//! Run statistics, counted from the events: the numbers of the final summary line and
//! of the exit code. Every selected task is counted, skipped and invalid ones included.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::event::Event;
use crate::llm::LimiterStats;
use crate::record::TaskStatus;
use crate::units::{Cost, Usage};

/// What a run came to.
#[derive(Clone, Debug, Default)]
pub(crate) struct RunStats {
    /// The run dir.
    pub(crate) run_dir: PathBuf,
    /// Tasks selected (the denominator).
    pub(crate) total: usize,
    /// Tasks by final status.
    pub(crate) counts: BTreeMap<TaskStatus, usize>,
    /// Tasks whose result was kept from an earlier invocation.
    pub(crate) kept: usize,
    /// Tokens used in this invocation.
    pub(crate) usage: Usage,
    /// Cost of this invocation.
    pub(crate) cost: Cost,
    /// How long this invocation took: from when its batch began to be prepared until its
    /// run-level files were written.
    pub(crate) elapsed: Duration,
    /// Why scheduling stopped early, if it did.
    pub(crate) stopped: Option<String>,
    /// True when the user interrupted the run.
    pub(crate) interrupted: bool,
    /// Result files that could not be written.
    pub(crate) write_errors: Vec<String>,
    /// The LLM calls of this invocation and the provider's rate limits, when it had an
    /// LLM: the latest figures while it runs, the final ones after.
    pub(crate) llm: Option<LimiterStats>,
    /// The run's devices, when it has any.
    pub(crate) devices: Option<crate::device::FleetLoad>,
    /// Tasks of this invocation that were to be saved as experience and could not, and
    /// the first one's id and reason.
    pub(crate) experience_not_saved: (usize, Option<(String, String)>),
    started: Option<Instant>,
}

impl RunStats {
    /// Tasks with this final status.
    pub(crate) fn count(&self, status: TaskStatus) -> usize {
        self.counts.get(&status).copied().unwrap_or(0)
    }

    /// Tasks with any final status.
    pub(crate) fn finished(&self) -> usize {
        self.counts.values().sum()
    }

    /// The selected tasks but those this machine cannot run (counted apart).
    fn supported(&self) -> usize {
        self.total
            .saturating_sub(self.count(TaskStatus::Unsupported))
    }

    /// Passed tasks over the selected tasks this machine can run.
    pub(crate) fn pass_rate(&self) -> f64 {
        match self.supported() {
            0 => 0.0,
            n => self.count(TaskStatus::Passed) as f64 / n as f64,
        }
    }

    /// 0 when every task passed (those this machine cannot run aside, as long as some
    /// ran), 1 when some did not, 130 when interrupted.
    pub(crate) fn exit_code(&self) -> u8 {
        if self.interrupted {
            130
        } else if self.supported() > 0
            && self.count(TaskStatus::Passed) == self.supported()
            && self.write_errors.is_empty()
        {
            0
        } else {
            1
        }
    }

    /// The run ends now: how long it took, from when it began to be prepared (the
    /// reporter calls it once the run-level files are written).
    pub(crate) fn stop_clock(&mut self) {
        self.elapsed = self.started.map(|s| s.elapsed()).unwrap_or_default();
    }

    /// Updates the counts with one event.
    pub(crate) fn observe(&mut self, event: &Event) {
        match event {
            Event::RunStarted(r) => {
                self.run_dir = r.dir.clone();
                self.total = r.total;
                self.started = Some(r.began);
            }
            Event::TasksKept(rows) => {
                self.kept += rows.len();
                for status in rows.statuses() {
                    self.count_final(*status);
                }
            }
            Event::TaskFinished(f) => {
                self.count_final(f.record.status);
                self.usage.add(f.record.usage);
                self.cost
                    .add(f.record.cost_usd.map_or_else(Cost::unknown, Cost::known));
                let not_saved = f
                    .record
                    .experience
                    .as_ref()
                    .and_then(|x| x.not_saved.as_ref());
                if let Some(why) = not_saved {
                    let (count, first) = &mut self.experience_not_saved;
                    *count += 1;
                    first.get_or_insert_with(|| (f.record.id.to_string(), why.clone()));
                }
            }
            Event::Stopping { reason, .. } => self.stopped = Some(reason.clone()),
            Event::LlmLoad(load) => self.llm = Some(*load),
            Event::Devices { load, .. } => self.devices = Some(*load),
            Event::RunFinished(f) => {
                self.interrupted = f.interrupted;
                self.llm = f.llm.or(self.llm);
                if self.stopped.is_none() {
                    self.stopped = f.stopped.clone();
                }
            }
            Event::TaskStarted(_)
            | Event::Tick
            | Event::TaskLog { .. }
            | Event::TaskOnDevice { .. }
            | Event::StepFinished { .. }
            | Event::TaskRetrying { .. } => {}
        }
    }

    fn count_final(&mut self, status: TaskStatus) {
        *self.counts.entry(status).or_default() += 1;
    }
}
