//! Tests of the shell executor on real processes and files.

use serde_json::{Value, json};

use super::*;
use crate::tool::ResultStatus;

fn cmd(tool: &str, args: Value) -> ToolCall {
    ToolCall::action(tool, args.as_object().unwrap().clone())
}

fn executor() -> (tempfile::TempDir, ShellExecutor) {
    let dir = tempfile::tempdir().unwrap();
    let ex = ShellExecutor::new(dir.path().to_path_buf(), ShellSettings::default());
    (dir, ex)
}

#[tokio::test]
async fn commands_run_in_the_workspace() {
    let (dir, mut ex) = executor();
    let r = ex
        .execute(&cmd(
            "execute_command",
            json!({"command": "pwd; echo $HOME"}),
        ))
        .await;
    assert_eq!(r.status, ResultStatus::Success);
    let ws = dir.path().display().to_string();
    assert_eq!(r.stdout().unwrap(), format!("{ws}\n{ws}\n"));
}

#[tokio::test]
async fn nonzero_exit_is_a_failure_with_stderr() {
    let (_dir, mut ex) = executor();
    let r = ex
        .execute(&cmd(
            "execute_command",
            json!({"command": "echo bad >&2; exit 4"}),
        ))
        .await;
    assert_eq!(r.status, ResultStatus::Failure);
    assert_eq!(r.exit_code(), Some(4));
    assert_eq!(r.error.as_deref(), Some("exit code 4: bad"));
}

#[tokio::test]
async fn command_timeout_is_reported() {
    let (_dir, mut ex) = executor();
    let r = ex
        .execute(&cmd(
            "execute_command",
            json!({"command": "sleep 20", "timeout": 1}),
        ))
        .await;
    assert_eq!(r.status, ResultStatus::Failure);
    assert!(r.error.unwrap().contains("timed out after 1s"));
    assert_eq!(r.result["timed_out"], json!(true));
}

#[tokio::test]
async fn file_tools_stay_inside_the_workspace() {
    let (_dir, mut ex) = executor();
    let w = ex
        .execute(&cmd(
            "write_file",
            json!({"path": "a/b.txt", "content": "hi\n"}),
        ))
        .await;
    assert_eq!(w.status, ResultStatus::Success, "{w:?}");
    let a = ex
        .execute(&cmd(
            "write_file",
            json!({"path": "a/b.txt", "content": "more\n", "append": true}),
        ))
        .await;
    assert_eq!(a.status, ResultStatus::Success);
    let r = ex
        .execute(&cmd("read_file", json!({"path": "a/b.txt"})))
        .await;
    assert_eq!(r.result["content"], json!("hi\nmore\n"));
    let l = ex.execute(&cmd("list_dir", json!({}))).await;
    assert_eq!(
        l.result["entries"],
        json!([{"name": "a", "type": "dir", "size": l.result["entries"][0]["size"]}])
    );
    let out = ex
        .execute(&cmd(
            "write_file",
            json!({"path": "../escape.txt", "content": "x"}),
        ))
        .await;
    assert_eq!(out.status, ResultStatus::Failure);
    assert_eq!(
        out.error.as_deref(),
        Some("parameter `path` of `write_file`: `../escape.txt` leaves the workspace")
    );
    let abs = ex
        .execute(&cmd("read_file", json!({"path": "/etc/passwd"})))
        .await;
    assert!(abs.error.unwrap().contains("absolute path"));
}

#[tokio::test]
async fn environment_is_scrubbed() {
    let (_dir, mut ex) = executor();
    // The test process's own environment has CARGO_* variables; none may leak.
    let r = ex
        .execute(&cmd(
            "execute_command",
            json!({"command": "env | cut -d= -f1 | sort"}),
        ))
        .await;
    let names: Vec<&str> = r.stdout().unwrap().lines().collect();
    assert!(
        names.iter().all(|n| [
            "HOME", "LANG", "PATH", "PWD", "SHLVL", "TERM", "TMPDIR", "_"
        ]
        .contains(n)),
        "{names:?}"
    );
}

#[tokio::test]
async fn unknown_tools_and_bad_arguments_fail_clearly() {
    let (_dir, mut ex) = executor();
    let r = ex.execute(&cmd("rm_everything", json!({}))).await;
    assert!(
        r.error
            .unwrap()
            .starts_with("unknown tool `rm_everything`; the shell executor has: execute_command")
    );
    let r = ex
        .execute(&cmd("execute_command", json!({"command": 5})))
        .await;
    assert!(
        r.error
            .unwrap()
            .contains("must be a string, not an integer")
    );
}

#[tokio::test]
async fn shutdown_ends_background_processes() {
    let (_dir, mut ex) = executor();
    let r = ex
        .execute(&cmd(
            "execute_command",
            json!({"command": "sleep 30 & echo $!"}),
        ))
        .await;
    assert_eq!(r.status, ResultStatus::Success);
    let pid: i32 = r.stdout().unwrap().trim().parse().unwrap();
    let note = ex.shutdown().await.unwrap();
    assert_eq!(
        note,
        "ended 1 background process group left running by commands"
    );
    assert!(crate::testutil::wait_gone(pid).await);
}
