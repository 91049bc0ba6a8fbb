//! Tests of `task::load`.

use super::*;
use crate::executor::shell_tools;
use crate::rundir::layout::RESERVED_NAMES;
use crate::task::discover;
use std::fs;

fn load(dir: &Path) -> LoadedTasks {
    load_files(discover(dir, None).unwrap(), shell_tools(), RESERVED_NAMES)
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

#[test]
fn finds_json_recursively_sorted_skipping_hidden() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "b.json", "{}");
    write(dir.path(), "a/z.json", "{}");
    write(dir.path(), "a/y.JSON", "{}");
    write(dir.path(), ".git/x.json", "{}");
    write(dir.path(), "notes.txt", "");
    let found = discover(dir.path(), None).unwrap();
    assert_eq!(found.relatives(), ["a/y.JSON", "a/z.json", "b.json"]);
}

#[test]
fn excludes_the_results_folder() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "t.json", "{}");
    write(dir.path(), "results/run/t/status.json", "{}");
    let found = discover(dir.path(), Some(&dir.path().join("results"))).unwrap();
    assert_eq!(found.len(), 1);
}

#[test]
fn a_missing_path_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = discover(&dir.path().join("nope"), None).unwrap_err();
    assert!(err.to_string().starts_with("no such file or folder"));
}

#[test]
fn duplicate_ids_keep_the_first_and_report_the_second() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.json", r#"{"request": "r", "actions": []}"#);
    write(
        dir.path(),
        "b.json",
        r#"{"id": "a", "request": "r", "actions": []}"#,
    );
    write(dir.path(), "c.json", "{broken");
    let loaded = load(dir.path());
    assert_eq!(loaded.tasks.len(), 1);
    assert_eq!(loaded.tasks[0].source, dir.path().join("a.json"));
    assert_eq!(loaded.invalid.len(), 2);
    let dup = &loaded.invalid[0];
    assert_eq!(dup.id.as_str(), "a.dup2");
    assert!(
        dup.problems[0].message.contains("duplicate id `a`"),
        "{}",
        dup.problems[0]
    );
    assert_eq!(loaded.invalid[1].id.as_str(), "c");
}

#[test]
fn nested_ids_cannot_land_in_reserved_folders() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.json", r#"{"request": "r", "actions": []}"#);
    write(
        dir.path(),
        "a/workspace.json",
        r#"{"request": "r", "actions": []}"#,
    );
    let loaded = load(dir.path());
    assert_eq!(loaded.tasks.len(), 1);
    assert!(
        loaded.invalid[0].problems[0]
            .message
            .contains("inside another task's `workspace`")
    );
    assert_eq!(loaded.invalid[0].id.as_str(), "a/workspace_");
}

/// A file's path relative to the folder given, held as a count of the path's components.
#[test]
fn a_file_found_is_named_by_its_path_under_the_folder_given() {
    let under = |root: &str, path: &str| {
        let mut found = FoundFiles::default();
        found.add(Path::new(root), Path::new(path));
        found.relatives().remove(0)
    };
    assert_eq!(under("plans", "plans/csv/a.json"), "csv/a.json");
    assert_eq!(under("./plans/", "./plans/a.json"), "a.json");
    assert_eq!(under(".", "./a.json"), "a.json");
    assert_eq!(under("/r/x", "/r/x/g/t.json"), "g/t.json");
    assert_eq!(under("elsewhere", "plans/a.json"), "plans/a.json");
    let mut plan = FoundFiles::default();
    plan.add(Path::new("/runs/r"), Path::new("/runs/r/g/t/plan.json"))
        .by_folder();
    assert_eq!(plan.relatives(), ["g/t"]);
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "one.json", "{}");
    let given = discover(&dir.path().join("one.json"), None).unwrap();
    assert_eq!(given.relatives(), ["one.json"]);
}
