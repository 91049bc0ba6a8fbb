//! Finding the file a UFO task is about (its `object`), and only in the task file's own
//! project. UFO's layout keeps task files in `PROJECT/tasks/` and their documents in
//! `PROJECT/files/`: the object is looked up in the `files` folder beside the task file's
//! own `tasks` folder (UFO replaces every `tasks` in the whole path, so a project under a
//! folder named `tasks` silently loses its files; here only the task file's folder
//! counts), in a `files` folder beside the task file (where a run keeps a task's object
//! beside its `plan.json`), or below the task file's folder. Never at an absolute path,
//! through `..` or through a symbolic link: a task file or plan shared from elsewhere
//! cannot pull a file of the machine into the results. It is opened beneath the folder it
//! is found in, with the task's rights (`confined`). An object with no extension names an
//! application, not a file.

use std::ffi::OsStr;
use std::fs::File;
use std::path::{Path, PathBuf};

use crate::confined::{Confined, Kind};
use crate::regular_file::FileAccessError;
use crate::relpath::{PathError, RelPath};

/// The folder UFO keeps task files in.
const TASKS: &str = "tasks";
/// The folder beside it that UFO keeps task files' documents in (and the one a run keeps
/// a task's object in, beside its `plan.json`: `rundir::layout::FILES`).
const FILES: &str = "files";
/// The largest object read (copied into a workspace, or compared).
pub(crate) const MAX_OBJECT: u64 = 1 << 30;

/// Where an object may come from, for messages.
const WHERE: &str = "objects come only from the task file's own project: PROJECT/files/ \
beside PROJECT/tasks/ (UFO's layout), a files/ folder beside the task file, or below the \
task file's folder";

/// The file a task's `object` names, as found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ObjectFile {
    /// The folder it was found beneath.
    root: PathBuf,
    /// Its path below that folder.
    rel: RelPath,
}

impl ObjectFile {
    /// Its path, for messages.
    pub(crate) fn path(&self) -> PathBuf {
        self.root.join(self.rel.as_path())
    }

    /// Its file name.
    pub(crate) fn name(&self) -> &OsStr {
        self.rel.as_path().file_name().unwrap_or_default()
    }

    /// The file, open to read (beneath its folder, with the task's rights), and its size.
    pub(crate) fn open(&self) -> Result<(File, u64), FileAccessError> {
        Confined::open(&self.root)?.open_file(&self.rel)
    }

    /// Its bytes, when it has at most `limit`.
    pub(crate) fn read(&self, limit: u64) -> Result<Vec<u8>, FileAccessError> {
        let (file, size) = self.open()?;
        crate::regular_file::read_open(file, size, limit, Some(limit)).map(|read| read.bytes)
    }
}

/// Why an object cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ObjectError {
    /// No such file in the places looked at (the task may be about to make it).
    #[error("{0}")]
    NotFound(String),
    /// Named where objects may not come from, through a link, unreadable with the task's
    /// rights, or ambiguous: the task file's fault.
    #[error("{0}")]
    Refused(String),
}

/// The file `object` of the task file at `task_file` names, when it names a file;
/// otherwise why it cannot be used, in words.
pub(crate) fn locate_object(
    task_file: &Path,
    object: &str,
) -> Result<Option<ObjectFile>, ObjectError> {
    locate(task_file, object).map_err(|e| match e {
        Located::Missing(why) => ObjectError::NotFound(why),
        Located::Refused(why) => ObjectError::Refused(why),
    })
}

/// [`locate_object`]'s two kinds of failure, before they are named.
enum Located {
    Missing(String),
    Refused(String),
}

fn locate(task_file: &Path, object: &str) -> Result<Option<ObjectFile>, Located> {
    let object = object.trim();
    if object.is_empty() {
        return Ok(None);
    }
    let rel = match RelPath::parse(object, false) {
        Ok(rel) => rel,
        Err(PathError::Absolute(_)) => {
            return Err(Located::Refused(format!(
                "the object `{object}` is an absolute path; {WHERE} (copy the file there and name it by its file name)"
            )));
        }
        Err(PathError::Escapes(_)) => {
            return Err(Located::Refused(format!(
                "the object `{object}` leaves the task file's folder; {WHERE}"
            )));
        }
        Err(e) => return Err(Located::Refused(format!("the object `{object}`: {e}"))),
    };
    if rel.names().any(|n| n.as_encoded_bytes().starts_with(b".")) {
        // Hidden names are where private things live (`.ssh/id_rsa`, `.aws/credentials`).
        return Err(Located::Refused(format!(
            "the object `{object}` names a hidden file or folder (a name that begins with `.`); {WHERE}"
        )));
    }
    // `files/...` is opened beneath the folder holding `files`, so that `files` itself
    // cannot be a link out of the project either.
    let in_files = RelPath::root().join_name(FILES.as_ref()).join_path(&rel);
    let task_dir = std::path::absolute(task_file)
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_default();
    let mut candidates = Vec::new();
    if task_dir.file_name().is_some_and(|n| n == TASKS)
        && let Some(project) = task_dir.parent()
    {
        candidates.push((project.to_path_buf(), in_files.clone()));
    }
    candidates.push((task_dir.clone(), in_files));
    // Beside the task file: a file name alone, not a path into whatever the folder holds.
    if rel.names().count() == 1 {
        candidates.push((task_dir, rel.clone()));
    }
    let mut found = Vec::new();
    for (root, rel) in candidates {
        if let Some(file) = look(&root, &rel, object)? {
            found.push(file);
        }
    }
    match found.as_slice() {
        [] if rel.as_path().extension().is_none() => Ok(None),
        [] => Err(Located::Missing(format!(
            "the object `{object}` is not found: looked for {}",
            looked_for(task_file, object)
        ))),
        [one] => Ok(Some(one.clone())),
        [a, rest @ ..] => match rest.iter().find(|b| !same_content(a, b)) {
            None => Ok(Some(a.clone())),
            Some(b) => Err(Located::Refused(format!(
                "the object `{object}` is ambiguous: both {} and {} exist and differ",
                a.path().display(),
                b.path().display()
            ))),
        },
    }
}

/// The object at `rel` beneath `root`, when a readable regular file is there.
fn look(root: &Path, rel: &RelPath, object: &str) -> Result<Option<ObjectFile>, Located> {
    let at = root.join(rel.as_path());
    let refused = |e: FileAccessError| {
        Located::Refused(format!(
            "the object `{object}` cannot be read at {}: {e} (objects are read with the task's rights)",
            at.display()
        ))
    };
    let folder = match Confined::open(root) {
        Ok(folder) => folder,
        Err(FileAccessError::NotFound | FileAccessError::NotAFolderOnTheWay) => return Ok(None),
        Err(e) => return Err(refused(e)),
    };
    match folder.kind(rel) {
        Ok(Some(Kind::File)) => {}
        Ok(Some(Kind::Link)) | Err(FileAccessError::Link) => {
            return Err(Located::Refused(format!(
                "the object `{object}` is a symbolic link at {}; objects are not read through links (copy the file there)",
                at.display()
            )));
        }
        Ok(_) | Err(FileAccessError::NotFound | FileAccessError::NotAFolderOnTheWay) => {
            return Ok(None);
        }
        Err(e) => return Err(refused(e)),
    }
    folder.open_file(rel).map_err(refused)?;
    Ok(Some(ObjectFile {
        root: root.to_path_buf(),
        rel: rel.clone(),
    }))
}

/// Where an object named `object` of `task_file` was looked for, in words.
fn looked_for(task_file: &Path, object: &str) -> String {
    let task_dir = task_file.parent().unwrap_or(Path::new("."));
    let mut places = Vec::new();
    if task_dir.file_name().is_some_and(|n| n == TASKS)
        && let Some(project) = task_dir.parent()
    {
        places.push(project.join(FILES).join(object));
    }
    places.push(task_dir.join(FILES).join(object));
    if Path::new(object).components().count() == 1 {
        places.push(task_dir.join(object));
    }
    places
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether two found objects hold the same bytes: their sizes first, then a chunk at a
/// time (two large files are never held whole).
fn same_content(a: &ObjectFile, b: &ObjectFile) -> bool {
    use std::io::Read;
    let (Ok((mut x, x_size)), Ok((mut y, y_size))) = (a.open(), b.open()) else {
        return false;
    };
    if x_size != y_size {
        return false;
    }
    let (mut left, mut right) = (vec![0; 64 << 10], vec![0; 64 << 10]);
    loop {
        let n = match x.read(&mut left) {
            Ok(n) => n,
            Err(_) => return false,
        };
        if n == 0 {
            return y.read(&mut right[..1]).is_ok_and(|m| m == 0);
        }
        if y.read_exact(&mut right[..n]).is_err() || left[..n] != right[..n] {
            return false;
        }
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
        let found = locate_object(&task, "draft.docx").unwrap().unwrap();
        assert_eq!(found.path(), project.join("files/draft.docx"));
        assert_eq!(found.name(), "draft.docx");
        let e = locate_object(&task, "missing.docx").unwrap_err();
        assert!(matches!(e, ObjectError::NotFound(_)), "{e}");
        assert!(e.to_string().contains("is not found: looked for"), "{e}");
        assert_eq!(locate_object(&task, "notepad").unwrap(), None, "an app");
    }

    #[test]
    fn beside_the_task_file_its_files_folder_and_ambiguity() {
        let dir = tempfile::tempdir().unwrap();
        let task = dir.path().join("p/tasks/t.json");
        write(&task, "{}");
        write(&dir.path().join("p/tasks/a.txt"), "one");
        assert!(locate_object(&task, "a.txt").unwrap().is_some());
        write(&dir.path().join("p/files/a.txt"), "two");
        assert!(
            locate_object(&task, "a.txt")
                .unwrap_err()
                .to_string()
                .contains("ambiguous")
        );
        // A run keeps a task's object in files/ beside its plan.json.
        let plan = dir.path().join("results/run/t/plan.json");
        write(&plan, "{}");
        write(&dir.path().join("results/run/t/files/a.txt"), "kept");
        let found = locate_object(&plan, "a.txt").unwrap().unwrap();
        assert_eq!(found.read(100).unwrap(), b"kept");
    }

    /// Nothing outside the project: not an absolute path, not `..`, not a link.
    #[test]
    fn objects_never_come_from_outside_the_project() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret.txt");
        write(&secret, "key");
        let task = dir.path().join("p/tasks/t.json");
        write(&task, "{}");
        let e = locate_object(&task, secret.to_str().unwrap())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("is an absolute path; objects come only from"),
            "{e}"
        );
        let e = locate_object(&task, "../../secret.txt")
            .unwrap_err()
            .to_string();
        assert!(e.contains("leaves the task file's folder"), "{e}");
        #[cfg(unix)]
        {
            std::fs::create_dir_all(dir.path().join("p/files")).unwrap();
            std::os::unix::fs::symlink(&secret, dir.path().join("p/files/linked.txt")).unwrap();
            let e = locate_object(&task, "linked.txt").unwrap_err().to_string();
            assert!(e.contains("is a symbolic link"), "{e}");
            // Not a path into the task file's folder (only a name beside it), and no
            // hidden name anywhere.
            std::os::unix::fs::symlink(dir.path(), dir.path().join("p/tasks/up")).unwrap();
            assert!(matches!(
                locate_object(&task, "up/secret.txt"),
                Err(ObjectError::NotFound(_))
            ));
            write(&dir.path().join("p/tasks/.ssh/id_rsa"), "key");
            let e = locate_object(&task, ".ssh/id_rsa").unwrap_err().to_string();
            assert!(e.contains("names a hidden file or folder"), "{e}");
            // A project whose whole files/ folder is a link out of it.
            let other = dir.path().join("q/tasks/t.json");
            write(&other, "{}");
            std::os::unix::fs::symlink(dir.path(), dir.path().join("q/files")).unwrap();
            let e = locate_object(&other, "secret.txt").unwrap_err().to_string();
            assert!(e.contains("is a symbolic link"), "{e}");
        }
    }
}
