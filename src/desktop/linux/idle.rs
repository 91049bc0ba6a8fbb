//! Whether a desktop has done what it was sent: every process of its jail asleep.
//!
//! Input reaches an app as events it handles when it gets to them, and some of what a
//! key does is put off further: LibreOffice runs a shortcut (Ctrl+Home, an arrow key in
//! Calc, Ctrl+S) as an event it posts to itself, which waits until no input is pending.
//! Keys typed at a fixed pace overtake it on a loaded machine: the `=` after `{DOWN 2}`
//! started a formula in the row the second Down had not reached yet. So the desktop
//! waits after such keys (and after clicks, and before it looks at the screen) until
//! the display, the buses and the app are all asleep, which is when the app has nothing
//! left to do: a measure that follows the machine's load instead of guessing it.
//!
//! The processes are the jail's descendants, found through `/proc/PID/task/*/children`;
//! a process is busy while its main thread (the event loop of every program here) is
//! running, runnable or in an uninterruptible wait.

use std::path::Path;
use std::time::{Duration, Instant};

/// How often the processes are looked at while one is busy.
const POLL: Duration = Duration::from_millis(4);
/// How many looks in a row must find them all asleep (a process just woken by input
/// may not have been scheduled yet at the first).
const QUIET_LOOKS: u32 = 3;

/// Waits until every process under `root` is asleep, or `limit` passes; returns how
/// long it waited, and whether they fell asleep.
pub(super) async fn settle(root: u32, limit: Duration) -> (Duration, bool) {
    let clock = Instant::now();
    let mut quiet = 0;
    loop {
        let processes = descendants(root);
        if processes.iter().all(|&pid| asleep(pid)) {
            quiet += 1;
            if quiet >= QUIET_LOOKS {
                return (clock.elapsed(), true);
            }
        } else {
            quiet = 0;
        }
        if clock.elapsed() >= limit {
            return (clock.elapsed(), false);
        }
        tokio::time::sleep(POLL).await;
    }
}

/// `root` and every process below it (children of any of their threads).
fn descendants(root: u32) -> Vec<u32> {
    let mut all = vec![root];
    let mut next = 0;
    while next < all.len() {
        let pid = all[next];
        next += 1;
        let tasks = Path::new("/proc").join(pid.to_string()).join("task");
        let Ok(threads) = std::fs::read_dir(&tasks) else {
            continue;
        };
        for thread in threads.flatten() {
            let Ok(children) = std::fs::read_to_string(thread.path().join("children")) else {
                continue;
            };
            all.extend(
                children
                    .split_ascii_whitespace()
                    .filter_map(|c| c.parse::<u32>().ok())
                    .filter(|c| !all.contains(c))
                    .collect::<Vec<_>>(),
            );
        }
    }
    all
}

/// Whether the process's main thread sleeps (a process that is gone sleeps too).
fn asleep(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => state(&stat).is_none_or(|s| !matches!(s, 'R' | 'D')),
        Err(_) => true,
    }
}

/// The state letter of a `/proc/PID/stat` line (after the name, which may hold
/// anything, parentheses and spaces included).
fn state(stat: &str) -> Option<char> {
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_ascii_whitespace().next()?.chars().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_is_read_after_the_name_whatever_it_holds() {
        assert_eq!(state("42 (soffice.bin) S 1 42 42 0"), Some('S'));
        assert_eq!(state("42 (a) R (b)) R 1 42"), Some('R'));
        assert_eq!(state("garbage"), None);
    }

    #[tokio::test]
    async fn a_busy_child_is_waited_for_and_a_sleeping_one_is_not() {
        let me = std::process::id();
        let mut sleeper = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        // This test's own thread runs while it looks: ask about the sleeper's subtree.
        let (waited, quiet) = settle(sleeper.id(), Duration::from_secs(5)).await;
        assert!(quiet, "a sleeping process counts as asleep");
        assert!(waited < Duration::from_secs(1), "{waited:?}");
        sleeper.kill().unwrap();
        sleeper.wait().unwrap();

        let mut spinner = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let (waited, quiet) = settle(spinner.id(), Duration::from_millis(200)).await;
        assert!(!quiet, "a spinning process is busy");
        assert!(waited >= Duration::from_millis(200));
        spinner.kill().unwrap();
        spinner.wait().unwrap();
        assert!(descendants(me).contains(&me));
    }
}
