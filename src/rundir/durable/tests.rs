//! Tests of the group commit and of files put in place together: each file its old or
//! its new version, and a folder gone named.

use super::*;
use crate::rundir::atomic::stage;

#[test]
fn staged_files_take_their_place_in_groups_and_flush_waits_for_them() {
    let dir = tempfile::tempdir().unwrap();
    let committer = Committer::start();
    for i in 0..20 {
        let path = dir.path().join(format!("t{i}/status.json"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "old").unwrap();
        let staged = stage(&path, b"new").unwrap();
        committer.commit(Pending {
            staged,
            written: Vec::new(),
        });
    }
    committer.flush();
    for i in 0..20 {
        let path = dir.path().join(format!("t{i}/status.json"));
        assert_eq!(std::fs::read_to_string(path).unwrap(), "new");
    }
    assert!(committer.errors().is_empty());
    // No staged file is left behind.
    for i in 0..20 {
        let left = std::fs::read_dir(dir.path().join(format!("t{i}")))
            .unwrap()
            .count();
        assert_eq!(left, 1);
    }
}

#[test]
fn files_put_in_place_together_replace_their_old_versions_and_leave_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("summary.csv");
    std::fs::write(&old, "old").unwrap();
    let staged = ["summary.csv", "report.md", "sub/junit.xml"]
        .map(|name| {
            crate::rundir::atomic::stage_with(&dir.path().join(name), |out| {
                out.write_all(name.as_bytes())
            })
            .unwrap()
        })
        .into();
    // Nothing is in place before they all are.
    assert_eq!(std::fs::read_to_string(&old).unwrap(), "old");
    put_in_place(staged).unwrap();
    for name in ["summary.csv", "report.md", "sub/junit.xml"] {
        assert_eq!(
            std::fs::read_to_string(dir.path().join(name)).unwrap(),
            name
        );
    }
    assert_eq!(
        crate::testutil::names_in(dir.path()),
        ["report.md", "sub", "summary.csv"]
    );
}

#[test]
fn a_file_put_in_place_whose_folder_went_is_an_error_naming_it_and_the_rest_are_placed() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("gone/report.md");
    let kept = dir.path().join("summary.json");
    let staged = vec![
        crate::rundir::atomic::stage_with(&gone, |out| out.write_all(b"x")).unwrap(),
        crate::rundir::atomic::stage_with(&kept, |out| out.write_all(b"y")).unwrap(),
    ];
    std::fs::remove_dir_all(gone.parent().unwrap()).unwrap();
    let errors = put_in_place(staged).unwrap_err().to_string();
    assert!(errors.contains("gone/report.md"), "{errors}");
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "y");
}

#[test]
fn a_staged_file_whose_folder_went_is_an_error_and_the_rest_commit() {
    let dir = tempfile::tempdir().unwrap();
    let committer = Committer::start();
    let gone = dir.path().join("gone/status.json");
    std::fs::create_dir_all(gone.parent().unwrap()).unwrap();
    let staged = stage(&gone, b"x").unwrap();
    std::fs::remove_dir_all(gone.parent().unwrap()).unwrap();
    committer.commit(Pending {
        staged,
        written: Vec::new(),
    });
    let kept = dir.path().join("status.json");
    committer.commit(Pending {
        staged: stage(&kept, b"y").unwrap(),
        written: Vec::new(),
    });
    committer.flush();
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "y");
    let errors = committer.errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("gone/status.json"), "{errors:?}");
}
