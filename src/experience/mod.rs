//! Experience (UFO's `SAVE_EXPERIENCE`, `RAG_EXPERIENCE` and `RAG_DEMONSTRATION`): a
//! run that saves what its tasks did as records in UFO's `experience.yaml`, and gives
//! its agents the records most like their task as examples and tips.
//!
//! This module owns the records (`record`), reading the file (`file`) and adding to it
//! (`append`), the ranking (`index`),
//! how records are shown in a prompt (`examples`), records made from actions without a
//! model (`from_actions`), and a session's steps grouped as UFO's saver groups them
//! (`trajectory`). [`Experience`] is the run's: its save policy, the file it saves to,
//! and the records it retrieves from; [`Recall`] is one task's way into it. Asking the
//! model for a summary is the agents' (`agent::summarizer`); deciding when a task saves
//! is the attempt's.

pub(crate) mod append;
pub(crate) mod examples;
pub(crate) mod file;
pub(crate) mod from_actions;
pub(crate) mod index;
pub(crate) mod record;
pub(crate) mod trajectory;

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use serde::Serialize;

pub(crate) use append::Appended;
pub(crate) use file::ExperienceError;
use index::Library;
use record::{ExperienceRecord, Origin};

use crate::record::{ExampleSource, GivenExample, TaskStatus};

/// UFO's `RAG_EXPERIENCE_RETRIEVED_TOPK` default.
pub(crate) const DEFAULT_TOP_K: usize = 5;
/// The most records given per source and agent.
pub(crate) const MAX_TOP_K: usize = 20;

/// Which tasks save experience (UFO's `SAVE_EXPERIENCE`; `passed` is its `auto`, and
/// `ask` has no meaning unattended).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SaveExperience {
    /// None (UFO's `always_not`).
    #[default]
    Never,
    /// Those that passed.
    Passed,
    /// Every task whose session ran to a verdict (passed, failed or timed out).
    Always,
}

/// A save policy that is none of the policies.
#[derive(Debug, thiserror::Error)]
#[error("`{0}` is not a save policy: give never, passed or always")]
pub(crate) struct UnknownPolicy(String);

impl std::str::FromStr for SaveExperience {
    type Err = UnknownPolicy;
    fn from_str(s: &str) -> Result<Self, UnknownPolicy> {
        match s.trim().to_ascii_lowercase().as_str() {
            "never" | "always_not" => Ok(Self::Never),
            "passed" | "auto" => Ok(Self::Passed),
            "always" => Ok(Self::Always),
            _ => Err(UnknownPolicy(s.to_string())),
        }
    }
}

impl SaveExperience {
    /// True when a task that ended `status` is saved.
    pub(crate) fn saves(self, status: TaskStatus) -> bool {
        match self {
            Self::Never => false,
            Self::Passed => status == TaskStatus::Passed,
            Self::Always => matches!(
                status,
                TaskStatus::Passed | TaskStatus::Failed | TaskStatus::Timeout
            ),
        }
    }
}

/// The experience options of a run, resolved.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct ExperienceSettings {
    /// Which tasks save.
    pub(crate) save: SaveExperience,
    /// The folder saved to (its `experience.yaml`).
    pub(crate) dir: PathBuf,
    /// The folder (or file) retrieved from (`--experience`).
    pub(crate) retrieve: Option<PathBuf>,
    /// Recorded plans used as demonstrations (`--demonstrations`).
    pub(crate) demonstrations: Option<PathBuf>,
    /// Records given per source and agent.
    pub(crate) top_k: usize,
}

impl ExperienceSettings {
    /// True when the run uses experience at all.
    pub(crate) fn is_used(&self) -> bool {
        self.save != SaveExperience::Never
            || self.retrieve.is_some()
            || self.demonstrations.is_some()
    }
}

/// The experience file of `path`: the file itself when it names one, else its
/// `experience.yaml`.
pub(crate) fn file_of(path: &Path) -> PathBuf {
    if path.exists() && !path.is_dir() {
        path.to_path_buf()
    } else {
        path.join(file::FILE_NAME)
    }
}

/// The run's experience: where it saves, and what it retrieves from.
pub(crate) struct Experience {
    save: SaveExperience,
    /// The file saved to.
    saves_to: Option<PathBuf>,
    /// One save at a time in this runner (the file's lock keeps other runners out).
    saving: tokio::sync::Mutex<()>,
    /// Records retrieved from (`--experience`).
    recall: Option<RwLock<Library>>,
    /// The records saved join `recall` (they are the same file).
    grows: bool,
    /// Demonstrations (`--demonstrations`).
    demonstrations: Option<Library>,
    top_k: usize,
    run: String,
}

/// What opening the run's experience has to say (records left out, an empty file).
pub(crate) type Notes = Vec<String>;

impl Experience {
    /// The experience of the run `run` under `settings`, with `demonstrations` (made
    /// from the recorded plans of `--demonstrations`). The files are read, and the
    /// folder saved to made, now: a file that cannot be used stops the run before it
    /// starts, and the folders made for it are removed again.
    pub(crate) fn open(
        settings: &ExperienceSettings,
        run: &str,
        run_dir: &Path,
        demonstrations: Option<Vec<(String, ExperienceRecord)>>,
    ) -> Result<(Self, Notes), ExperienceError> {
        let made = match settings.save {
            SaveExperience::Never => Vec::new(),
            _ => missing_folders(&settings.dir),
        };
        let opened = Self::open_made(settings, run, run_dir, demonstrations);
        if opened.is_err() {
            // Innermost first: only the empty folders this made go.
            for dir in made {
                let _ = std::fs::remove_dir(dir);
            }
        }
        opened
    }

    fn open_made(
        settings: &ExperienceSettings,
        run: &str,
        run_dir: &Path,
        demonstrations: Option<Vec<(String, ExperienceRecord)>>,
    ) -> Result<(Self, Notes), ExperienceError> {
        let began = std::time::Instant::now();
        let mut notes = Notes::new();
        // The file saved to is read now, to refuse it before the run if it cannot be
        // used, and kept for retrieval when it is also the file retrieved from.
        let (saves_to, mut read_already) = if settings.save == SaveExperience::Never {
            (None, None)
        } else {
            let path = saving_folder(&settings.dir, run_dir)?;
            append::check_writable(&path)?;
            let loaded = file::read(&path)?;
            (Some(path), Some(loaded))
        };
        let mut grows = false;
        let recall = match &settings.retrieve {
            None => None,
            Some(dir) => {
                if !dir.exists() {
                    return Err(ExperienceError::Read {
                        path: dir.clone(),
                        source: crate::regular_file::FileAccessError::NotFound,
                    });
                }
                let path = file_of(dir);
                grows = saves_to.as_ref().is_some_and(|s| same_file(s, &path));
                let loaded = match read_already.take().filter(|_| grows) {
                    Some(loaded) => loaded,
                    None => file::read(&path)?,
                };
                if !loaded.skipped.is_empty() {
                    notes.push(format!(
                        "{}: {} left out: {}",
                        path.display(),
                        crate::text::plural(loaded.skipped.len(), "record"),
                        crate::text::shorten(&loaded.skipped.join("; "), 600)
                    ));
                }
                if loaded.records.is_empty() && !grows {
                    notes.push(format!(
                        "{} holds no experience records: tasks are given none from it",
                        path.display()
                    ));
                }
                let records = loaded.records.len();
                let library = Library::new(loaded.records);
                tracing::debug!(
                    records,
                    millis = began.elapsed().as_millis() as u64,
                    "experience read and indexed"
                );
                Some(RwLock::new(library))
            }
        };
        Ok((
            Self {
                save: settings.save,
                saves_to,
                saving: tokio::sync::Mutex::new(()),
                recall,
                grows,
                demonstrations: demonstrations.map(Library::new),
                top_k: settings.top_k.clamp(1, MAX_TOP_K),
                run: run.to_string(),
            },
            notes,
        ))
    }

    /// True when a task that ended `status` saves.
    pub(crate) fn saves(&self, status: TaskStatus) -> bool {
        self.saves_to.is_some() && self.save.saves(status)
    }

    /// The run's name, as records say where they came from.
    pub(crate) fn run(&self) -> &str {
        &self.run
    }

    /// Saves `records`, all of the task `origin` names (unless that task was saved
    /// by this run already); records saved join what later tasks retrieve when the run
    /// retrieves from the same file. It waits for another writer (a task of this run,
    /// another runner) at most `wait`.
    pub(crate) async fn save(
        &self,
        origin: &Origin,
        records: Vec<ExperienceRecord>,
        wait: std::time::Duration,
    ) -> Result<Appended, ExperienceError> {
        let Some(path) = self.saves_to.clone() else {
            return Ok(Appended::Saved(Vec::new()));
        };
        let until = std::time::Instant::now() + wait;
        let Ok(_one) = tokio::time::timeout(wait, self.saving.lock()).await else {
            return Err(ExperienceError::Write {
                path,
                source: std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "other tasks of this run were saving to it for as long as the task could wait; nothing was added",
                ),
            });
        };
        let appended = {
            let (origin, records) = (origin.clone(), records.clone());
            tokio::task::spawn_blocking(move || append::append(&path, &origin, &records, until))
                .await
                .map_err(|e| ExperienceError::Write {
                    path: self.saves_to.clone().unwrap_or_default(),
                    source: std::io::Error::other(e.to_string()),
                })??
        };
        if let (Appended::Saved(keys), true, Some(recall)) = (&appended, self.grows, &self.recall) {
            let mut library = recall.write().unwrap_or_else(|p| p.into_inner());
            for (key, record) in keys.iter().zip(records) {
                library.add(key.clone(), record);
            }
        }
        Ok(appended)
    }
}

/// The folders of `dir` (itself first, then its parents) that do not exist yet.
fn missing_folders(dir: &Path) -> Vec<PathBuf> {
    dir.ancestors()
        .filter(|a| !a.as_os_str().is_empty())
        .take_while(|a| std::fs::symlink_metadata(a).is_err())
        .map(Path::to_path_buf)
        .collect()
}

/// The experience file in `dir`, the folder saved to, made: never a run folder or in
/// one (`--fresh` deletes a run folder whole), and not a file.
fn saving_folder(dir: &Path, run_dir: &Path) -> Result<PathBuf, ExperienceError> {
    let refused = |why: String| {
        ExperienceError::Refused(format!("--experience-dir {}: {why}", dir.display()))
    };
    if dir.exists() && !dir.is_dir() {
        return Err(refused("it is not a folder".into()));
    }
    std::fs::create_dir_all(dir).map_err(|source| ExperienceError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    let resolved = dir
        .canonicalize()
        .map_err(|source| ExperienceError::Write {
            path: dir.to_path_buf(),
            source,
        })?;
    let this_run = run_dir
        .parent()
        .and_then(|p| p.canonicalize().ok())
        .map(|p| p.join(run_dir.file_name().unwrap_or_default()));
    let in_run = resolved
        .ancestors()
        .find(|a| Some(a.to_path_buf()) == this_run || crate::rundir::is_run_dir(a));
    if let Some(run) = in_run {
        return Err(refused(format!(
            "it is in the run folder {}, which --fresh deletes whole; save experience elsewhere (the default is OUT/experience)",
            run.display()
        )));
    }
    Ok(file_of(dir))
}

/// True when `a` and `b` are the same file (or would be, once made).
fn same_file(a: &Path, b: &Path) -> bool {
    let resolved = |p: &Path| {
        let parent = p.parent().and_then(|d| d.canonicalize().ok());
        parent.map(|d| d.join(p.file_name().unwrap_or_default()))
    };
    resolved(a).is_some() && resolved(a) == resolved(b)
}

/// One task's way into the run's experience: records like its requests, never its own.
#[derive(Clone)]
pub(crate) struct Recall {
    experience: Arc<Experience>,
    /// The task's id without its repetition.
    task: String,
}

impl Recall {
    /// The recall of the task `task` (its base id), when the run gives records at all.
    pub(crate) fn of(experience: &Arc<Experience>, task: &str) -> Option<Self> {
        (experience.recall.is_some() || experience.demonstrations.is_some()).then(|| Self {
            experience: Arc::clone(experience),
            task: task.to_string(),
        })
    }

    /// The examples block for `agent` working on `query` in `app`, and what it holds:
    /// the best experience records, then the best demonstrations.
    pub(crate) fn examples(
        &self,
        agent: &str,
        query: &str,
        app: &str,
    ) -> (String, Vec<GivenExample>) {
        let began = std::time::Instant::now();
        let e = &self.experience;
        // Never its own record, never a failure's, and each request once (repetitions
        // of a task save the same record).
        let seen = std::cell::RefCell::new(Vec::<String>::new());
        let usable = |r: &ExperienceRecord| {
            let fresh = !seen.borrow().contains(&r.request);
            let ok = fresh && r.is_example() && !r.is_from(&e.run, &self.task);
            if ok {
                seen.borrow_mut().push(r.request.clone());
            }
            ok
        };
        let recall = e
            .recall
            .as_ref()
            .map(|r| r.read().unwrap_or_else(|p| p.into_inner()));
        let mut chosen: Vec<(ExampleSource, &index::Entry, f32)> = Vec::new();
        if let Some(library) = recall.as_deref() {
            for found in library.search(query, Some(app), e.top_k, usable) {
                chosen.push((ExampleSource::Experience, found.entry, found.score));
            }
        }
        if let Some(library) = &e.demonstrations {
            for found in library.search(query, Some(app), e.top_k, |_| true) {
                chosen.push((ExampleSource::Demonstration, found.entry, found.score));
            }
        }
        let shown: Vec<(ExampleSource, &str, &ExperienceRecord)> = chosen
            .iter()
            .map(|(source, entry, _)| (*source, entry.key.as_str(), entry.record.as_ref()))
            .collect();
        let block = examples::prompt_block(&shown);
        tracing::debug!(
            micros = began.elapsed().as_micros() as u64,
            chars = block.chars().count(),
            given = shown.len(),
            "experience retrieval"
        );
        let given = chosen
            .iter()
            .map(|(source, entry, score)| GivenExample {
                agent: agent.to_string(),
                source: *source,
                key: entry.key.clone(),
                request: crate::text::shorten(&entry.record.request, 300),
                score: (f64::from(*score) * 1000.0).round() / 1000.0,
                from: entry
                    .record
                    .origin
                    .as_ref()
                    .map(|o| format!("{}/{}", o.run, o.task_id)),
            })
            .collect();
        (block, given)
    }
}
