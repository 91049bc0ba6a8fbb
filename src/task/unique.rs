//! Giving every task file an id of its own that is safe in the run dir: the first file
//! (by path) with an id keeps it and a later one is a duplicate; an id may not take the
//! name of a run-level file (`summary.json`), nor put its results inside another task's
//! folder entries (`a/workspace` when `a` is a task), nor hold what every output of the
//! run masks (its API key, or the key's first or last eight characters): a folder would
//! be named with it, and its record would not match its folder. A file that cannot run
//! still gets a free stand-in id (masked), found in a bounded number of tries, so its
//! error has a place.

use std::borrow::Cow;
use std::collections::HashSet;
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
    fn source(&self) -> Cow<'_, Path>;
    /// The hash of the task file's bytes.
    fn source_hash(&self) -> String;
}

impl Identified for Task {
    fn id(&self) -> &TaskId {
        &self.id
    }
    fn source(&self) -> Cow<'_, Path> {
        Cow::Borrowed(&self.source)
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
    // The tasks that cannot keep their id, by place, with why (they move out at the end,
    // so that the batch is never copied).
    let mut refused: Vec<(usize, Problem)> = Vec::new();
    let owners = owners_of_ids(&tasks, reserved, &mut refused);
    refuse_clashing(&tasks, owners, reserved, &mut refused);
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
        // Every task left owns its id.
        invalid.sort_by(|a, b| a.source.cmp(&b.source));
        let mut taken = Taken::new(&tasks, reserved);
        for bad in &mut invalid {
            bad.id = taken.stand_in(&bad.id);
        }
    }
    (tasks, invalid)
}

/// The places of the tasks that own their id, sorted by id; the others (a duplicate, or
/// an id that cannot be used at all) go to `refused` with why.
fn owners_of_ids<T: Identified>(
    tasks: &[T],
    reserved: ReservedNames<'_>,
    refused: &mut Vec<(usize, Problem)>,
) -> Vec<u32> {
    // Tasks of one id are side by side in the order by id, the first by path first: it
    // owns the id, unless the id itself cannot be used.
    let by_id = Owners::sorted(tasks, 0..tasks.len());
    let mut owners = Vec::with_capacity(tasks.len());
    for group in by_id.chunk_by(|a, b| tasks[*a as usize].id() == tasks[*b as usize].id()) {
        let first = &tasks[group[0] as usize];
        let unusable = unusable_id(first.id(), reserved);
        for (n, place) in group.iter().map(|p| *p as usize).enumerate() {
            let task = &tasks[place];
            let problem = match &unusable {
                Some((why, fix)) => Problem::new(&task.source(), why.clone()).fix(*fix),
                None if n == 0 => {
                    owners.push(place as u32);
                    continue;
                }
                None => Problem::new(
                    &task.source(),
                    format!(
                        "duplicate id `{}`: {} has it too",
                        task.id(),
                        first.source().display()
                    ),
                )
                .fix("give one of the two files a different \"id\""),
            };
            refused.push((place, problem));
        }
    }
    owners
}

/// Why the id itself cannot be used, and what to do.
fn unusable_id(id: &TaskId, reserved: ReservedNames<'_>) -> Option<(String, &'static str)> {
    if crate::secrets::holds_secret(id.as_str()) {
        return Some((
            "the id holds the API key in the run's environment, or its first or last 8 \
             characters, which every output masks: it would name its results folder"
                .to_string(),
            "rename the file or set an \"id\" without the key",
        ));
    }
    reserved.run_file(id).map(|name| {
        (
            format!("the id `{id}` is the name of the run folder's own `{name}`"),
            "rename the file or set an \"id\" that is not a results file name",
        )
    })
}

/// Refuses the owners whose results folder would lie inside another task's files (an
/// id `a/output.md` beside an id `a`).
fn refuse_clashing<T: Identified>(
    tasks: &[T],
    sorted: Vec<u32>,
    reserved: ReservedNames<'_>,
    refused: &mut Vec<(usize, Problem)>,
) {
    let mut owners = Owners {
        sorted,
        gone: HashSet::new(),
    };
    let mut clashing: Vec<usize> = owners
        .sorted
        .iter()
        .map(|p| *p as usize)
        .filter(|i| clashing_entry(tasks[*i].id(), &owners, tasks, reserved).is_some())
        .collect();
    clashing.sort_unstable();
    for i in clashing {
        let task = &tasks[i];
        owners.gone.insert(i as u32);
        let entry = clashing_entry(task.id(), &owners, tasks, reserved).unwrap_or_default();
        let problem = Problem::new(
            &task.source(),
            format!(
                "the id `{}` would put this task's results inside another task's `{entry}`",
                task.id()
            ),
        )
        .fix("rename the file or set an \"id\" that does not end in a results file name");
        refused.push((i, problem));
    }
}

/// The tasks that own their id, by place in the batch: the places sorted by id, 4 bytes
/// a task (a map of a million ids was the loader's largest allocation).
struct Owners {
    sorted: Vec<u32>,
    /// Places that no longer own their id (it clashes with another task's folder).
    gone: HashSet<u32>,
}

impl Owners {
    /// The places `places` of `tasks`, sorted by id (places of one id in the order given).
    fn sorted<T: Identified>(tasks: &[T], places: std::ops::Range<usize>) -> Vec<u32> {
        let mut sorted: Vec<u32> = places.map(|i| i as u32).collect();
        // Tasks come by path, which is nearly the order by id: a stable sort of runs.
        sorted.sort_by(|a, b| tasks[*a as usize].id().cmp(tasks[*b as usize].id()));
        sorted
    }

    /// The place of the task that owns `id`.
    fn owner<T: Identified>(&self, tasks: &[T], id: &TaskId) -> Option<usize> {
        let at = self
            .sorted
            .binary_search_by(|p| tasks[*p as usize].id().cmp(id))
            .ok()?;
        let place = self.sorted[at];
        (!self.gone.contains(&place)).then_some(place as usize)
    }
}

/// The entry name through which `id` would land inside another kept task's folder.
fn clashing_entry<T: Identified>(
    id: &TaskId,
    owners: &Owners,
    tasks: &[T],
    reserved: ReservedNames<'_>,
) -> Option<String> {
    let segments: Vec<&str> = id.segments().collect();
    (1..segments.len()).find_map(|i| {
        if !reserved.task_entries.contains(&segments[i]) {
            return None;
        }
        let prefix = TaskId::parse(&segments[..i].join("/")).ok()?;
        owners
            .owner(tasks, &prefix)
            .map(|_| segments[i].to_string())
    })
}

/// The ids taken so far (the tasks', each its own, and the stand-ins given), and the
/// folders that may not become a task's (they hold another task's results below one of
/// its entry names).
struct Taken<'a, T> {
    tasks: &'a [T],
    by_id: Owners,
    stand_ins: HashSet<TaskId>,
    below_entries: HashSet<String>,
    reserved: ReservedNames<'a>,
}

impl<'a, T: Identified> Taken<'a, T> {
    fn new(tasks: &'a [T], reserved: ReservedNames<'a>) -> Self {
        let mut taken = Self {
            tasks,
            by_id: Owners {
                sorted: Owners::sorted(tasks, 0..tasks.len()),
                gone: HashSet::new(),
            },
            stand_ins: HashSet::new(),
            below_entries: HashSet::new(),
            reserved,
        };
        for task in tasks {
            taken.below(task.id());
        }
        taken
    }

    /// Notes the folders `id` holds results below.
    fn below(&mut self, id: &TaskId) {
        let segments: Vec<&str> = id.segments().collect();
        for i in 1..segments.len() {
            if self.reserved.task_entries.contains(&segments[i]) {
                self.below_entries.insert(segments[..i].join("/"));
            }
        }
    }

    fn insert(&mut self, id: TaskId) {
        self.below(&id);
        self.stand_ins.insert(id);
    }

    fn free(&self, id: &TaskId) -> bool {
        self.by_id.owner(self.tasks, id).is_none()
            && !self.stand_ins.contains(id)
            && !self.below_entries.contains(id.as_str())
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

impl InvalidTask {
    /// A loaded task that cannot run after all, for `problem`.
    pub(crate) fn of(task: &impl Identified, problem: Problem) -> Self {
        Self {
            id: task.id().clone(),
            source: task.source().into_owned(),
            source_hash: task.source_hash(),
            request: String::new(),
            problems: vec![problem],
            warnings: Vec::new(),
        }
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
            request: String::new(),
            problems: Vec::new(),
            warnings: Vec::new(),
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

    #[test]
    fn of_tasks_that_share_an_id_the_first_by_path_keeps_it() {
        let mut second_b = task("b");
        second_b.source = "z/b.json".into();
        let mut second_a = task("a");
        second_a.source = "y/a.json".into();
        let tasks = vec![task("b"), task("a"), second_b, second_a, task("c")];
        let (kept, invalid) = unique_ids(tasks, vec![], RESERVED);
        let kept: Vec<String> = kept
            .iter()
            .map(|t| t.source.display().to_string())
            .collect();
        assert_eq!(kept, ["b.json", "a.json", "c.json"]);
        let said: Vec<&str> = invalid
            .iter()
            .map(|b| b.problems[0].message.as_str())
            .collect();
        assert_eq!(
            said,
            [
                "duplicate id `a`: a.json has it too",
                "duplicate id `b`: b.json has it too"
            ]
        );
        let ids: Vec<&str> = invalid.iter().map(|b| b.id.as_str()).collect();
        assert_eq!(ids, ["a.dup2", "b.dup2"]);
    }
}
