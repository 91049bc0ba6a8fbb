//! Helpers shared by unit tests.

/// Polls until process `pid` is gone or a zombie (killed, not yet reaped by init).
/// Returns false if it is still running after about five seconds.
#[cfg(unix)]
pub(crate) async fn wait_gone(pid: i32) -> bool {
    for _ in 0..100 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|s| s.split_whitespace().next());
        if stat.is_empty() || state == Some("Z") {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    false
}

/// The names of what is in `dir`, sorted.
pub(crate) fn names_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("reading a test folder")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

/// A minimal recorded-plan task with id `id`.
pub(crate) fn task(id: &str) -> crate::task::Task {
    use crate::task::{Task, TaskId, TaskShape};
    let id = TaskId::parse(id).expect("a valid test id");
    let request = format!("request of {id}");
    Task::new(
        id.clone(),
        format!("{id}.json"),
        TaskShape::RecordedPlan {
            actions: Vec::new(),
        },
        request,
    )
}

/// A fresh record of a recorded plan with id `id` (request `r`, no file).
pub(crate) fn record(id: &str) -> crate::record::TaskRecord {
    use crate::record::{SessionType, ShapeName, TaskRecord};
    TaskRecord::new(
        crate::task::TaskId::parse(id).expect("a valid test id"),
        String::new(),
        String::new(),
        ShapeName::RecordedPlan,
        SessionType::FollowerSession,
        "r".to_string(),
    )
}

/// An executor that succeeds at everything and remembers what it was asked.
#[derive(Default)]
pub(crate) struct RecordingExecutor {
    pub(crate) commands: Vec<crate::tool::ToolCall>,
}

#[async_trait::async_trait]
impl crate::executor::Executor for RecordingExecutor {
    async fn execute(&mut self, command: &crate::tool::ToolCall) -> crate::tool::ToolResult {
        self.commands.push(command.clone());
        crate::tool::ToolResult::success(
            command,
            "test",
            serde_json::json!({"exit_code": 0, "stdout": ""}),
        )
    }

    async fn shutdown(&mut self) -> Option<String> {
        None
    }
}

/// Sets the access time of the file at `path` (its modification time becomes now: the
/// file has changed since that access, as a file the runner writes then reads back).
#[cfg(target_os = "linux")]
pub(crate) fn set_accessed(path: &std::path::Path, at: std::time::SystemTime) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    let times = std::fs::FileTimes::new()
        .set_accessed(at)
        .set_modified(std::time::SystemTime::now());
    file.set_times(times).unwrap();
}
