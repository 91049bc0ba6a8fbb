//! OSWorld's part of a task's desktop, as OSWorld's VM has it: the task's home furnished
//! as the VM image is (`profile`), a private copy of OSWorld's own server running
//! unmodified beside the apps (`python -m flask --app main run` on the desktop's own
//! loopback: its jail has a network of its own), and OSWorld's evaluator bridge
//! (`driver`) beside it, which runs the task's setup through OSWorld's
//! `SetupController` and, once the agent has finished, OSWorld's own evaluation. Their
//! files live in the attempt's OSWorld folder in the task's folder (`osworld/`): the
//! desktop's programs may write there, the agent's commands do not see it (they run in
//! the task's shell jail, which hides the run's folders), so no agent can plant a gold
//! file or a program OSWorld's steps run. The cache's gold files come only when the
//! evaluation does.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::cache;
use super::driver::{Driver, LastAction, Scored};
use super::support::Parts;
use crate::desktop::backend::Backend;
use crate::desktop::furniture::Furniture;
use crate::task::osworld::{OsWorldTask, Phase};
use crate::tool::{Blamed, Failure};

/// OSWorld's VM screen.
pub(crate) const SCREEN: (u32, u32) = (1920, 1080);
/// The server, as the desktop calls it.
const SERVER: &str = "OSWorld's server";
/// The bridge, as the desktop calls it.
const BRIDGE: &str = "OSWorld's evaluator bridge";
/// How long the server may take to answer its first request.
const SERVER_WAIT: Duration = Duration::from_secs(60);
/// The most bytes of OSWorld's server folder copied (its four files are 60 KB).
const MAX_SERVER: u64 = 64 << 20;

/// What an OSWorld task's desktop runs with.
#[derive(Clone, Debug)]
pub(crate) struct OsWorldPlan {
    /// The task.
    pub(crate) task: Arc<OsWorldTask>,
    /// OSWorld's parts on this machine.
    pub(crate) parts: Parts,
    /// The attempt's OSWorld folder (absolute; the same path on its desktop).
    pub(crate) room: PathBuf,
}

impl OsWorldPlan {
    /// The plan of `task` with `parts`, its OSWorld folder made afresh at `room` (an
    /// earlier attempt's is removed, its links with it, none followed).
    pub(crate) fn new(task: Arc<OsWorldTask>, parts: Parts, room: &Path) -> Result<Self, Failure> {
        let machine = |e: std::io::Error| {
            Failure::environment(format!(
                "cannot make the attempt's OSWorld folder {}: {e}",
                room.display()
            ))
        };
        match std::fs::remove_dir_all(room) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(machine(e)),
            _ => {}
        }
        std::fs::create_dir_all(room).map_err(machine)?;
        let room = room.canonicalize().map_err(machine)?;
        Ok(Self { task, parts, room })
    }

    /// The desktop OSWorld's VM is: its screen, the task's folder as `/home/user`, a
    /// window manager, the venv first on the PATH (OSWorld's steps run `python -c
    /// "import pyautogui; ..."`), and a stand-in `gnome-screenshot` where none is
    /// installed (PyScreeze takes screenshots with Pillow only when that program exists).
    pub(crate) fn furniture(&self) -> Furniture {
        let venv_bin = self.parts.python.parent().map(Path::to_path_buf);
        let venv = venv_bin
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_path_buf);
        Furniture {
            screen: Some(SCREEN),
            user_home: true,
            window_manager: true,
            path_first: venv_bin
                .into_iter()
                .chain([self.room.join("bin")])
                .collect(),
            kept: venv.into_iter().collect(),
            writable: vec![self.room.clone()],
            // The executor sets the task's.
            memory: None,
        }
    }
}

/// OSWorld's part of a desktop, running.
pub(crate) struct Room {
    plan: OsWorldPlan,
    driver: Driver,
}

impl Room {
    /// Brings OSWorld's part up on the desktop of `backend` (whose home is `home`, as
    /// the runner sees it) and runs the task's setup; with a note for the task log.
    pub(crate) async fn open(
        backend: &mut dyn Backend,
        plan: OsWorldPlan,
        home: &Path,
    ) -> Result<(Room, String), Failure> {
        let clock = Instant::now();
        let machine = |what: &str, e: std::io::Error| Failure::environment(format!("{what}: {e}"));
        super::profile::furnish(home)
            .map_err(|e| Failure::environment(format!("cannot furnish the task's home: {e}")))?;
        let dir = plan.room.clone();
        copy_folder(&plan.parts.server, &dir.join("server"), MAX_SERVER)
            .map_err(|e| machine("cannot copy OSWorld's server", e))?;
        std::fs::write(dir.join(super::DRIVER_FILE), super::DRIVER)
            .map_err(|e| machine("cannot write OSWorld's evaluator bridge", e))?;
        stand_in_screenshot(&dir)
            .map_err(|e| machine("cannot prepare the desktop's programs", e))?;
        let copied = match &plan.parts.cache {
            Some(from) => {
                cache::copy_phase_apart(
                    from,
                    &dir,
                    &plan.task.id,
                    &plan.task.needs().cache,
                    Phase::Setup,
                )
                .await?
            }
            None => 0,
        };
        let python = plan.parts.python.display().to_string();
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let server = argv(&[
            &python,
            "-m",
            "flask",
            "--app",
            "main",
            "run",
            "--host",
            "127.0.0.1",
            "--port",
            super::SERVER_PORT,
        ]);
        backend
            .start_program(SERVER, &server, &dir.join("server"))
            .await
            .map_err(|e| e.failure())?;
        let driver_file = dir.join(super::DRIVER_FILE).display().to_string();
        let bridge = argv(&[&python, &driver_file, "serve"]);
        let pipes = backend
            .start_helper(BRIDGE, &bridge, &dir)
            .await
            .map_err(|e| e.failure())?;
        let mut driver = Driver::over(pipes);
        let cache_inside = dir.join(cache::COPY).display().to_string();
        let done = match driver
            .setup(&plan.task.json, &cache_inside, SCREEN, SERVER_WAIT)
            .await
        {
            Ok(done) => done,
            Err(failure) => return Err(with_ended(backend, failure)),
        };
        let steps: Vec<String> = done
            .steps
            .iter()
            .map(|s| format!("{} {:.2}s", s.kind, s.seconds))
            .collect();
        let note = format!(
            "OSWorld's desktop ready in {:.2}s: {} copied from the cache; setup {} in {:.2}s{}",
            clock.elapsed().as_secs_f64(),
            crate::units::format_size(copied),
            crate::text::plural(done.steps.len(), "step"),
            done.seconds,
            match steps.is_empty() {
                true => String::new(),
                false => format!(" ({})", steps.join(", ")),
            }
        );
        Ok((Room { plan, driver }, note))
    }

    /// Scores the session as OSWorld does, the evaluator's cache files copied in first.
    pub(crate) async fn evaluate(
        &mut self,
        backend: &mut dyn Backend,
        last: LastAction,
    ) -> Result<Scored, Failure> {
        if let Some(from) = &self.plan.parts.cache {
            cache::copy_phase_apart(
                from,
                &self.plan.room,
                &self.plan.task.id,
                &self.plan.task.needs().cache,
                Phase::Evaluation,
            )
            .await?;
        }
        self.driver
            .evaluate(last)
            .await
            .map_err(|failure| with_ended(backend, failure))
    }
}

/// `failure`, with how the server or the bridge ended when one has (the likelier cause).
fn with_ended(backend: &mut dyn Backend, failure: Failure) -> Failure {
    match backend
        .program_ended(SERVER)
        .or_else(|| backend.program_ended(BRIDGE))
    {
        Some(ended) => Failure::environment(format!("{ended}; {}", failure.message)),
        None => failure,
    }
}

/// A `gnome-screenshot` that does nothing, first on the PATH, where none is installed:
/// PyScreeze, which OSWorld's server uses, takes screenshots with Pillow only when a
/// program of that name exists.
fn stand_in_screenshot(dir: &Path) -> std::io::Result<()> {
    let installed = [
        "/usr/bin/gnome-screenshot",
        "/usr/local/bin/gnome-screenshot",
    ]
    .iter()
    .any(|p| Path::new(p).is_file());
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin)?;
    if installed {
        return Ok(());
    }
    let stand_in = bin.join("gnome-screenshot");
    std::fs::write(&stand_in, "#!/bin/sh\nexit 0\n")?;
    #[cfg(unix)]
    std::fs::set_permissions(
        &stand_in,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )?;
    Ok(())
}

/// Copies the regular files and folders of `from` into `to`, at most `limit` bytes in
/// all; links are not followed.
fn copy_folder(from: &Path, to: &Path, limit: u64) -> std::io::Result<u64> {
    let mut entries = MAX_SERVER_ENTRIES;
    copy_within(from, to, limit, &mut entries)
}

/// The most files and folders of OSWorld's server folder copied (it has a handful).
const MAX_SERVER_ENTRIES: usize = 10_000;

fn copy_within(from: &Path, to: &Path, limit: u64, entries: &mut usize) -> std::io::Result<u64> {
    std::fs::create_dir_all(to)?;
    let mut copied = 0;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        *entries = entries.checked_sub(1).ok_or_else(|| {
            std::io::Error::other(format!(
                "{} holds more than {MAX_SERVER_ENTRIES} files and folders",
                from.display()
            ))
        })?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copied += copy_within(
                &entry.path(),
                &target,
                limit.saturating_sub(copied),
                entries,
            )?;
        } else if kind.is_file() {
            copied += entry.metadata()?.len();
            if copied > limit {
                return Err(std::io::Error::other(format!(
                    "{} holds more than {}",
                    from.display(),
                    crate::units::format_size(limit)
                )));
            }
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(copied)
}
