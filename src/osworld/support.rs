//! Whether an OSWorld task can run on this machine, decided before anything of it runs:
//! what it needs that no unattended run has (an account), the programs its apps and
//! steps start, OSWorld's parts (the Python with its code, its server), the names of
//! OSWorld's code it uses (a name desktop-env does not have is the task file's error; one
//! whose packages are missing is unsupported here), and the files of OSWorld's cache it
//! reads. A task that cannot run is unsupported, with the reason; never a failure.

use std::path::{Path, PathBuf};

use super::probe::{Capabilities, Verdict};
use super::settings::OsWorldSettings;
use crate::task::osworld::OsWorldTask;
use crate::tool::{Blame, Failure};

/// What the machine makes of a task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Support {
    /// It runs, with these parts.
    Runs(Parts),
    /// It cannot run here: why.
    Unsupported(String),
    /// Its file is wrong in a way only OSWorld's code can tell (a step type, getter or
    /// metric it does not have): why.
    TaskFile(String),
    /// OSWorld's parts are not usable as configured (no Python with its code, no
    /// server, a probe that failed): the run's failure, not the task's capability.
    Broken(Failure),
}

/// OSWorld's parts a task runs with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Parts {
    /// The Python with OSWorld's code.
    pub(crate) python: PathBuf,
    /// OSWorld's server folder.
    pub(crate) server: PathBuf,
    /// OSWorld's cache folder, when the run has one.
    pub(crate) cache: Option<PathBuf>,
}

/// Where programs are looked for: the venv's `bin` (OSWorld's steps run `python`), then
/// the desktop's PATH.
const PATH: &[&str] = &["/usr/local/bin", "/usr/bin", "/bin"];

/// Decides for `task` (from the task file `file`) under `settings`, with what OSWorld's
/// code said it has (`Err`: why it could not say).
pub(crate) fn support(
    task: &OsWorldTask,
    file: &Path,
    settings: &OsWorldSettings,
    code: Result<&Capabilities, &str>,
) -> Support {
    let needs = task.needs();
    if let Some(absent) = needs.absent.first() {
        return Support::Unsupported(format!(
            "it needs {absent}, which ufo-batch's desktops do not provide"
        ));
    }
    let python = match settings.python() {
        Ok(p) => p,
        Err(why) => return Support::Broken(Failure::new(Blame::Config, why)),
    };
    let venv_bin = python.parent().map(Path::to_path_buf);
    for (program, why) in &needs.programs {
        if !installed(program, venv_bin.as_deref()) {
            return Support::Unsupported(format!(
                "it needs {program} (for {why}), which is not installed here"
            ));
        }
    }
    let server = match settings.server(file) {
        Ok(s) => s,
        Err(why) => return Support::Broken(Failure::new(Blame::Config, why)),
    };
    let code = match code {
        Ok(code) => code,
        Err(why) => return Support::Broken(Failure::environment(why)),
    };
    let names = task.names();
    let kinds = [
        ("setup step type", &names.steps, &code.setup),
        ("getter", &names.getters, &code.getters),
        ("metric", &names.metrics, &code.metrics),
    ];
    for (what, used, known) in kinds {
        for name in used {
            match known.get(*name) {
                Some(Verdict::Usable { .. }) => {}
                Some(Verdict::Needs { needs }) => {
                    return Support::Unsupported(format!(
                        "OSWorld's {what} {name} needs {}, which {} not installed here",
                        needs.join(", "),
                        if needs.len() == 1 { "is" } else { "are" }
                    ));
                }
                Some(Verdict::Unknown { .. }) | None => {
                    return Support::TaskFile(format!(
                        "OSWorld's code (desktop-env {}) has no {what} {name:?}",
                        code.desktop_env
                    ));
                }
            }
        }
    }
    if let Some(first) = needs.cache.first() {
        let Some(cache) = &settings.cache else {
            return Support::Unsupported(format!(
                "it needs files of OSWorld's cache (first: {}), and no cache folder is given (--osworld-cache DIR)",
                first.what
            ));
        };
        for file in &needs.cache {
            if !super::cache::holds(cache, &task.id, &file.name) {
                return Support::Unsupported(format!(
                    "no cached file for {} (looked for {})",
                    file.what,
                    super::cache::place(cache, &task.id, &file.name).display()
                ));
            }
        }
    }
    Support::Runs(Parts {
        python,
        server,
        cache: settings.cache.clone(),
    })
}

/// Whether `program` is there: a path, or a name on the desktop's PATH (the venv first).
fn installed(program: &str, venv_bin: Option<&Path>) -> bool {
    if program.contains('/') {
        return Path::new(program).is_file();
    }
    venv_bin
        .into_iter()
        .map(Path::to_path_buf)
        .chain(PATH.iter().map(PathBuf::from))
        .any(|dir| dir.join(program).is_file())
}
