//! What an OSWorld task needs of the machine that runs it: the programs its apps and
//! steps start, the files of OSWorld's cache its steps and getters read (each named as
//! OSWorld's code looks for it), and what no machine running tasks unattended has (a
//! Google account).

use serde_json::Value;

use super::{OsWorldTask, Step};

/// When a file of the cache is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// By the setup steps (`config`): before the agent starts.
    Setup,
    /// By the evaluator (`postconfig`, the getters): once the agent has finished, so
    /// that no gold file is on the desktop while it works.
    Evaluation,
}

/// A file of OSWorld's cache a task reads, in its task's folder there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CacheFile {
    /// Its name in the task's cache folder (`<uuid5(url)>_<name>` for a download, as
    /// OSWorld's `SetupController._download_setup` names it; `dest` for `cloud_file`).
    pub(crate) name: String,
    /// What it is, in words.
    pub(crate) what: String,
    /// When it is read.
    pub(crate) phase: Phase,
}

/// What a task needs of the machine.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Needs {
    /// Programs that must be installed: (program, why).
    pub(crate) programs: Vec<(String, String)>,
    /// Files of OSWorld's cache.
    pub(crate) cache: Vec<CacheFile>,
    /// What it needs that an unattended run has not, in words.
    pub(crate) absent: Vec<String>,
}

/// The program each of OSWorld's app names stands for (`related_apps`).
const APPS: &[(&str, &str)] = &[
    ("chrome", "google-chrome"),
    ("browser", "google-chrome"),
    ("vlc", "vlc"),
    ("thunderbird", "thunderbird"),
    ("gimp", "gimp"),
    ("vscode", "code"),
    ("vs_code", "code"),
    ("terminal", "gnome-terminal"),
    ("ubuntu_media_player", "totem"),
    ("picard", "picard"),
    ("libreoffice", "soffice"),
    ("libreoffice_calc", "soffice"),
    ("libreoffice calc", "soffice"),
    ("libreoffice_writer", "soffice"),
    ("libreoffice_impress", "soffice"),
    ("calc", "soffice"),
    ("writer", "soffice"),
    ("impress", "soffice"),
];

/// Steps that need a Google account or Chrome's debugging port, which OSWorld's VM images
/// have and an unattended run here has not.
const ABSENT_STEPS: &[(&str, &str)] = &[
    (
        "googledrive",
        "a Google Drive account (OSWorld's googledrive step)",
    ),
    ("login", "a web login (OSWorld's login step)"),
    (
        "chrome_open_tabs",
        "Chrome with its debugging port (OSWorld's chrome_open_tabs step)",
    ),
    (
        "chrome_close_tabs",
        "Chrome with its debugging port (OSWorld's chrome_close_tabs step)",
    ),
    (
        "update_browse_history",
        "Chrome's history (OSWorld's update_browse_history step)",
    ),
];

/// What `task` needs.
pub(super) fn of(task: &OsWorldTask) -> Needs {
    let mut needs = Needs::default();
    for app in &task.related_apps {
        let name = app.trim().to_ascii_lowercase();
        if let Some((_, program)) = APPS.iter().find(|(a, _)| *a == name) {
            needs.program(program, &format!("the app {app}"));
        }
    }
    for (steps, phase) in [
        (&task.config, Phase::Setup),
        (&task.evaluator.postconfig, Phase::Evaluation),
    ] {
        for step in steps {
            needs.step(step, phase);
        }
    }
    for getter in task
        .evaluator
        .result
        .iter()
        .chain(task.evaluator.expected.iter().flatten())
    {
        if getter.kind == "cloud_file" {
            let urls = texts(getter.config.get("path"));
            for (i, dest) in texts(getter.config.get("dest")).into_iter().enumerate() {
                let url = urls.get(i).map(String::as_str).unwrap_or("?");
                needs.cache.push(CacheFile {
                    name: dest.clone(),
                    what: format!("the file {url} (cloud_file, kept as {dest})"),
                    phase: Phase::Evaluation,
                });
            }
        }
        if getter.kind == "googledrive_file" {
            needs.absent("a Google Drive account (OSWorld's googledrive_file getter)");
        }
    }
    needs
}

impl Needs {
    fn program(&mut self, program: &str, why: &str) {
        if !self.programs.iter().any(|(p, _)| p == program) {
            self.programs.push((program.to_string(), why.to_string()));
        }
    }

    fn absent(&mut self, what: &str) {
        if !self.absent.iter().any(|a| a == what) {
            self.absent.push(what.to_string());
        }
    }

    /// What one step needs.
    fn step(&mut self, step: &Step, phase: Phase) {
        if let Some((_, what)) = ABSENT_STEPS.iter().find(|(k, _)| *k == step.kind) {
            self.absent(what);
        }
        match step.kind.as_str() {
            "download" => {
                for file in files_of(step) {
                    let url = file.get("url").and_then(Value::as_str).unwrap_or_default();
                    let path = file.get("path").and_then(Value::as_str).unwrap_or_default();
                    self.cache.push(CacheFile {
                        name: download_name(url, path),
                        what: format!("the download of {url} to {path}"),
                        phase,
                    });
                }
            }
            "upload_file" => {
                for file in files_of(step) {
                    if let Some(local) = file.get("local_path").and_then(Value::as_str) {
                        self.cache.push(CacheFile {
                            name: local.to_string(),
                            what: format!("the file {local} to upload"),
                            phase,
                        });
                    }
                }
            }
            "launch" | "execute" | "command" => {
                let shell = step
                    .parameters
                    .get("shell")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                if let Some(program) = program_of(step.parameters.get("command"), shell) {
                    let why = format!("a {} step", step.kind);
                    self.program(&program, &why);
                }
            }
            _ => {}
        }
    }
}

/// The program a command line starts (its first word); none for a shell line, whose
/// first word may be a shell's own, nor for `python`, which is the venv's.
fn program_of(command: Option<&Value>, shell: bool) -> Option<String> {
    let first = match command? {
        Value::Array(argv) => argv.first()?.as_str()?.to_string(),
        Value::String(line) if !shell => line.split_whitespace().next()?.to_string(),
        _ => return None,
    };
    let name = first.rsplit('/').next().unwrap_or(&first);
    let interpreter = name.starts_with("python");
    (!first.is_empty() && !interpreter && !first.contains('{')).then_some(first)
}

/// The strings of a value (one, or a list).
fn texts(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// The name OSWorld gives a download in its cache: `uuid5(NAMESPACE_URL, url)` and the
/// file's name (`SetupController._download_setup`: `"{:}_{:}".format(uuid.uuid5(
/// uuid.NAMESPACE_URL, url), os.path.basename(path))`).
pub(crate) fn download_name(url: &str, path: &str) -> String {
    let id = uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_URL, url.as_bytes());
    let base = path.rsplit('/').next().unwrap_or(path);
    format!("{id}_{base}")
}

/// The `files` a `download` or `upload_file` step lists.
fn files_of(step: &Step) -> impl Iterator<Item = &Value> {
    step.parameters
        .get("files")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}
