//! Finding the file a UFO task is about (its `object`). UFO's layout keeps task files in
//! `PROJECT/tasks/` and their documents in `PROJECT/files/`: the object is looked up in
//! the `files` folder beside the task file's own `tasks` folder (UFO replaces every
//! `tasks` in the whole path, so a project under a folder named `tasks` silently loses
//! its files; here only the task file's folder counts), or beside the task file itself,
//! or at an absolute path (as recorded plans write it). An object with no extension
//! names an application, not a file.

use std::path::{Path, PathBuf};

/// The folder UFO keeps task files in.
const TASKS: &str = "tasks";
/// The folder beside it that UFO keeps task files' documents in.
const FILES: &str = "files";

/// The file `object` of the task file at `task_file` names, when it names a file;
/// otherwise why it cannot be found, in words.
pub(crate) fn locate_object(task_file: &Path, object: &str) -> Result<Option<PathBuf>, String> {
    let object = object.trim();
    if object.is_empty() {
        return Ok(None);
    }
    let given = Path::new(object);
    if given.is_absolute() {
        return match given.is_file() {
            true => Ok(Some(given.to_path_buf())),
            false => Err(format!("the object `{object}` is not a file")),
        };
    }
    let Some(name) = given.file_name() else {
        return Err(format!("the object `{object}` does not name a file"));
    };
    let task_dir = std::path::absolute(task_file)
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_default();
    let mut candidates = Vec::new();
    if task_dir.file_name().is_some_and(|n| n == TASKS)
        && let Some(project) = task_dir.parent()
    {
        candidates.push(project.join(FILES).join(name));
    }
    candidates.push(task_dir.join(given));
    let found: Vec<&PathBuf> = candidates.iter().filter(|c| c.is_file()).collect();
    match found.as_slice() {
        [one] => Ok(Some((*one).clone())),
        [a, b] if same_content(a, b) => Ok(Some((*a).clone())),
        [a, b] => Err(format!(
            "the object `{object}` is ambiguous: both {} and {} exist and differ",
            a.display(),
            b.display()
        )),
        _ if given.extension().is_none() => Ok(None),
        _ => Err(format!(
            "the object `{object}` is not found: looked for {}",
            candidates
                .iter()
                .map(|c| c.display().to_string())
                .collect::<Vec<_>>()
                .join(" and ")
        )),
    }
}

fn same_content(a: &Path, b: &Path) -> bool {
    match (std::fs::read(a), std::fs::read(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn ufo_layout_only_the_task_files_own_folder_counts() {
        let dir = tempfile::tempdir().unwrap();
        // A project that itself lives under a folder named `tasks` (UFO's bug).
        let project = dir.path().join("tasks/ufo_tasks");
        write(&project.join("files/draft.docx"), "doc");
        let task = project.join("tasks/t.json");
        write(&task, "{}");
        assert_eq!(
            locate_object(&task, "draft.docx").unwrap(),
            Some(project.join("files/draft.docx"))
        );
        let e = locate_object(&task, "missing.docx").unwrap_err();
        assert!(e.contains("is not found: looked for"), "{e}");
        assert_eq!(locate_object(&task, "notepad").unwrap(), None, "an app");
    }

    #[test]
    fn beside_the_task_file_and_ambiguity() {
        let dir = tempfile::tempdir().unwrap();
        let task = dir.path().join("p/tasks/t.json");
        write(&task, "{}");
        write(&dir.path().join("p/tasks/a.txt"), "one");
        assert!(locate_object(&task, "a.txt").unwrap().is_some());
        write(&dir.path().join("p/files/a.txt"), "two");
        assert!(
            locate_object(&task, "a.txt")
                .unwrap_err()
                .contains("ambiguous")
        );
    }
}
