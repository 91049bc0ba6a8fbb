//! What the run's stop makes of an attempt's end: a failure the stop most likely caused
//! (a scheduler signals the runner and every process of the task at once) is a
//! cancellation, not the task's result.

use super::outcome::AttemptOutcome;
use super::settings::{AttemptStop, SIGNAL_WINDOW};

/// `outcome`, turned into a cancellation when the run's stop most likely caused it:
/// the means of the task ended (`unprepared`), or its last command ended badly, while
/// the run was stopping. The task then runs again on resume, so its true result is
/// never lost.
pub(super) async fn unless_stopped(
    mut outcome: AttemptOutcome,
    unprepared: bool,
    stop: &AttemptStop,
) -> AttemptOutcome {
    let stopping_soon = async {
        stop.stopping.is_cancelled()
            || tokio::time::timeout(SIGNAL_WINDOW, stop.stopping.cancelled())
                .await
                .is_ok()
    };
    if unprepared && outcome.status == crate::record::TaskStatus::Error && stopping_soon.await {
        // The desktop, its app or a server ended, the run stopping (a scheduler signals
        // every process at once, and they may die before the runner hears of it): not
        // the task's error.
        outcome.cancel(format!(
            "cancelled: {} while the run was stopping; it runs again when the run is resumed",
            outcome.reason.clone().unwrap_or_default()
        ));
    } else if let Some(end) = outcome.last_command_end() {
        // A command that ended badly after the run began stopping was most likely stopped
        // by the same signal (a scheduler signals the runner and every command at once,
        // and a shell reports its child's death as an exit code); one killed by a signal
        // is given a moment for the runner's own signal to arrive. The task runs again on
        // resume, so its true result is never lost.
        let stopping = if stop.stopping.is_cancelled() {
            true
        } else if end.by_signal() {
            tokio::time::timeout(SIGNAL_WINDOW, stop.stopping.cancelled())
                .await
                .is_ok()
        } else {
            false
        };
        if stopping {
            outcome.cancel(format!(
                "cancelled: a command {end} while the run was stopping; it runs again when the run is resumed"
            ));
        }
    }
    outcome
}
