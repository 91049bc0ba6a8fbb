//! OSWorld's suite files (`evaluation_examples/test_all.json`, `test_small.json`, ...):
//! `{"<domain>": ["<task id>", ...]}`, each task at `examples/<domain>/<id>.json`
//! beside the suite. A suite given as a path stands for its tasks, named
//! `<domain>/<id>` as the folder `examples` names them.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The largest suite file read (OSWorld's are a few kilobytes).
const MAX_SUITE: u64 = 16 << 20;
/// The folder beside a suite that holds its tasks.
pub(crate) const EXAMPLES: &str = "examples";

/// The task files of the suite at `file` (with the folder they are named under), or
/// `None` when the file is not an OSWorld suite; `Err` says why a suite cannot be used.
pub(crate) fn tasks_of(file: &Path) -> Result<Option<(PathBuf, Vec<PathBuf>)>, String> {
    let Some(folder) = file.parent() else {
        return Ok(None);
    };
    let examples = folder.join(EXAMPLES);
    if !examples.is_dir() {
        return Ok(None);
    }
    let Ok(text) = crate::regular_file::read_named_text(file, MAX_SUITE) else {
        return Ok(None);
    };
    let Ok(Value::Object(domains)) = serde_json::from_str::<Value>(&text) else {
        return Ok(None);
    };
    let is_suite = !domains.is_empty()
        && domains.values().all(|v| {
            v.as_array()
                .is_some_and(|ids| ids.iter().all(Value::is_string))
        });
    if !is_suite {
        return Ok(None);
    }
    let mut files = Vec::new();
    for (domain, ids) in &domains {
        for id in ids
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            for part in [domain.as_str(), id] {
                if part.is_empty() || part.starts_with('.') || part.contains(['/', '\\', '\0']) {
                    return Err(format!(
                        "the suite {} names {domain:?}/{id:?}, which is not a task of its {EXAMPLES} folder",
                        file.display()
                    ));
                }
            }
            files.push(examples.join(domain).join(format!("{id}.json")));
        }
    }
    Ok(Some((examples, files)))
}

/// Whether `file` is an OSWorld suite.
pub(crate) fn is_suite(file: &Path) -> bool {
    matches!(tasks_of(file), Ok(Some(_)) | Err(_))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suite_names_its_tasks_by_domain_and_a_task_file_is_not_one() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("examples/os")).unwrap();
        let suite = dir.path().join("test_small.json");
        std::fs::write(&suite, r#"{"os": ["a1", "b2"], "libreoffice_calc": []}"#).unwrap();
        let (root, files) = tasks_of(&suite).unwrap().unwrap();
        assert_eq!(root, dir.path().join("examples"));
        assert_eq!(files, [root.join("os/a1.json"), root.join("os/b2.json")]);
        let task = dir.path().join("task.json");
        std::fs::write(&task, r#"{"task": "hello"}"#).unwrap();
        assert_eq!(tasks_of(&task).unwrap(), None);
        std::fs::write(&suite, r#"{"os": ["../../etc/passwd"]}"#).unwrap();
        let e = tasks_of(&suite).unwrap_err();
        assert!(
            e.contains("which is not a task of its examples folder"),
            "{e}"
        );
    }
}
