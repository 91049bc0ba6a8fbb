//! Where the paths an OSWorld task names may lead: into the task's desktop and no
//! further. A file of the desktop (`open`'s `path`, a download's `path`, `vm_file`'s
//! `path`) is under `/home/user` (the task's home) or `/tmp` (the desktop's own), or
//! relative to OSWorld's server folder, which is the desktop's too; a file of OSWorld's
//! cache (`dest`, an `execute` step's `stdout`) is a plain relative name inside the
//! task's cache folder. `..` leads nowhere. Commands (`execute`, `vm_command_line`) are
//! not paths: they run with the task's rights, in its jail.

use serde_json::Value;

use super::{Getter, Step};

/// How to fix a path that leads out.
pub(super) const FIX: &str = "name files of the desktop under /home/user or /tmp (or relative ones), and files of OSWorld's cache by plain relative names, never with `..`";

/// Keys whose values are files of the desktop (or URLs, where a getter fetches one).
const DESKTOP_KEYS: &[&str] = &["path", "paths", "file_path"];
/// Keys whose values are names in the task's cache folder.
const CACHE_KEYS: &[&str] = &["dest", "dests", "local_path"];
/// Getters whose configuration is data, not files (`rule` returns its `rules`).
const DATA_GETTERS: &[&str] = &["rule", "rule_relativeTime"];

/// The paths of a setup step that lead out of the desktop: (place, why).
pub(super) fn of_step(step: &Step) -> Vec<(String, String)> {
    let mut flaws = Vec::new();
    for (key, value) in &step.parameters {
        let place = format!(".{key}");
        // OSWorld writes an `execute` step's output to these names in its cache folder.
        let cache = matches!(key.as_str(), "stdout" | "stderr")
            && matches!(step.kind.as_str(), "execute" | "command");
        if cache {
            if let Value::String(name) = value
                && !name.is_empty()
            {
                check(&place, name, Kind::Cache, &mut flaws);
            }
            continue;
        }
        walk(&place, key, value, &mut flaws);
    }
    flaws
}

/// The paths of a getter's configuration that lead out: (place, why).
pub(super) fn of_getter(getter: &Getter) -> Vec<(String, String)> {
    let mut flaws = Vec::new();
    if DATA_GETTERS.contains(&getter.kind.as_str()) {
        return flaws;
    }
    for (key, value) in &getter.config {
        let place = format!(".{key}");
        // `cache_file` reads a file of the cache by its name.
        if getter.kind == "cache_file" && key == "path" {
            strings(&place, value, &mut |at, s| {
                check(at, s, Kind::Cache, &mut flaws)
            });
            continue;
        }
        walk(&place, key, value, &mut flaws);
    }
    flaws
}

/// What a path names.
#[derive(Clone, Copy)]
enum Kind {
    /// A file of the desktop.
    Desktop,
    /// A name in the task's cache folder.
    Cache,
}

/// Checks the paths under `key` (and, in objects and lists, under their keys).
fn walk(place: &str, key: &str, value: &Value, flaws: &mut Vec<(String, String)>) {
    let kind = if DESKTOP_KEYS.contains(&key) {
        Some(Kind::Desktop)
    } else if CACHE_KEYS.contains(&key) {
        Some(Kind::Cache)
    } else {
        None
    };
    match (value, kind) {
        (Value::String(_) | Value::Array(_), Some(kind))
            if value
                .as_array()
                .is_none_or(|a| a.iter().all(Value::is_string)) =>
        {
            strings(place, value, &mut |at, s| check(at, s, kind, flaws));
        }
        (Value::Object(object), _) => {
            for (k, v) in object {
                walk(&format!("{place}.{k}"), k, v, flaws);
            }
        }
        (Value::Array(items), _) => {
            for (i, v) in items.iter().enumerate() {
                walk(&format!("{place}[{i}]"), key, v, flaws);
            }
        }
        _ => {}
    }
}

/// Calls `each` with every string of `value` (one, or a list of them) and its place.
fn strings(place: &str, value: &Value, each: &mut dyn FnMut(&str, &str)) {
    match value {
        Value::String(s) => each(place, s),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                if let Value::String(s) = item {
                    each(&format!("{place}[{i}]"), s);
                }
            }
        }
        _ => {}
    }
}

/// Adds a flaw when `path` (of `kind`) leads out.
fn check(place: &str, path: &str, kind: Kind, flaws: &mut Vec<(String, String)>) {
    if let Err(why) = leads(path, kind) {
        flaws.push((place.to_string(), format!("{path:?} {why}")));
    }
}

/// `Err` says where `path` would lead, when it leads out.
fn leads(path: &str, kind: Kind) -> Result<(), String> {
    if is_url(path) && matches!(kind, Kind::Desktop) {
        return Ok(());
    }
    if path.is_empty() {
        return Err("is empty".into());
    }
    if path.contains('\0') {
        return Err("holds a NUL byte".into());
    }
    let parts: Vec<&str> = path.split('/').collect();
    if parts.contains(&"..") {
        return Err("goes up with `..`, out of the task's desktop".into());
    }
    match kind {
        Kind::Cache if path.starts_with('/') || path.starts_with('~') => {
            Err("is not a name inside the task's cache folder".into())
        }
        Kind::Cache => Ok(()),
        Kind::Desktop => {
            let named: Vec<&str> = parts
                .iter()
                .copied()
                .filter(|p| !p.is_empty() && *p != ".")
                .collect();
            if path.starts_with('~') {
                return match parts[0] {
                    "~" => Ok(()),
                    other => Err(format!("is {other}'s home, not the task's (~)")),
                };
            }
            if !path.starts_with('/') {
                return Ok(());
            }
            match named.as_slice() {
                ["tmp", ..] | ["home", "user", ..] => Ok(()),
                _ => Err("is outside /home/user and /tmp, the task's desktop".into()),
            }
        }
    }
}

/// An `http(s)://` address (a getter downloads it; the runner only looks in the cache).
fn is_url(path: &str) -> bool {
    let lower = path.get(..8).unwrap_or(path).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_desktops_folders_and_plain_cache_names_are_taken() {
        for ok in [
            "/home/user/a.xlsx",
            "/home/user",
            "/tmp/test_files/x",
            "~/Desktop/x",
            "~",
            "eval.sh",
            "https://example.invalid/a/../b",
        ] {
            assert_eq!(leads(ok, Kind::Desktop), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("/etc/passwd", "outside /home/user and /tmp"),
            ("/home/other/x", "outside"),
            ("/home/user/../../etc/shadow", "`..`"),
            ("../secret", "`..`"),
            ("~root/.ssh/id_rsa", "~root's home"),
            ("/homeuser/x", "outside"),
            ("", "empty"),
        ] {
            let e = leads(bad, Kind::Desktop).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        assert_eq!(leads("gold.xlsx", Kind::Cache), Ok(()));
        assert_eq!(leads("sub/gold.xlsx", Kind::Cache), Ok(()));
        for bad in ["/tmp/x", "../x", "a/../../x", "~/x"] {
            assert!(leads(bad, Kind::Cache).is_err(), "{bad}");
        }
    }
}
