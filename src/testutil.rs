//! Helpers shared by unit tests.

use std::time::Duration;

/// Polls until process `pid` is gone or a zombie (killed, not yet reaped by init).
/// Returns false if it is still running after about five seconds.
pub(crate) async fn wait_gone(pid: i32) -> bool {
    for _ in 0..100 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|s| s.split_whitespace().next());
        if stat.is_empty() || state == Some("Z") {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}
