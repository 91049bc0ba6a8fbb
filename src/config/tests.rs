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
