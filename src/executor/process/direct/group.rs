//! A command's process group, and the guard that ends every process of it when the
//! command is abandoned: the group killed, or its supervisor asked to end everything.

#[cfg(windows)]
use std::process::Stdio;
use std::time::Duration;

/// A command's process group, and the process started (held unreaped, so that its id
/// stays its own while the group may be signalled). Dropping it while armed ends every
/// process of the command, so an abandoned command never outlives its task.
#[derive(Debug)]
pub(crate) struct ProcessGroup {
    /// The group's id (the started process's), while armed.
    id: Option<u32>,
    pub(super) child: Option<tokio::process::Child>,
    /// The started process is the command's supervisor: asked to end everything rather
    /// than killed (it follows processes that left the group).
    supervised: bool,
    /// The supervisor has been asked to end everything.
    asked: bool,
}

impl ProcessGroup {
    pub(in crate::executor::process) fn new(
        child: tokio::process::Child,
        supervised: bool,
    ) -> Self {
        Self {
            id: child.id(),
            child: Some(child),
            supervised,
            asked: false,
        }
    }

    /// The group, armed again (after `release`), to be ended by the executor later.
    pub(in crate::executor::process) fn release(&mut self) -> ProcessGroup {
        ProcessGroup {
            id: self.id.take(),
            child: self.child.take(),
            supervised: self.supervised,
            asked: self.asked,
        }
    }

    /// Forgets the group without ending it (it has ended, or has been asked to).
    pub(in crate::executor::process) fn disarm(&mut self) {
        self.id = None;
    }

    /// True while any process of the command may still run: its supervisor's (which
    /// lives exactly as long as they do), or any process of its group.
    pub(crate) fn alive(&mut self) -> bool {
        if self.supervised {
            return self.supervisor_running();
        }
        self.id.is_some_and(group_alive)
    }

    /// Ends every process of the command (without waiting).
    pub(crate) fn kill(&mut self) {
        let Some(id) = self.id else { return };
        if !self.supervised {
            kill_group(id);
        } else if self.supervisor_running() {
            ask_to_end(id);
            self.asked = true;
        }
        // A supervisor that has ended (and is reaped) left nothing: its command had a
        // session of its own, and the id may already be another's.
    }

    /// Waits, until `deadline` at most, for a supervisor asked to end; false when it had
    /// not ended by then (it goes on).
    pub(crate) async fn ended_by(mut self, deadline: tokio::time::Instant) -> bool {
        self.id = None;
        self.wait_ended(deadline).await
    }

    /// Waits (until `deadline` at most) until a supervisor that was asked to end has.
    pub(super) async fn wait_ended(&mut self, deadline: tokio::time::Instant) -> bool {
        match (self.supervised && self.asked, self.child.as_mut()) {
            (true, Some(child)) => tokio::time::timeout_at(deadline, child.wait())
                .await
                .is_ok(),
            _ => true,
        }
    }

    fn supervisor_running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
        // A supervisor asked to end and still at it is waited for at the end of the run;
        // any other is reaped by the runtime once it exits.
        if self.supervised
            && self.asked
            && let Some(mut child) = self.child.take()
            && matches!(child.try_wait(), Ok(None))
        {
            let mut ending = ENDING.lock().unwrap_or_else(|e| e.into_inner());
            ending.retain_mut(|c| matches!(c.try_wait(), Ok(None)));
            ending.push(child);
        }
    }
}

/// Supervisors asked to end (or ending) whose task went on without waiting for them.
static ENDING: std::sync::Mutex<Vec<tokio::process::Child>> = std::sync::Mutex::new(Vec::new());

/// Waits, `limit` at most, until every supervisor asked to end has ended; returns how
/// many have not.
pub(crate) async fn wait_for_supervisors(limit: Duration) -> usize {
    let mut ending = std::mem::take(&mut *ENDING.lock().unwrap_or_else(|e| e.into_inner()));
    let all = async {
        for child in &mut ending {
            let _ = child.wait().await;
        }
    };
    let _ = tokio::time::timeout(limit, all).await;
    ending
        .iter_mut()
        .map(|c| matches!(c.try_wait(), Ok(None)))
        .filter(|&running| running)
        .count()
}

#[cfg(unix)]
fn kill_group(id: u32) {
    // SAFETY: killpg only sends a signal; the id is a process group we created.
    unsafe {
        libc::killpg(id as libc::pid_t, libc::SIGKILL);
    }
}

/// Asks a supervisor to end everything it supervises (and wakes it if stopped).
#[cfg(unix)]
fn ask_to_end(id: u32) {
    #[cfg(target_os = "linux")]
    let end = crate::executor::sandbox::supervisor::end_signal();
    #[cfg(not(target_os = "linux"))]
    let end = libc::SIGTERM;
    // SAFETY: kill only sends signals; the id is our child's, not yet reaped.
    unsafe {
        libc::kill(id as libc::pid_t, end);
        libc::kill(id as libc::pid_t, libc::SIGCONT);
    }
}

#[cfg(unix)]
fn group_alive(id: u32) -> bool {
    // SAFETY: signal 0 only checks that the group exists.
    unsafe { libc::killpg(id as libc::pid_t, 0) == 0 }
}

#[cfg(windows)]
fn kill_group(id: u32) {
    let _ = std::process::Command::new("taskkill")
        .args(["/F", "/T", "/PID", &id.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

#[cfg(windows)]
fn ask_to_end(id: u32) {
    kill_group(id);
}

#[cfg(windows)]
fn group_alive(_id: u32) -> bool {
    false
}
