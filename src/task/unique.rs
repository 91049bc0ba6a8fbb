//! Giving every task file an id of its own that is safe in the run dir: the first file
//! (by path) with an id keeps it and a later one is a duplicate; an id may not take the
//! name of a run-level file (`summary.json`), nor put its results inside another task's
//! folder entries (`a/workspace` when `a` is a task), nor hold what every output of the
//! run masks (its API key, or the key's first or last eight characters): a folder would
//! be named with it, and its record would not match its folder. A file that cannot run
//! still gets a free stand-in id (masked), found in a bounded number of tries, so its
//! error has a place.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::{InvalidTask, Problem, Task, TaskId};

/// The names of the run dir a task id must keep clear of (given by the run dir's owner).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReservedNames<'a> {
    /// Files and folders at the top of a run dir (`run.json`, `summary.json`, ...).
    pub(crate) run_files: &'a [&'a str],
    /// Entries of a task's results folder (`workspace`, `status.json`, ...).
    pub(crate) task_entries: &'a [&'a str],
}

impl ReservedNames<'_> {
    /// Why `id` cannot be used whatever other ids exist: its first segment names a
    /// run-level file.
    fn run_file(&self, id: &TaskId) -> Option<&str> {
        let first = id.segments().next()?;
        self.run_files.iter().copied().find(|f| *f == first)
    }

    /// `id` with every segment that could collide made safe: a run-level name at the
    /// top, a task entry name below it (a `_` is appended).
    fn defused(&self, id: &TaskId) -> TaskId {
        // A secret in an id would name a folder of the run dir with it.
        let id = &match crate::secrets::scrub(id.as_str()) {
            Cow::Owned(masked) => TaskId::sanitized(&masked),
            Cow::Borrowed(_) => id.clone(),
        };
        let segments: Vec<String> = id
            .segments()
            .enumerate()
            .map(|(i, s)| {
                let names = if i == 0 {
                    self.run_files
                } else {
                    self.task_entries
                };
                if names.contains(&s) {
                    format!("{s}_")
                } else {
                    s.to_string()
                }
            })
            .collect();
        TaskId::parse(&segments.join("/")).unwrap_or_else(|_| id.clone())
    }
}

/// What the loader keeps of a valid task needs to say which it is.
pub(crate) trait Identified {
    /// The task's id.
    fn id(&self) -> &TaskId;
    /// Its task file.
    fn source(&self) -> &Path;
    /// The hash of the task file's bytes.
    fn source_hash(&self) -> String;
}

impl Identified for Task {
    fn id(&self) -> &TaskId {
        &self.id
    }
    fn source(&self) -> &Path {
        &self.source
    }
    fn source_hash(&self) -> String {
        self.source_hash.clone()
    }
}

/// Makes the ids of `tasks` and `invalid` unique and safe; tasks whose id cannot be
/// kept become invalid with the reason.
pub(super) fn unique_ids<T: Identified>(
    mut tasks: Vec<T>,
    mut invalid: Vec<InvalidTask>,
    reserved: ReservedNames<'_>,
) -> (Vec<T>, Vec<InvalidTask>) {
    // Each id's owner, by its place in `tasks` (a million tasks' paths are not copied).
    let mut owners: HashMap<TaskId, usize> = HashMap::with_capacity(tasks.len());
    // The tasks that cannot keep their id, by place, with why (they move out at the end,
    // so that the batch is never copied).
    let mut refused: Vec<(usize, Problem)> = Vec::new();
    for (i, task) in tasks.iter().enumerate() {
        let problem = if crate::secrets::holds_secret(task.id().as_str()) {
            Some(
                Problem::new(
                    task.source(),
                    "the id holds the API key in the run's environment, or its first or \
                     last 8 characters, which every output masks: it would name its results \
                     folder",
                )
                .fix("rename the file or set an \"id\" without the key"),
            )
        } else if let Some(name) = reserved.run_file(task.id()) {
            Some(
                Problem::new(
                    task.source(),
                    format!(
                        "the id `{}` is the name of the run folder's own `{name}`",
                        task.id()
                    ),
                )
                .fix("rename the file or set an \"id\" that is not a results file name"),
            )
        } else {
            owners.get(task.id()).map(|first| {
                Problem::new(
                    task.source(),
                    format!(
                        "duplicate id `{}`: {} has it too",
                        task.id(),
                        tasks[*first].source().display()
                    ),
                )
                .fix("give one of the two files a different \"id\"")
            })
        };
        match problem {
            Some(problem) => refused.push((i, problem)),
            None => {
                owners.insert(task.id().clone(), i);
            }
        }
    }
    let clashing: Vec<usize> = tasks
        .iter()
        .enumerate()
        .filter(|(i, t)| {
            owners.get(t.id()) == Some(i) && clashing_entry(t.id(), &owners, reserved).is_some()
        })
        .map(|(i, _)| i)
        .collect();
    for i in clashing {
        let task = &tasks[i];
        owners.remove(task.id());
        let entry = clashing_entry(task.id(), &owners, reserved).unwrap_or_default();
        let problem = Problem::new(
            task.source(),
            format!(
                "the id `{}` would put this task's results inside another task's `{entry}`",
                task.id()
            ),
        )
        .fix("rename the file or set an \"id\" that does not end in a results file name");
        refused.push((i, problem));
    }
    if !refused.is_empty() {
        refused.sort_by_key(|(i, _)| *i);
        let places: Vec<usize> = refused.iter().map(|(i, _)| *i).collect();
        let mut next = places.into_iter().peekable();
        let mut place = 0;
        let moved = tasks.extract_if(.., |_| {
            let out = next.next_if_eq(&place).is_some();
            place += 1;
            out
        });
        for (task, (_, problem)) in moved.zip(refused) {
            invalid.push(InvalidTask::of(&task, problem));
        }
    }
    if !invalid.is_empty() {
        invalid.sort_by(|a, b| a.source.cmp(&b.source));
        let mut taken = Taken::new(owners.into_keys(), reserved);
        for bad in &mut invalid {
            bad.id = taken.stand_in(&bad.id);
        }
    }
    (tasks, invalid)
}

/// The entry name through which `id` would land inside another kept task's folder.
fn clashing_entry(
    id: &TaskId,
    owners: &HashMap<TaskId, usize>,
    reserved: ReservedNames<'_>,
) -> Option<String> {
    let segments: Vec<&str> = id.segments().collect();
    (1..segments.len()).find_map(|i| {
        let prefix = TaskId::parse(&segments[..i].join("/")).ok()?;
        (reserved.task_entries.contains(&segments[i]) && owners.contains_key(&prefix))
            .then(|| segments[i].to_string())
    })
}

/// The ids taken so far, and the folders that may not become a task's (they hold
/// another task's results below one of its entry names).
struct Taken<'a> {
    ids: HashSet<TaskId>,
    below_entries: HashSet<String>,
    reserved: ReservedNames<'a>,
}

impl<'a> Taken<'a> {
    fn new(ids: impl Iterator<Item = TaskId>, reserved: ReservedNames<'a>) -> Self {
        let mut taken = Self {
            ids: HashSet::new(),
            below_entries: HashSet::new(),
            reserved,
        };
        for id in ids {
            taken.insert(id);
        }
        taken
    }

    fn insert(&mut self, id: TaskId) {
        let segments: Vec<&str> = id.segments().collect();
        for i in 1..segments.len() {
            if self.reserved.task_entries.contains(&segments[i]) {
                self.below_entries.insert(segments[..i].join("/"));
            }
        }
        self.ids.insert(id);
    }

    fn free(&self, id: &TaskId) -> bool {
        !self.ids.contains(id) && !self.below_entries.contains(id.as_str())
    }

    /// A free id for an invalid file that wanted `wanted`: its defused form, then with
    /// `.dup2`, `.dup3`, ... on the last segment. Each try either succeeds or takes a
    /// name no earlier try took, so this ends after at most `ids.len() + 2` tries.
    fn stand_in(&mut self, wanted: &TaskId) -> TaskId {
        let base = self.reserved.defused(wanted);
        let mut id = base.clone();
        let mut n = 2;
        while !self.free(&id) {
            id = base.with_suffix(&format!(".dup{n}"));
            n += 1;
        }
        self.insert(id.clone());
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    const RESERVED: ReservedNames<'static> = ReservedNames {
        run_files: &["run.json", "summary.json"],
        task_entries: &["workspace", "status.json"],
    };

    fn task(id: &str) -> Task {
        Task::new(
            TaskId::parse(id).unwrap(),
            format!("{id}.json"),
            super::super::TaskShape::SeedRequest,
            "r".into(),
        )
    }

    fn bad(id: &str) -> InvalidTask {
        InvalidTask {
            id: TaskId::parse(id).unwrap(),
            source: PathBuf::from(format!("{id}.json")),
            source_hash: String::new(),
            problems: Vec::new(),
        }
    }

    #[test]
    fn run_file_names_are_refused_and_stand_ins_avoid_them() {
        let (kept, invalid) = unique_ids(vec![task("summary.json"), task("ok")], vec![], RESERVED);
        assert_eq!(kept.len(), 1);
        assert!(
            invalid[0].problems[0]
                .message
                .contains("run folder's own `summary.json`")
        );
        assert_eq!(invalid[0].id.as_str(), "summary.json_");
    }

    #[test]
    fn invalid_files_below_entry_names_get_a_stand_in_at_once() {
        // Once an endless loop: every `.dupN` of `x/workspace/y` still had `workspace`.
        let (_, invalid) = unique_ids(
            vec![task("x")],
            vec![bad("x/workspace/y"), bad("x/workspace/y"), bad("x")],
            RESERVED,
        );
        let ids: Vec<&str> = invalid.iter().map(|b| b.id.as_str()).collect();
        assert_eq!(ids, ["x/workspace_/y", "x/workspace_/y.dup2", "x.dup2"]);
    }

    #[test]
    fn an_invalid_file_cannot_own_a_folder_that_holds_another_task() {
        let (kept, invalid) = unique_ids(vec![task("a/workspace/t")], vec![bad("a")], RESERVED);
        assert_eq!(kept.len(), 1, "no task `a`, so `a/workspace/t` is fine");
        assert_eq!(invalid[0].id.as_str(), "a.dup2");
    }
}
