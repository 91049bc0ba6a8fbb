//! The terminal: a live progress bar on a TTY, one plain line per finished task
//! otherwise, and a final summary line. The only writer to the user's terminal.

use std::collections::BTreeSet;
use std::io::Write;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::eta::{self, Eta};
use super::stats::RunStats;
use crate::event::{Event, RunFinished, RunStarted, TaskFinished};
use crate::record::{TaskRecord, TaskStatus};
use crate::text::{first_line, plural};

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TerminalMode {
    /// A live bar (TTY).
    Bar,
    /// One line per finished task (CI logs, pipes).
    Lines,
    /// Only the final summary line.
    Quiet,
}

/// Shows a run's progress.
pub(crate) struct Terminal {
    mode: TerminalMode,
    out: Box<dyn Write + Send>,
    bar: Option<ProgressBar>,
    running: BTreeSet<String>,
    eta: Eta,
    done: usize,
    total: usize,
    /// The limit of LLM calls last told about in a line.
    llm_limit_told: Option<usize>,
}

impl Terminal {
    /// A display writing to `out` (stderr in the binary, a buffer in tests).
    pub(crate) fn new(mode: TerminalMode, out: Box<dyn Write + Send>) -> Self {
        Self {
            mode,
            out,
            bar: None,
            running: BTreeSet::new(),
            eta: Eta::default(),
            done: 0,
            total: 0,
            llm_limit_told: None,
        }
    }

    /// Shows what `event` changes; `stats` already counts it.
    pub(crate) fn handle(&mut self, event: &Event, stats: &RunStats) {
        match event {
            Event::RunStarted(r) => self.run_started(r),
            Event::TasksKept(rows) => {
                self.done += rows.len();
                self.refresh(stats);
            }
            Event::TaskStarted(record) => {
                self.running.insert(record.id.to_string());
                self.eta
                    .started(record.id.as_str(), std::time::Instant::now());
                self.refresh(stats);
            }
            Event::TaskLog { .. } | Event::TaskOnDevice { .. } | Event::StepFinished { .. } => {}
            Event::Tick => self.refresh(stats),
            Event::TaskRetrying { record, delay_s } => {
                let why = record
                    .attempts
                    .last()
                    .and_then(|a| a.error.as_deref())
                    .unwrap_or("");
                let line = format!(
                    "RETRY   {} (attempt {} ended in error: {}; next in {delay_s:.1}s)",
                    record.id,
                    record.attempt_count(),
                    first_line(why, 160)
                );
                self.line(&line);
            }
            Event::TaskFinished(f) => self.task_finished(f, stats),
            Event::LlmLoad(load) => {
                // A line when rate limits lower the calls in flight; the bar shows it all.
                let lowered = self.llm_limit_told.unwrap_or(load.max) > load.limit;
                if load.rate_limited > 0 && lowered {
                    let line = format!(
                        "LLM     the provider is rate limiting: {} so far; at most {} calls at once now (peak {}); calls waited {:.1}s in all",
                        plural(load.rate_limited as usize, "rate-limit answer"),
                        load.limit,
                        load.peak,
                        load.waited_s
                    );
                    self.line(&line);
                }
                self.llm_limit_told = Some(load.limit);
                self.refresh(stats);
            }
            Event::Devices { news, load } => {
                if let Some(news) = news {
                    let mark = match news.level {
                        crate::event::Level::Info => "",
                        crate::event::Level::Error => "error: ",
                        _ => "warning: ",
                    };
                    let line = format!(
                        "DEVICE  {mark}{} ({} connected, {} busy)",
                        news.text, load.connected, load.busy
                    );
                    self.line(&line);
                }
                self.refresh(stats);
            }
            Event::Stopping { reason, grace_s } => {
                let n = self.running.len();
                let line = match (n, grace_s) {
                    (0, _) => format!("stopping: {reason}"),
                    (_, Some(g)) => format!(
                        "stopping: {reason}; {} may finish within {g:.0}s (press Ctrl-C again to stop them now)",
                        plural(n, "running task")
                    ),
                    (_, None) => format!(
                        "stopping: {reason}; waiting for {} to finish",
                        plural(n, "running task")
                    ),
                };
                self.line(&line);
            }
            Event::RunFinished(finished) => self.run_finished(finished, stats),
        }
    }

    fn run_finished(&mut self, finished: &RunFinished, stats: &RunStats) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        if finished.still_ending > 0 {
            let line = format!(
                "warning: the processes of {} were still being ended when the run ended",
                plural(finished.still_ending, "command")
            );
            self.print(&line);
        }
        if let Some(reason) = &stats.stopped {
            let line = format!("stopped early: {reason}");
            self.print(&line);
        }
        if let (n @ 1.., Some((id, why))) = &stats.experience_not_saved {
            let line = format!(
                "warning: {} could not be saved as experience ({id}: {}); each one's status.json says why",
                plural(*n, "task"),
                first_line(why, 200)
            );
            self.print(&line);
        }
        let line = summary_line(stats);
        self.print(&line);
        for e in &stats.write_errors {
            let line = format!("error: {e}");
            self.print(&line);
        }
    }

    fn run_started(&mut self, r: &RunStarted) {
        self.total = r.total;
        self.eta = Eta::new(r.jobs);
        let kept = r.total - r.to_run;
        let shard = r.shard.map(|s| format!(", shard {s}")).unwrap_or_default();
        let mut line = format!(
            "ufo-batch {}: {} → {} ({} at a time, sandbox {}{shard})",
            env!("CARGO_PKG_VERSION"),
            plural(r.total, "task"),
            r.dir.display(),
            r.jobs.min(r.to_run.max(1)),
            r.sandbox
        );
        if kept > 0 {
            line.push_str(&kept_clause(kept, r.kept_passed));
        }
        for (why, n) in &r.rerun {
            line.push_str(&format!("; {} re-run: {why}", plural(*n, "task")));
        }
        if self.mode != TerminalMode::Quiet {
            self.print(&line);
        }
        for warning in &r.warnings {
            self.print(warning);
        }
        if self.mode == TerminalMode::Bar {
            // Its clock counts from when the run began, as the final line's does.
            let bar =
                ProgressBar::with_draw_target(Some(r.total as u64), ProgressDrawTarget::stderr())
                    .with_elapsed(r.began.elapsed());
            let style = ProgressStyle::with_template(
                "{spinner} {elapsed_precise} [{bar:30}] {pos}/{len} {prefix} {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            bar.set_style(style);
            bar.enable_steady_tick(Duration::from_millis(200));
            self.bar = Some(bar);
        }
    }

    fn task_finished(&mut self, f: &TaskFinished, stats: &RunStats) {
        self.running.remove(f.record.id.as_str());
        // A task file that could not run took no time: it says nothing of the others'.
        if f.problems.is_empty() {
            self.eta.finished(
                f.record.id.as_str(),
                Duration::from_secs_f64(f.record.duration_s.max(0.0)),
            );
        }
        self.done += 1;
        if self.mode != TerminalMode::Quiet {
            let shown = if f.problems.is_empty() {
                task_line(&f.record)
            } else {
                let n = plural(f.problems.len(), "problem");
                format!("ERROR   {}: invalid task file ({n})", f.record.id)
            };
            let w = digits(self.total);
            let mut line = format!("[{:>w$}/{}] {shown}", self.done, self.total);
            for p in &f.problems {
                line.push_str(&format!(
                    "\n        {}",
                    p.to_string().replace('\n', "\n        ")
                ));
            }
            self.line(&line);
        }
        self.refresh(stats);
    }

    fn refresh(&mut self, stats: &RunStats) {
        let Some(bar) = &self.bar else { return };
        bar.set_position(self.done as u64);
        let left = self.total.saturating_sub(self.done);
        bar.set_prefix(match self.eta.left(std::time::Instant::now(), left) {
            Some(d) => format!("ETA {}", eta::shown(d)),
            None => "ETA -".to_string(),
        });
        let running: Vec<&str> = self.running.iter().take(3).map(String::as_str).collect();
        let more = self.running.len().saturating_sub(running.len());
        let running = if running.is_empty() {
            String::new()
        } else if more > 0 {
            format!(" · running {} +{more}", running.join(", "))
        } else {
            format!(" · running {}", running.join(", "))
        };
        let llm = match stats.llm {
            Some(l) if l.rate_limited > 0 => format!(
                " · LLM {}/{} (peak {}, rate limited {}×, waited {:.0}s)",
                l.in_flight, l.limit, l.peak, l.rate_limited, l.waited_s
            ),
            Some(l) => format!(" · LLM {}/{} (peak {})", l.in_flight, l.limit, l.peak),
            None => String::new(),
        };
        let devices = stats
            .devices
            .map(|d| format!(" · devices {}/{} busy", d.busy, d.connected))
            .unwrap_or_default();
        bar.set_message(format!(
            "✔ {} ✘ {}{llm}{devices}{running}",
            stats.count(TaskStatus::Passed),
            stats.finished() - stats.count(TaskStatus::Passed)
        ));
    }

    /// A line above the bar, or a plain line.
    fn line(&mut self, text: &str) {
        match (&self.bar, self.mode) {
            (_, TerminalMode::Quiet) => {}
            (Some(bar), _) => bar.println(crate::text::printable(&crate::secrets::scrub(text))),
            (None, _) => self.print(text),
        }
    }

    fn print(&mut self, text: &str) {
        let scrubbed = crate::secrets::scrub(text);
        let text = crate::text::printable(&scrubbed);
        let _ = writeln!(self.out, "{text}");
        let _ = self.out.flush();
    }
}

/// `PASS    csv/sort (0.04s, 3 steps)` or `FAIL    x (0.1s, 2 steps): why`.
fn task_line(r: &TaskRecord) -> String {
    let label = match r.status {
        TaskStatus::Passed => "PASS",
        TaskStatus::Failed => "FAIL",
        TaskStatus::Error => "ERROR",
        TaskStatus::Timeout => "TIMEOUT",
        TaskStatus::Cancelled => "CANCEL",
        TaskStatus::Unsupported => "UNSUPP",
        TaskStatus::Pending | TaskStatus::Running => "?",
    };
    let mut line = format!(
        "{label:<7} {} ({:.2}s, {})",
        r.id,
        r.duration_s,
        plural(r.steps as usize, "step")
    );
    if r.attempt_count() > 1 {
        line.push_str(&format!(" [attempt {}]", r.attempt_count()));
    }
    if let Some(why) = &r.error {
        line.push_str(&format!(": {}", first_line(why, 200)));
    }
    line
}

/// The final line: counts, time, tokens, cost and where the results are.
pub(crate) fn summary_line(s: &RunStats) -> String {
    let counts: Vec<String> = TaskStatus::FINAL
        .iter()
        .filter(|st| s.count(**st) > 0 || **st == TaskStatus::Passed || **st == TaskStatus::Failed)
        .map(|st| format!("{} {st}", s.count(*st)))
        .collect();
    let unfinished = s.total.saturating_sub(s.finished());
    let mut line = format!("{}: {}", plural(s.total, "task"), counts.join(", "));
    if unfinished > 0 {
        line.push_str(&format!(", {unfinished} unfinished"));
    }
    if s.kept > 0 {
        line.push_str(&format!(" ({} kept from earlier)", s.kept));
    }
    line.push_str(&format!(" in {:.1}s", s.elapsed.as_secs_f64()));
    if s.usage.total() > 0 {
        line.push_str(&format!("; {} tokens", s.usage.total()));
        match s.cost.usd() {
            Some(c) => line.push_str(&format!(", ${c:.4}")),
            None => line.push_str(", cost unknown"),
        }
    }
    if let Some(l) = s.llm {
        line.push_str(&format!(
            "; LLM: {}, at most {} at once",
            plural(l.calls as usize, "call"),
            l.peak
        ));
        if l.rate_limited == 0 && l.waited_s >= 0.1 {
            line.push_str(&format!(
                " (calls waited {:.1}s in all for a free slot)",
                l.waited_s
            ));
        } else if l.rate_limited > 0 {
            line.push_str(&format!(
                " ({}, calls waited {:.1}s in all for the provider, {} at once at the end)",
                plural(l.rate_limited as usize, "rate-limit answer"),
                l.waited_s,
                l.limit
            ));
        }
    }
    line.push_str(&format!("; results: {}", s.run_dir.display()));
    line
}

fn digits(n: usize) -> usize {
    n.to_string().len()
}

/// What the start line says of the results kept from earlier invocations, and the
/// option that would run them again: `--rerun-failed` is named only for those it would
/// run (the ones that did not pass).
fn kept_clause(kept: usize, passed: usize) -> String {
    let are = if kept == 1 { "is" } else { "are" };
    let not_passed = kept - passed.min(kept);
    if not_passed == 0 {
        let them = if kept == 1 { "it" } else { "them" };
        format!("; {kept} already passed and {are} kept (--fresh to run {them} again)")
    } else if not_passed == kept {
        let (have, them) = if kept == 1 {
            ("has", "it")
        } else {
            ("have", "them")
        };
        format!(
            "; {kept} already {have} a result that did not pass and {are} kept (--rerun-failed or --fresh to run {them} again)"
        )
    } else {
        format!(
            "; {kept} already have a result and are kept: {passed} passed (--fresh runs them again), {not_passed} did not (--rerun-failed runs those)"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::kept_clause;

    #[test]
    fn the_kept_clause_names_only_the_option_that_would_run_them() {
        assert_eq!(
            kept_clause(14, 14),
            "; 14 already passed and are kept (--fresh to run them again)"
        );
        assert_eq!(
            kept_clause(1, 0),
            "; 1 already has a result that did not pass and is kept (--rerun-failed or --fresh to run it again)"
        );
        assert!(
            kept_clause(3, 2).contains(
                "2 passed (--fresh runs them again), 1 did not (--rerun-failed runs those)"
            )
        );
    }
}
