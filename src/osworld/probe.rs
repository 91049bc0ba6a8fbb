//! Asking OSWorld's code what it has, once per run: `driver.py probe`, run by the
//! Python that has OSWorld's code, lists every setup step type (`SetupController.
//! _<type>_setup`), getter (`getters.get_<type>`) and metric (`metrics.<name>`) of
//! desktop-env, each usable, or needing packages that are not installed (found by what
//! its code calls, not by calling it). A task is then unsupported here, or its file is
//! wrong, before anything of it runs.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use tokio::io::AsyncWriteExt;

/// How long the probe may take (importing desktop-env takes about a second).
const PROBE_LIMIT: Duration = Duration::from_secs(120);
/// The longest answer read.
const MAX_ANSWER: usize = 4 << 20;

/// What OSWorld's code says of one of its names.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub(crate) enum Verdict {
    /// It can be used here.
    Usable {
        /// Always true.
        ok: bool,
    },
    /// desktop-env has no such name.
    Unknown {
        /// Its words.
        unknown: String,
    },
    /// It calls packages that are not installed.
    Needs {
        /// The packages (top-level module names).
        needs: Vec<String>,
    },
}

/// What OSWorld's code has, by kind of name.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub(crate) struct Capabilities {
    /// desktop-env's version.
    #[serde(default)]
    pub(crate) desktop_env: String,
    /// Setup step types.
    #[serde(default)]
    pub(crate) setup: HashMap<String, Verdict>,
    /// Getter types.
    #[serde(default)]
    pub(crate) getters: HashMap<String, Verdict>,
    /// Metric functions.
    #[serde(default)]
    pub(crate) metrics: HashMap<String, Verdict>,
}

/// Runs the probe with `python`, its code written in `scratch`.
pub(crate) async fn probe(python: &Path, scratch: &Path) -> Result<Capabilities, String> {
    let driver = scratch.join(super::DRIVER_FILE);
    std::fs::create_dir_all(scratch)
        .and_then(|()| std::fs::write(&driver, super::DRIVER))
        .map_err(|e| {
            format!(
                "cannot write OSWorld's evaluator bridge to {}: {e}",
                driver.display()
            )
        })?;
    // The runner's own variables (API keys among them) are not passed on.
    let mut child = tokio::process::Command::new(python)
        .arg(&driver)
        .arg("probe")
        .current_dir(scratch)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", scratch)
        .env("LANG", "C.UTF-8")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", python.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        let request = serde_json::json!({"all": true, "setup": [], "getters": [], "metrics": []});
        let _ = stdin.write_all(request.to_string().as_bytes()).await;
    }
    let output = tokio::time::timeout(PROBE_LIMIT, child.wait_with_output())
        .await
        .map_err(|_| {
            format!(
                "OSWorld's code did not answer within {}s",
                PROBE_LIMIT.as_secs()
            )
        })?
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    let said =
        String::from_utf8_lossy(&output.stdout[..output.stdout.len().min(MAX_ANSWER)]).into_owned();
    if !output.status.success() {
        let err = String::from_utf8_lossy(&output.stderr);
        let last: Vec<&str> = err.lines().rev().take(3).collect();
        let last: Vec<&str> = last.into_iter().rev().collect();
        return Err(format!(
            "OSWorld's code cannot be loaded with {} ({}): {}",
            python.display(),
            output.status,
            crate::text::shorten(&last.join(" / "), 400)
        ));
    }
    let line = said
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default();
    serde_json::from_str(line).map_err(|e| {
        format!(
            "OSWorld's evaluator bridge answered the probe with garbage ({e}): {}",
            crate::text::shorten(line, 200)
        )
    })
}
