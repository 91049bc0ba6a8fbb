//! Tests of the whole configuration layer.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::file::ConfigFile;
use super::values::default_run_name;
use super::*;

fn overrides(paths: &[&str]) -> RunOverrides {
    RunOverrides {
        paths: paths.iter().map(PathBuf::from).collect(),
        ..Default::default()
    }
}

#[test]
fn flags_win_over_the_file() {
    let file: ConfigFile =
        toml::from_str("[run]\njobs = 3\ntimeout = \"5m\"\n[executor]\ncommand_timeout = \"5s\"")
            .unwrap();
    let mut o = overrides(&["plans"]);
    o.jobs = Some(7);
    let c = resolve(o, file, None).unwrap();
    assert_eq!(c.jobs.get(), 7);
    assert_eq!(c.timeout, Duration::from_secs(300));
    assert_eq!(c.shell.command_timeout, Duration::from_secs(5));
    assert_eq!(c.run_name, "plans");
    assert_eq!(c.run_dir, PathBuf::from("results/plans"));
}

#[test]
fn bad_values_are_rejected_with_the_option_named() {
    let mut o = overrides(&["plans"]);
    o.jobs = Some(0);
    let e = resolve(o, ConfigFile::default(), None).unwrap_err();
    assert_eq!(e.to_string(), "--jobs must be at least 1");
    let mut o = overrides(&["plans"]);
    o.name = Some("../x".into());
    assert!(
        resolve(o, ConfigFile::default(), None)
            .unwrap_err()
            .to_string()
            .starts_with("--name")
    );
    let mut o = overrides(&["plans"]);
    o.timeout = Some("forever".into());
    let e = resolve(o, ConfigFile::default(), None)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("--timeout: \"forever\" is not a duration"),
        "{e}"
    );
}

#[test]
fn unknown_config_keys_are_errors_with_position() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ufo-batch.toml");
    std::fs::write(&path, "[run]\njbos = 3\n").unwrap();
    let e = ConfigFile::load(&path, true).unwrap_err().to_string();
    assert!(e.contains("line 2"), "{e}");
    assert!(e.contains("unknown field `jbos`"), "{e}");
    assert!(ConfigFile::load(&dir.path().join("none.toml"), false).is_ok());
    assert!(ConfigFile::load(&dir.path().join("none.toml"), true).is_err());
}

#[test]
fn run_name_from_files_and_folders() {
    assert_eq!(default_run_name(Path::new("some/dir/")).unwrap(), "dir");
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("one task.json");
    std::fs::write(&f, "{}").unwrap();
    assert_eq!(default_run_name(&f).unwrap(), "one_task");
}

#[cfg(unix)]
#[test]
fn a_fifo_named_as_the_config_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ufo-batch.toml");
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo on a fresh path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for explicit in [true, false] {
        let e = ConfigFile::load(&path, explicit).unwrap_err();
        let why = std::error::Error::source(&e).unwrap().to_string();
        assert_eq!(why, "it is a FIFO, not a regular file", "{e}");
    }
}

#[test]
fn a_price_below_zero_is_refused() {
    let file: ConfigFile =
        toml::from_str("[llm]\nmodel = \"m\"\n[llm.prices.m]\ninput = -1\noutput = 0.01").unwrap();
    let e = resolve(overrides(&["plans"]), file, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("[llm.prices.\"m\"] input is -1"), "{e}");
}

#[test]
fn a_memory_limit_no_command_could_start_under_is_refused() {
    for (memory, ok) in [
        ("1KiB", false),
        ("63MiB", false),
        ("64MiB", true),
        ("none", true),
    ] {
        let file: ConfigFile =
            toml::from_str(&format!("[sandbox]\nmemory = \"{memory}\"")).unwrap();
        let resolved = resolve(overrides(&["plans"]), file, None);
        assert_eq!(resolved.is_ok(), ok, "{memory}");
        if let Err(e) = resolved {
            assert!(
                e.to_string()
                    .contains("too little for any command to start"),
                "{e}"
            );
        }
    }
}

#[test]
fn a_command_timeout_cap_below_the_command_timeout_is_refused() {
    let file: ConfigFile =
        toml::from_str("[executor]\ncommand_timeout = \"5s\"\nmax_command_timeout = \"1s\"")
            .unwrap();
    let e = resolve(overrides(&["plans"]), file, None).unwrap_err();
    assert!(
        e.to_string()
            .contains("max_command_timeout (1s) is below the command timeout (5s)"),
        "{e}"
    );
    // Without a cap of its own, a long command timeout raises the default cap.
    let file: ConfigFile = toml::from_str("[executor]\ncommand_timeout = \"20m\"").unwrap();
    let c = resolve(overrides(&["plans"]), file, None).unwrap();
    assert_eq!(c.shell.max_command_timeout, Duration::from_secs(1200));
}

/// The config of `toml`, resolved with `--mode` `mode`.
fn operator_config(
    toml_text: &str,
    mode: Option<&str>,
) -> Result<crate::batch::RunSettings, ConfigError> {
    let file: ConfigFile = toml::from_str(toml_text).unwrap();
    let mut o = overrides(&["plans"]);
    o.mode = mode.map(|m| m.parse().unwrap());
    resolve(o, file, None)
}

#[test]
fn the_operator_section_names_its_provider_tool_and_endpoint() {
    let c = operator_config(
        "[operator]\nprovider = \"anthropic\"\nmodel = \"claude-x\"\ntool = \"computer_20251124\"\nkeep_screenshots = 5\nsafety_checks = \"refuse\"\n",
        Some("operator"),
    )
    .unwrap();
    let (settings, llm) = c.operator.unwrap();
    assert_eq!(settings.provider.version(), "computer_20251124");
    assert_eq!(settings.keep_screenshots, 5);
    assert_eq!(settings.safety_checks, crate::agent::SafetyPolicy::Refuse);
    assert_eq!(llm.endpoint(), "https://api.anthropic.com/v1/messages");
    assert_eq!(llm.api_key_env, "ANTHROPIC_API_KEY");
    assert_eq!(llm.beta.as_deref(), Some("computer-use-2025-11-24"));
    let c = operator_config(
        "[operator]\nprovider = \"openai\"\nmodel = \"gpt-5.4\"\nbase_url = \"http://127.0.0.1:9/v1\"\nscaler = [1024, 768]\n",
        None,
    )
    .unwrap();
    let (settings, llm) = c.operator.unwrap();
    assert_eq!(settings.provider.version(), "computer");
    assert_eq!(settings.scaler, Some((1024, 768)));
    assert_eq!(llm.endpoint(), "http://127.0.0.1:9/v1/responses");
    // Without the section, the LLM's settings serve an open model in the default format.
    let c = operator_config("[llm]\nmodel = \"ui-tars\"\n", Some("normal_operator")).unwrap();
    let (settings, llm) = c.operator.unwrap();
    assert_eq!(settings.provider.version(), "ui-tars-1.5");
    assert_eq!(llm.model, "ui-tars");
    assert!(operator_config("", None).unwrap().operator.is_none());
}

#[test]
fn operator_mistakes_name_the_key() {
    for (toml_text, words) in [
        (
            "[operator]\nprovider = \"gemini\"\nmodel = \"m\"\n",
            "[operator] provider \"gemini\"",
        ),
        (
            "[operator]\nprovider = \"openai\"\n",
            "[operator] model is missing",
        ),
        (
            "[operator]\nprovider = \"openai\"\nmodel = \"m\"\ntool = \"computer-preview\"\n",
            "[operator] tool \"computer-preview\"",
        ),
        (
            "[operator]\nprovider = \"anthropic\"\nmodel = \"m\"\nformat = \"qwen3-vl\"\n",
            "[operator] format is for the chat provider",
        ),
        (
            "[operator]\nprovider = \"chat\"\nmodel = \"m\"\nformat = \"llava\"\n",
            "the action formats are ui-tars, ui-tars-1.5",
        ),
        (
            "[operator]\nprovider = \"chat\"\nmodel = \"m\"\ntool = \"computer\"\n",
            "the chat provider takes [operator] format",
        ),
        (
            "[operator]\nmodel = \"m\"\nkeep_screenshots = 0\n",
            "[operator] keep_screenshots must be from 1",
        ),
        (
            "[operator]\nmodel = \"m\"\nscaler = [10, 10]\n",
            "[operator] scaler is [width, height]",
        ),
        (
            "[operator]\nmodel = \"m\"\nbase_url = \"ftp://x\"\n",
            "[operator] base_url \"ftp://x\"",
        ),
        (
            "[operator]\nprovider = \"openai\"\nmodel = \"m\"\nenvironment = \"linux\"\n",
            "[operator] environment is for tool = \"computer_use_preview\"",
        ),
        (
            "[operator]\nprovider = \"openai\"\nmodel = \"m\"\nmax_tokens = 0\n",
            "[operator] max_tokens must be at least 1",
        ),
        (
            "[operator]\nprovider = \"anthropic\"\nmodel = \"m\"\nscaler = [1024, 768]\n",
            "[operator] scaler is UFO's letterbox for OpenAI's operator",
        ),
    ] {
        let e = operator_config(toml_text, None).unwrap_err().to_string();
        assert!(e.contains(words), "{toml_text}: {e}");
    }
    // A mode with no operator configured is refused by the batch, once a task it
    // applies to is there (a run of recorded plans needs none).
    assert!(
        operator_config("", Some("operator"))
            .unwrap()
            .operator
            .is_none()
    );
    let e = operator_config("[run]\nmode = \"robot\"\n", None)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("[run] mode: unknown mode \"robot\""), "{e}");
}
