//! Running one deterministic check in a task's workspace. Each failure says exactly what
//! was found instead of what was expected. Files are opened beneath the workspace with
//! the task's rights (`confined`): a link the task left is not followed.

use std::path::Path;

use serde_json::json;

use super::error::CheckError;
use crate::confined::{Confined, Kind};
use crate::executor::Executor;
use crate::regular_file::FileAccessError;
use crate::relpath::RelPath;
use crate::task::{Check, describe_text_difference};
use crate::text::shorten;
use crate::tool::{ResultStatus, ToolCall};

/// Runs `check`; `Err` says why it does not hold.
pub(crate) async fn run_check(
    check: &Check,
    workspace: &Path,
    executor: &mut dyn Executor,
) -> Result<(), CheckError> {
    match check {
        Check::FileExists { path } => file_exists(workspace, path),
        Check::FileContains { path, pattern } => {
            let text = read(workspace, path)?;
            if Check::regex(pattern)?.is_match(&text) {
                Ok(())
            } else {
                Err(CheckError::NoMatch {
                    pattern: pattern.clone(),
                    path: path.clone(),
                    size: describe_size(&text),
                })
            }
        }
        Check::FileEquals { path, content } => {
            let text = read(workspace, path)?;
            if text.trim_end_matches(['\n', '\r']) == content.trim_end_matches(['\n', '\r']) {
                Ok(())
            } else {
                Err(CheckError::Differs(describe_text_difference(
                    &format!("`{path}`"),
                    &text,
                    content,
                )))
            }
        }
        Check::DocumentContains { path, pattern } => {
            document_contains(workspace, path, pattern).await
        }
        Check::CellEquals {
            path,
            sheet,
            cell,
            value,
        } => cell_equals(workspace, path, sheet.as_deref(), cell, value).await,
        Check::Command {
            run,
            exit_code,
            stdout,
        } => command(executor, run, exit_code.unwrap_or(0), stdout.as_deref()).await,
    }
}

/// `path` is there (a file or a folder, not a link).
fn file_exists(workspace: &Path, path: &str) -> Result<(), CheckError> {
    let (ws, rel) = open(workspace, path)?;
    match ws.kind(&rel) {
        Ok(Some(Kind::Link)) => Err(CheckError::Link(path.to_string())),
        Ok(Some(_)) => Ok(()),
        Ok(None) | Err(FileAccessError::NotAFolderOnTheWay) => {
            Err(CheckError::Missing(path.to_string()))
        }
        Err(e) => Err(describe(path, e)),
    }
}

/// The text of the document at `path` matches `pattern`.
async fn document_contains(workspace: &Path, path: &str, pattern: &str) -> Result<(), CheckError> {
    let file = document(workspace, path)?;
    let text = crate::document::read_in_child(file, path, crate::document::Read::Text)
        .await
        .map_err(|source| CheckError::Document {
            path: path.to_string(),
            source,
        })?;
    if Check::regex(pattern)?.is_match(&text) {
        Ok(())
    } else {
        Err(CheckError::NoMatchInDocument {
            pattern: pattern.to_string(),
            path: path.to_string(),
            size: describe_size(&text),
            start: shorten(text.trim(), 120),
        })
    }
}

/// The cell `cell` of `sheet` in the spreadsheet at `path` holds `value`.
async fn cell_equals(
    workspace: &Path,
    path: &str,
    sheet: Option<&str>,
    cell: &str,
    value: &serde_json::Value,
) -> Result<(), CheckError> {
    let at = crate::document::CellRef::parse(cell)?;
    let file = document(workspace, path)?;
    let cell_text = at.to_string();
    let read = crate::document::Read::Cell {
        sheet,
        cell: &cell_text,
    };
    let got = crate::document::read_in_child(file, path, read)
        .await
        .map_err(|source| CheckError::Document {
            path: path.to_string(),
            source,
        })?;
    if cell_matches(&got, value) {
        Ok(())
    } else {
        Err(CheckError::CellDiffers {
            path: path.to_string(),
            at,
            got: shorten(&got, 120),
            want: value.to_string(),
        })
    }
}

/// `run` exits with `want`, and its output matches `stdout` when given.
async fn command(
    executor: &mut dyn Executor,
    run: &str,
    want: i64,
    stdout: Option<&str>,
) -> Result<(), CheckError> {
    let params = json!({"command": run})
        .as_object()
        .cloned()
        .unwrap_or_default();
    let result = executor
        .execute(&ToolCall::action("execute_command", params))
        .await;
    match result.exit_code() {
        Some(got) if got == want => {}
        Some(got) => {
            let stderr = result
                .result
                .get("stderr")
                .and_then(|v| v.as_str())
                .unwrap_or("");
            let hint = crate::text::first_line(stderr, 150);
            return Err(CheckError::ExitCode {
                got,
                want,
                hint: (!hint.is_empty()).then_some(hint),
            });
        }
        None if result.status == ResultStatus::Failure => {
            return Err(CheckError::CommandFailed(
                result.error.unwrap_or_else(|| "the command failed".into()),
            ));
        }
        None => return Err(CheckError::NoExitCode),
    }
    if let Some(pattern) = stdout {
        let re = Check::regex(pattern)?;
        let out = result.stdout().unwrap_or("");
        if !re.is_match(out) {
            return Err(CheckError::Stdout {
                out: shorten(out.trim_end(), 120),
                pattern: pattern.to_string(),
            });
        }
    }
    Ok(())
}

/// The workspace's handle and `path` in it.
fn open(workspace: &Path, path: &str) -> Result<(Confined, RelPath), CheckError> {
    let rel = RelPath::parse(path, false)?;
    let ws = Confined::open(workspace).map_err(CheckError::Workspace)?;
    Ok((ws, rel))
}

/// Why `path` could not be read.
fn describe(path: &str, e: FileAccessError) -> CheckError {
    match e {
        FileAccessError::NotFound => CheckError::Missing(path.to_string()),
        source => CheckError::Unreadable {
            path: path.to_string(),
            source,
        },
    }
}

/// The document a check reads, open: a regular file of the workspace (the reader runs
/// apart, and reads it from this handle).
fn document(workspace: &Path, path: &str) -> Result<std::fs::File, CheckError> {
    let (ws, rel) = open(workspace, path)?;
    ws.open_file(&rel)
        .map(|(file, _)| file)
        .map_err(|e| describe(path, e))
}

/// The text of a workspace file a check looks at.
fn read(workspace: &Path, path: &str) -> Result<String, CheckError> {
    read_bytes(workspace, path).map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
}

/// The bytes of a workspace file a check looks at (a regular file, read up to a bound
/// far above any file a check compares).
fn read_bytes(workspace: &Path, path: &str) -> Result<Vec<u8>, CheckError> {
    const LIMIT: u64 = 64 << 20;
    let (ws, rel) = open(workspace, path)?;
    ws.read(&rel, LIMIT, Some(LIMIT))
        .map(|file| file.bytes)
        .map_err(|e| describe(path, e))
}

/// Whether a cell's text is the expected value: numbers as numbers (`3` is `3.0`, and
/// `0.30000000000000004` is `0.3` within a relative 1e-9), anything else as trimmed text.
fn cell_matches(got: &str, want: &serde_json::Value) -> bool {
    let want_text = match want {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Bool(b) => if *b { "TRUE" } else { "FALSE" }.to_string(),
        other => other.to_string(),
    };
    match (got.trim().parse::<f64>(), want_text.trim().parse::<f64>()) {
        (Ok(a), Ok(b)) => (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0),
        _ => got.trim() == want_text.trim(),
    }
}

fn describe_size(text: &str) -> String {
    match text.lines().count() {
        0 => "the file is empty".to_string(),
        n => format!("{} read", crate::text::plural(n, "line")),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::eval::run_checks;
    use crate::executor::{ShellExecutor, ShellSettings};
    use crate::record::Complete;

    fn setup() -> (tempfile::TempDir, ShellExecutor) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("total.txt"), "41\n").unwrap();
        let ex = ShellExecutor::new(dir.path().to_path_buf(), ShellSettings::default());
        (dir, ex)
    }

    fn check(v: serde_json::Value) -> Check {
        serde_json::from_value(v).unwrap()
    }

    #[tokio::test]
    async fn each_check_says_what_it_found() {
        let (dir, mut ex) = setup();
        let ws = dir.path();
        let cases = [
            (json!({"type": "file_exists", "path": "total.txt"}), None),
            (
                json!({"type": "file_exists", "path": "nope.txt"}),
                Some("`nope.txt` does not exist"),
            ),
            (
                json!({"type": "file_contains", "path": "total.txt", "pattern": "^4\\d$"}),
                None,
            ),
            (
                json!({"type": "file_contains", "path": "total.txt", "pattern": "^42"}),
                Some("no match for /^42/ in `total.txt` (1 line read)"),
            ),
            (
                json!({"type": "file_equals", "path": "total.txt", "content": "41"}),
                None,
            ),
            (
                json!({"type": "file_equals", "path": "total.txt", "content": "42\n"}),
                Some("`total.txt` line 1 is \"41\", expected \"42\""),
            ),
            (
                json!({"type": "command", "run": "grep -q 41 total.txt"}),
                None,
            ),
            (
                json!({"type": "command", "run": "cat total.txt", "stdout": "^41$"}),
                None,
            ),
            (
                json!({"type": "command", "run": "cat total.txt", "stdout": "^42$"}),
                Some("stdout \"41\" does not match /^42$/"),
            ),
            (
                json!({"type": "command", "run": "exit 3", "exit_code": 3}),
                None,
            ),
            (
                json!({"type": "command", "run": "ls nope"}),
                Some(
                    "exit code 2, expected 0 (ls: cannot access 'nope': No such file or directory)",
                ),
            ),
        ];
        for (c, want) in cases {
            let got = run_check(&check(c.clone()), ws, &mut ex)
                .await
                .err()
                .map(|e| e.to_string());
            assert_eq!(got.as_deref(), want, "{c}");
        }
    }

    #[tokio::test]
    async fn evaluation_combines_sub_scores() {
        let (dir, mut ex) = setup();
        let checks = vec![
            check(json!({"type": "file_exists", "path": "total.txt"})),
            check(json!({"type": "file_equals", "path": "total.txt", "content": "42"})),
        ];
        let e = run_checks(&checks, dir.path(), &mut ex).await;
        assert_eq!(e.complete, Complete::No);
        assert_eq!(e.sub_scores.len(), 2);
        assert_eq!(e.sub_scores[0].evaluation, Complete::Yes);
        assert_eq!(
            e.reason,
            "check failed: file_equals total.txt: `total.txt` line 1 is \"41\", expected \"42\""
        );
        let ok = run_checks(&checks[..1], dir.path(), &mut ex).await;
        assert_eq!(
            (ok.complete, ok.reason.as_str()),
            (Complete::Yes, "the check holds")
        );
    }
}
