//! A command started in the task's jail: the runner makes the output pipes and hands
//! their write ends to the jail with the request; the jail says when the command ends and
//! kills its group when asked. Processes it leaves behind end with the jail.

use std::os::fd::OwnedFd;

use tokio::net::unix::pipe;
use tokio::sync::oneshot;

use super::{Finished, Spec, Started, supervise};
use crate::jail::{Jail, JailExit, JailSpawn};

/// Runs a command in `jail` to its end or its timeout.
pub(super) async fn run(spec: Spec<'_>, jail: &mut Jail) -> std::io::Result<Finished> {
    let (out_read, out_write) = std::io::pipe()?;
    let (err_read, err_write) = std::io::pipe()?;
    let command = jail
        .spawn(JailSpawn {
            argv: spec.argv,
            env: spec.env,
            cwd: spec.cwd,
            memory: spec.limits.memory_bytes,
            data: None,
            cpu: spec.limits.cpu_seconds,
            stdin: None,
            stdout: OwnedFd::from(out_write),
            stderr: OwnedFd::from(err_write),
        })
        .await
        .map_err(std::io::Error::other)?;
    let stdout_pipe = pipe::Receiver::from_owned_fd(OwnedFd::from(out_read))?;
    let stderr_pipe = pipe::Receiver::from_owned_fd(OwnedFd::from(err_read))?;
    let jailed = Jailed {
        jail,
        id: command.id,
        exit: command.exit,
    };
    let s = supervise(jailed, Some(stdout_pipe), Some(stderr_pipe), &spec).await?;
    Ok(s.finished(None))
}

/// A command in a jail.
struct Jailed<'a> {
    jail: &'a Jail,
    id: u64,
    /// Polled by reference, so that a `select!` that drops the wait loses nothing.
    exit: oneshot::Receiver<JailExit>,
}

impl Started for Jailed<'_> {
    async fn wait(&mut self) -> std::io::Result<(Option<i32>, Option<i32>)> {
        match (&mut self.exit).await {
            Ok(e) => Ok((e.code, e.signal)),
            Err(_) => Err(std::io::Error::other(
                self.jail
                    .gone()
                    .unwrap_or_else(|| "the task's jail ended".to_string()),
            )),
        }
    }

    async fn kill(&mut self) {
        self.jail.kill(self.id).await;
    }
}
