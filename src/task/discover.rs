//! Finding task files: every `*.json` under a folder given, recursively, sorted by path,
//! or a file given by name (an OSWorld suite standing for its tasks). What a path that is a run dir of an earlier run holds is
//! decided by the caller (its recorded plans), not here.

use std::path::{Path, PathBuf};

use super::paths::{PathBlock, folder_as_given};

/// Failures that stop loading altogether (a bad path given by the user).
#[derive(Debug, thiserror::Error)]
pub(crate) enum LoadError {
    /// A path given does not exist.
    #[error("no such file or folder: {0}")]
    Missing(PathBuf),
    /// A folder could not be walked.
    #[error("cannot read {path}")]
    Walk {
        /// The entry that failed.
        path: PathBuf,
        /// Why.
        #[source]
        source: walkdir::Error,
    },
    /// An OSWorld suite that names what is not one of its tasks.
    #[error("{0}")]
    Suite(String),
    /// Nothing to run.
    #[error("no task files (*.json) found under {}", .0.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    Empty(Vec<PathBuf>),
}

impl LoadError {
    /// A walk under `root` failed (at the entry the error names, if it names one).
    pub(crate) fn walk(root: &Path, source: walkdir::Error) -> Self {
        Self::Walk {
            path: source
                .path()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| root.to_path_buf()),
            source,
        }
    }
}

/// UFO's own record of which tasks are done, which it may keep among the task files: a
/// task folder's `tasks_status.json` is not a task.
const UFO_STATUS_FILE: &str = "tasks_status.json";

/// The files found under the paths given, in order: their paths held as one block.
#[derive(Debug, Default)]
pub(crate) struct FoundFiles {
    paths: PathBlock,
    files: Vec<FoundFile>,
}

/// One file found, with the id its path gives.
#[derive(Clone, Debug)]
pub(crate) struct FoundFile {
    /// The file's place in the block of paths (which holds it relative to the folder
    /// given, see [`FoundFile::relative`]).
    pub(crate) at: u32,
    /// The task is the file's folder (a recorded plan's `plan.json`), not the file.
    by_folder: bool,
    /// Found by a symbolic link (to a file): it may be a file found by another path.
    pub(crate) linked: bool,
    /// Why this entry cannot be a task, when that is known before reading it (a folder
    /// that cannot be read, a link that leads nowhere or to a folder).
    pub(crate) problem: Option<Box<str>>,
}

impl FoundFiles {
    /// Adds `path`, found under the folder `root` (its path relative to it names it;
    /// all of it when it is not under `root`).
    pub(crate) fn add(&mut self, root: &Path, path: &Path) -> &mut FoundFile {
        let at = self.paths.push(root, path);
        self.files.push(FoundFile {
            at,
            by_folder: false,
            linked: false,
            problem: None,
        });
        self.files.last_mut().expect("just added")
    }

    /// Adds a file given itself: its name names it.
    fn add_given(&mut self, path: &Path) -> &mut FoundFile {
        self.add(folder_as_given(path), path)
    }

    /// How many files.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.files.len()
    }

    /// No file.
    pub(crate) fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Some file was found by a symbolic link.
    pub(crate) fn any_linked(&self) -> bool {
        self.files.iter().any(|f| f.linked)
    }

    /// Each file's path relative to the folder given (what names it).
    #[cfg(test)]
    pub(crate) fn relatives(&self) -> Vec<String> {
        self.files
            .iter()
            .map(|f| f.relative(&self.paths).display().to_string())
            .collect()
    }

    /// Adds the files of `other`, after these.
    pub(crate) fn append(&mut self, other: FoundFiles) {
        if self.files.is_empty() {
            *self = other;
            return;
        }
        let base = self.paths.append(other.paths);
        self.files
            .extend(other.files.into_iter().map(|f| FoundFile {
                at: f.at + base,
                ..f
            }));
    }

    /// Keeps the files `keep` says yes to (their paths stay in the block).
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&Path, &FoundFile) -> bool) {
        let paths = &self.paths;
        self.files.retain(|f| keep(&paths.get(f.at), f));
    }

    /// Lets go of room not used.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.paths.shrink_to_fit();
        self.files.shrink_to_fit();
    }

    /// The block of paths and the files.
    pub(crate) fn into_parts(self) -> (PathBlock, Vec<FoundFile>) {
        (self.paths, self.files)
    }
}

impl FoundFile {
    /// The task is the file's folder, not the file.
    pub(crate) fn by_folder(&mut self) -> &mut Self {
        self.by_folder = true;
        self
    }

    /// With what cannot be a task about it.
    fn with_problem(&mut self, problem: Option<String>, linked: bool) {
        self.problem = problem.map(String::into_boxed_str);
        self.linked = linked;
    }

    /// The path relative to the folder given (the file name for a file given; the
    /// file's folder for a task that is its folder), its path being in `paths`.
    pub(crate) fn relative<'a>(&self, paths: &'a PathBlock) -> &'a Path {
        let mut parts = paths.relative(self.at).components();
        if self.by_folder {
            parts.next_back();
        }
        parts.as_path()
    }
}

/// Every task file under `root` (a file, or a folder searched recursively), sorted by
/// path. Hidden files and folders are skipped, and so is `exclude` (the results root,
/// when it lies inside a task folder). An entry that cannot be searched or read is
/// found too, with its problem, so that it gets a result of its own and the rest runs.
/// Symbolic links to files are followed; links to folders are not (one could lead to
/// `/`), and each is reported.
pub(crate) fn discover(root: &Path, exclude: Option<&Path>) -> Result<FoundFiles, LoadError> {
    let meta = std::fs::metadata(root).map_err(|_| LoadError::Missing(root.to_path_buf()))?;
    if !meta.is_dir() {
        let mut found = FoundFiles::default();
        // An OSWorld suite stands for its tasks, named as its `examples` folder names
        // them (`os/<id>`); one that is missing is found with its problem.
        if let Some((examples, files)) =
            super::osworld::suite::tasks_of(root).map_err(LoadError::Suite)?
        {
            for file in files {
                let problem = (!file.is_file())
                    .then(|| "the suite names this task, and its file is not there".to_string());
                found.add(&examples, &file).with_problem(problem, false);
            }
            return Ok(found);
        }
        found.add_given(root);
        return Ok(found);
    }
    let exclude = exclude.and_then(|p| p.canonicalize().ok());
    let walker = walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let hidden = e.depth() > 0 && e.file_name().to_string_lossy().starts_with('.');
            let excluded = exclude.as_ref().is_some_and(|x| {
                e.file_type().is_dir() && e.path().canonicalize().is_ok_and(|p| &p == x)
            });
            !hidden && !excluded
        });
    let mut found = FoundFiles::default();
    // Whether the folder last seen holds an OSWorld `examples` folder: its suite files
    // (`test_all.json`) list tasks the walk finds there anyway, and are no tasks.
    let mut suites_beside: Option<(PathBuf, bool)> = None;
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                let path = e.path().unwrap_or(root);
                let why = e
                    .io_error()
                    .map_or_else(|| e.to_string(), ToString::to_string);
                let problem = Some(format!("cannot search this folder: {why}"));
                found.add(root, path).with_problem(problem, false);
                continue;
            }
        };
        let is_json = entry
            .path()
            .extension()
            .is_some_and(|x| x.eq_ignore_ascii_case("json"))
            && entry.file_name() != UFO_STATUS_FILE;
        let kind = entry.file_type();
        let problem = if kind.is_symlink() {
            match std::fs::metadata(entry.path()) {
                Ok(target) if target.is_dir() => Some(
                    "a symbolic link to a folder is not followed; give the folder itself to run its tasks"
                        .to_string(),
                ),
                Ok(_) if is_json => None,
                Err(e) if is_json => Some(format!("the symbolic link leads nowhere usable: {e}")),
                _ => continue,
            }
        } else if is_json && !kind.is_dir() {
            let parent = entry.path().parent().unwrap_or(root);
            let beside = match &suites_beside {
                Some((folder, beside)) if folder == parent => *beside,
                _ => {
                    let beside = parent.join(super::osworld::suite::EXAMPLES).is_dir();
                    suites_beside = Some((parent.to_path_buf(), beside));
                    beside
                }
            };
            if beside && super::osworld::suite::is_suite(entry.path()) {
                continue;
            }
            None
        } else {
            continue;
        };
        let linked = kind.is_symlink();
        found.add(root, entry.path()).with_problem(problem, linked);
    }
    Ok(found)
}
