//! The progress bar's estimate of the time left, knowing that `--jobs` tasks run at
//! once: the tasks running now finish in about a mean task's time less what they have
//! run, and the queued ones share the free places. (A rate of finished tasks, as a bar
//! counts by itself, reads a wave of tasks that run together as one after another.)

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// What the estimate knows of a run.
#[derive(Debug, Default)]
pub(super) struct Eta {
    /// Tasks run at once.
    jobs: usize,
    /// When each running task started.
    running: BTreeMap<String, Instant>,
    /// Time taken by the tasks finished in this invocation, and how many.
    spent: Duration,
    finished: u32,
}

impl Eta {
    pub(super) fn new(jobs: usize) -> Self {
        Self {
            jobs: jobs.max(1),
            ..Self::default()
        }
    }

    pub(super) fn started(&mut self, id: &str, at: Instant) {
        self.running.insert(id.to_string(), at);
    }

    pub(super) fn finished(&mut self, id: &str, took: Duration) {
        self.running.remove(id);
        self.spent += took;
        self.finished += 1;
    }

    /// The time left at `now` with `left` tasks not finished (running ones included);
    /// none before a task has finished.
    pub(super) fn left(&self, now: Instant, left: usize) -> Option<Duration> {
        let mean = self.spent.checked_div(self.finished)?;
        let running: Vec<Duration> = self
            .running
            .values()
            .map(|at| mean.saturating_sub(now.saturating_duration_since(*at)))
            .collect();
        let queued = left.saturating_sub(running.len());
        Some(estimate(mean, &running, queued, self.jobs))
    }
}

/// The time left when `running` tasks have these times left, `queued` more of `mean`
/// each wait, and `jobs` run at once: the longest running one, or the work left spread
/// over the places, whichever is longer.
fn estimate(mean: Duration, running: &[Duration], queued: usize, jobs: usize) -> Duration {
    let longest = running.iter().copied().max().unwrap_or_default();
    let work = running.iter().sum::<Duration>() + mean * u32::try_from(queued).unwrap_or(u32::MAX);
    let spread = work / u32::try_from(jobs.max(1)).unwrap_or(u32::MAX);
    // A queued task cannot take less than one mean task's time.
    let queued_floor = if queued > 0 { mean } else { Duration::ZERO };
    longest.max(spread).max(queued_floor)
}

/// `8s`, `3m05s`, `1h02m`.
pub(super) fn shown(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn tasks_that_run_together_are_not_counted_one_after_another() {
        // Six tasks of 8 s at --jobs 6: one finished, five running for 7 s: 1 s left,
        // where a rate of finished tasks says 5 × 8 s.
        let mut eta = Eta::new(6);
        let t0 = Instant::now();
        for id in ["a", "b", "c", "d", "e", "f"] {
            eta.started(id, t0);
        }
        eta.finished("a", 8 * S);
        assert_eq!(eta.left(t0 + 7 * S, 5), Some(S));
    }

    #[test]
    fn queued_tasks_share_the_places() {
        // 2 places, 2 running with 1 s left, 4 queued of 4 s: (2 + 16) / 2 = 9 s.
        assert_eq!(estimate(4 * S, &[S, S], 4, 2), 9 * S);
        // One at a time: each after the other.
        assert_eq!(estimate(4 * S, &[S], 3, 1), 13 * S);
        // A queued task takes a mean task's time even with many places.
        assert_eq!(estimate(4 * S, &[], 1, 64), 4 * S);
    }

    #[test]
    fn nothing_is_said_before_a_task_has_finished() {
        let mut eta = Eta::new(4);
        eta.started("a", Instant::now());
        assert_eq!(eta.left(Instant::now(), 3), None);
        assert_eq!(shown(65 * S), "1m05s");
        assert_eq!(shown(3720 * S), "1h02m");
    }
}
