//! Tests of directly spawned commands: exit codes and streams, a timeout ending the
//! whole group, processes left behind, supervisors' reports, resource limits.

use super::report::parse_report;
use super::*;
use std::time::Duration;

use crate::testutil::wait_gone;

fn env() -> Vec<(String, String)> {
    vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())]
}

async fn sh(script: &str, timeout: Duration) -> Finished {
    let dir = std::env::temp_dir();
    let argv = ["/bin/sh".to_string(), "-c".to_string(), script.to_string()];
    run(Spec {
        argv: &argv,
        cwd: &dir,
        env: &env(),
        timeout,
        output_limit: 4096,
        limits: ResourceLimits::default(),
        supervised: false,
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn captures_exit_code_and_streams() {
    let f = sh("echo out; echo err >&2; exit 3", Duration::from_secs(10)).await;
    assert_eq!(f.exit_code, Some(3));
    assert_eq!(f.stdout.text(), "out\n");
    assert_eq!(f.stderr.text(), "err\n");
    assert!(!f.timed_out);
    assert!(f.leftover.is_none());
}

#[tokio::test]
async fn timeout_kills_the_whole_group() {
    let f = sh("sleep 30 & echo $!; sleep 30", Duration::from_millis(300)).await;
    assert!(f.timed_out);
    assert_eq!(f.signal, Some(libc::SIGKILL));
    let pid: i32 = f.stdout.text().trim().parse().unwrap();
    assert!(wait_gone(pid).await, "background sleeper {pid} survived");
}

#[tokio::test]
async fn background_processes_are_handed_back_and_killed_on_drop() {
    let f = sh("sleep 30 & echo $!", Duration::from_secs(10)).await;
    assert_eq!(f.exit_code, Some(0));
    let pid: i32 = f.stdout.text().trim().parse().unwrap();
    let mut group = f.leftover.expect("the sleeper keeps the group alive");
    assert!(group.alive());
    drop(group);
    assert!(wait_gone(pid).await, "background sleeper {pid} survived");
}

#[test]
fn a_supervisors_report_reads_as_the_commands_end() {
    let report = |exit_code, signal, done| {
        Some(Report {
            exit_code,
            signal,
            done,
        })
    };
    assert_eq!(parse_report(b"exit 3 done\n"), report(Some(3), None, true));
    assert_eq!(
        parse_report(b"signal 9 running\n"),
        report(None, Some(9), false)
    );
    // Nothing (the supervisor ended first) or anything else: no report.
    for line in [
        &b""[..],
        b"exit 3",
        b"exit 3 done",
        b"exit x done\n",
        b"stop 1 done\n",
        b"exit 1 maybe\n",
        b"exit 1 done more\n",
        b"\xff 1 done\n",
    ] {
        assert_eq!(parse_report(line), None, "{line:?}");
    }
}

#[tokio::test]
async fn memory_and_cpu_limits_apply_to_the_command() {
    let dir = std::env::temp_dir();
    let argv = [
        "/bin/sh".to_string(),
        "-c".to_string(),
        "ulimit -v; ulimit -t".to_string(),
    ];
    let limits = ResourceLimits {
        memory_bytes: Some(512 << 20),
        cpu_seconds: Some(7),
    };
    let spec = Spec {
        argv: &argv,
        cwd: &dir,
        env: &env(),
        timeout: Duration::from_secs(10),
        output_limit: 4096,
        limits,
        supervised: false,
    };
    let f = run(spec).await.unwrap();
    assert_eq!(f.stdout.text(), "524288\n7\n");
}
