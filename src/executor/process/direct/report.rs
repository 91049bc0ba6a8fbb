//! A supervisor's report of its command's end: read from the pipe that is the command's
//! standard input, as `exit N` or `signal N`, then `done` or `running`.

use std::process::Stdio;

/// A supervisor's report of its command's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Report {
    pub(super) exit_code: Option<i32>,
    pub(super) signal: Option<i32>,
    /// Nothing of the command was left when it ended.
    pub(super) done: bool,
}

/// The standard input of a command: /dev/null, or for a supervised one the pipe its
/// supervisor reports the command's end on (and the end the runner reads).
#[cfg(unix)]
pub(super) fn report_pipe(supervised: bool) -> std::io::Result<(Stdio, Option<ReportPipe>)> {
    if !supervised {
        return Ok((Stdio::null(), None));
    }
    let (read, write) = std::io::pipe()?;
    let read = tokio::net::unix::pipe::Receiver::from_owned_fd(std::os::fd::OwnedFd::from(read))?;
    Ok((Stdio::from(write), Some(read)))
}

#[cfg(not(unix))]
pub(super) fn report_pipe(_supervised: bool) -> std::io::Result<(Stdio, Option<ReportPipe>)> {
    Ok((Stdio::null(), None))
}

#[cfg(unix)]
pub(super) type ReportPipe = tokio::net::unix::pipe::Receiver;
#[cfg(not(unix))]
pub(super) type ReportPipe = std::convert::Infallible;

/// The command's end as its supervisor reports it; None when the supervisor ended
/// without a report.
#[cfg(unix)]
pub(super) async fn read_report(pipe: &mut ReportPipe) -> std::io::Result<Option<Report>> {
    use tokio::io::AsyncReadExt;
    // One read: the line is written whole, and a read is safe to cancel.
    let mut line = [0u8; 64];
    let n = pipe.read(&mut line).await?;
    Ok(parse_report(&line[..n]))
}

#[cfg(not(unix))]
pub(super) async fn read_report(pipe: &mut ReportPipe) -> std::io::Result<Option<Report>> {
    match *pipe {}
}

/// `exit N` or `signal N`, then `done` or `running`, as the supervisor writes them.
#[cfg(unix)]
pub(super) fn parse_report(line: &[u8]) -> Option<Report> {
    let line = std::str::from_utf8(line).ok()?.strip_suffix('\n')?;
    let mut words = line.split(' ');
    let (kind, value, left) = (words.next()?, words.next()?, words.next()?);
    let value: i32 = value.parse().ok()?;
    let done = match left {
        "done" => true,
        "running" => false,
        _ => return None,
    };
    let (exit_code, signal) = match kind {
        "exit" => (Some(value), None),
        "signal" => (None, Some(value)),
        _ => return None,
    };
    (words.next().is_none()).then_some(Report {
        exit_code,
        signal,
        done,
    })
}
