//! Tests of tasks held by their files: read again as validated, refused in words when
//! changed, and reads that do not answer left behind.

use std::sync::mpsc;

use super::reader::{on_reader, reader_stuck};
use super::*;

use crate::tool::ToolSpec;

fn tools() -> Arc<[ToolSpec]> {
    crate::executor::all_tools().to_vec().into()
}

/// A read on the reader that does not answer until `release` is sent: its generation,
/// the sender that releases it, and whether it has ended.
fn stuck_read() -> (u64, mpsc::Sender<()>, Arc<std::sync::atomic::AtomicBool>) {
    let (release, blocked) = mpsc::channel::<()>();
    let ended = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let ends = Arc::clone(&ended);
    let generation = on_reader(Box::new(move || {
        let _ = blocked.recv();
        ends.store(true, std::sync::atomic::Ordering::SeqCst);
    }))
    .unwrap();
    (generation, release, ended)
}

fn loaded(dir: &Path, text: &str) -> Task {
    let path = dir.join("t.json");
    std::fs::write(&path, text).unwrap();
    let id = TaskId::parse("t").unwrap();
    parse_task(&path, text, Ok(id), &tools()).result.unwrap()
}

/// `task`, held by its file.
fn by_file(task: Task) -> TaskSource {
    let place = FilePlace::alone(&task.source, tools());
    TaskSource::of(task, Some(place))
}

#[test]
fn a_task_file_is_read_again_as_it_was_validated() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"{"request": "r", "actions": [{"action": "execute_command", "parameters": {"command": "true"}}], "tags": ["x"]}"#;
    let task = loaded(dir.path(), text);
    let source = by_file(task.clone()).repetition(2);
    assert!(matches!(source, TaskSource::File(_)));
    assert_eq!(source.id().as_str(), "t/rep-2");
    assert_eq!(source.source_hash(), task.source_hash);
    let again = source.load_within(Duration::from_secs(5)).unwrap();
    assert_eq!(again.id.as_str(), "t/rep-2");
    assert_eq!(again.repeat, Some(2));
    assert_eq!(again.tags, vec!["x".to_string()]);
    assert_eq!(again.request, "r");
}

#[test]
fn a_file_changed_or_gone_since_it_was_validated_is_refused_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let task = loaded(dir.path(), r#"{"request": "r", "actions": []}"#);
    let source = by_file(task);
    std::fs::write(
        dir.path().join("t.json"),
        r#"{"request": "other", "actions": []}"#,
    )
    .unwrap();
    use crate::tool::{Blame, Blamed};
    let why = source.load_within(Duration::from_secs(5)).unwrap_err();
    assert!(
        why.to_string().contains("changed after the run started"),
        "{why}"
    );
    assert_eq!(why.blame(), Blame::TaskFile);
    std::fs::remove_file(dir.path().join("t.json")).unwrap();
    let why = source.load_within(Duration::from_secs(5)).unwrap_err();
    assert!(
        why.to_string()
            .starts_with("its task file cannot be read again"),
        "{why}"
    );
    assert_eq!(why.blame(), Blame::Environment);
}

#[test]
fn a_request_is_held_whole() {
    let task = Task::new(
        TaskId::parse("request").unwrap(),
        REQUEST_SOURCE,
        super::super::TaskShape::SeedRequest,
        "do it".into(),
    );
    let source = TaskSource::of(task, None);
    assert!(matches!(source, TaskSource::Loaded(_)));
    assert_eq!(
        source.load_within(Duration::from_secs(5)).unwrap().request,
        "do it"
    );
}

#[test]
fn reads_asked_for_ahead_behind_one_that_does_not_answer_are_asked_again() {
    let dir = tempfile::tempdir().unwrap();
    let task = loaded(dir.path(), r#"{"request": "r", "actions": []}"#);
    let source = by_file(task);
    let (generation, release, stuck_ended) = stuck_read();
    // Asked for ahead of its start, queued behind the read that does not answer.
    let ahead = source.begin_load();
    assert!(matches!(ahead, Loading::Reading { .. }));
    reader_stuck(generation);
    let again = ahead.wait(Duration::from_secs(60)).unwrap();
    assert_eq!(again.request, "r");
    // Answered while the stuck read still hangs: asked again of a new reader, not
    // waited for (an event, not a time).
    assert!(!stuck_ended.load(std::sync::atomic::Ordering::SeqCst));
    release.send(()).unwrap();
}

#[test]
fn a_read_stuck_behind_another_files_read_is_asked_again_not_failed() {
    let dir = tempfile::tempdir().unwrap();
    let task = loaded(dir.path(), r#"{"request": "r", "actions": []}"#);
    let source = by_file(task);
    // Another file's read that does not answer, and nobody has said so yet.
    let (_, release, stuck_ended) = stuck_read();
    let again = source
        .begin_load()
        .wait(Duration::from_millis(500))
        .unwrap();
    assert_eq!(again.request, "r");
    // The answer came while the other read was still stuck: it was asked again, not
    // waited for (an event, not a time).
    assert!(!stuck_ended.load(std::sync::atomic::Ordering::SeqCst));
    release.send(()).unwrap();
}

#[test]
fn a_read_that_does_not_answer_is_left_behind_and_the_next_read_gets_a_new_reader() {
    let (release, blocked) = mpsc::channel::<()>();
    let generation = on_reader(Box::new(move || {
        let _ = blocked.recv();
    }))
    .unwrap();
    // What the pool does when a read times out.
    reader_stuck(generation);
    let dir = tempfile::tempdir().unwrap();
    let task = loaded(dir.path(), r#"{"request": "r", "actions": []}"#);
    let source = by_file(task);
    let again = source.load_within(Duration::from_secs(5)).unwrap();
    assert_eq!(again.request, "r");
    release.send(()).unwrap();
}
