//! What an attempt's commands run with: the task's shell (in its jail), on a UFO device
//! of the run's fleet or on a desktop of the task's own, with the run's MCP servers
//! around it.

use super::outcome::AttemptOutcome;
use super::settings::{AttemptSettings, AttemptStop};
use crate::desktop::error::DesktopError;
use crate::event::TaskEvents;
use crate::executor::{DesktopExecutor, Executor, ShellExecutor};
use crate::task::Task;
use crate::tool::Blamed;

/// The means of carrying out `task`'s commands: its shell, on a device of the run's
/// fleet, on a desktop of its own, with the run's MCP servers; and the device it runs
/// on. `Err` is the attempt's outcome when none could be had.
pub(super) async fn executor_for(
    task: &Task,
    settings: &AttemptSettings,
    osworld: Option<crate::osworld::OsWorldPlan>,
    previous_attempts: u32,
    events: &TaskEvents,
    stop: &AttemptStop,
) -> Result<(Box<dyn Executor>, Option<String>), AttemptOutcome> {
    let dir = settings.layout.task(&task.id);
    let ws = dir.workspace();
    let tmp = dir.tmp();
    let mut shell = if ws.is_absolute() {
        // Under the resolved run dir (`AttemptSettings::layout`).
        ShellExecutor::with_real_paths(ws.clone(), Some(tmp), settings.shell.clone())
    } else {
        ShellExecutor::with_tmp(ws.clone(), Some(tmp), settings.shell.clone())
    };
    let mut hidden: Vec<std::path::PathBuf> = [
        Some(settings.layout.root().to_path_buf()),
        std::env::var_os("HOME").map(Into::into),
    ]
    .into_iter()
    .flatten()
    .collect();
    if let Some(plan) = &osworld {
        // Out of the agent's sight: OSWorld's cache (the gold files) and the task files
        // (the expected answers of their `rule` getters).
        hidden.extend(plan.parts.cache.clone());
        hidden.extend(
            task.source
                .ancestors()
                .find(|a| {
                    a.file_name()
                        .is_some_and(|n| n == crate::task::osworld::suite::EXAMPLES)
                })
                .and_then(std::path::Path::parent)
                .and_then(|p| p.canonicalize().ok()),
        );
    }
    if let Some(plan) = &osworld {
        // The commands see the desktop's world: its /tmp (the display's socket), the
        // task's folder as /home/user.
        let kept = plan.furniture().kept;
        if let Err(failure) = shell.see_desktop(&dir.desktop(), hidden.clone(), kept) {
            events.log(crate::event::Level::Error, failure.message.clone());
            return Err(AttemptOutcome::failed(failure));
        }
    }
    if let Some(n) = task.repeat {
        shell.set_env("UFO_BATCH_REPEAT", &n.to_string());
    }
    let mut device = None;
    if settings.devices.is_some() && task.osworld.is_some() {
        let failure = crate::tool::Failure::new(
            crate::tool::Blame::Config,
            "an OSWorld task runs on a desktop of the runner's own (OSWorld's server and evaluator run beside its apps), not on a device: run it without --devices",
        );
        events.log(crate::event::Level::Error, failure.message.clone());
        return Err(AttemptOutcome::failed(failure));
    }
    if settings.devices.is_some() && task.mode.is_some_and(crate::task::SessionMode::operates) {
        let failure = crate::tool::Failure::new(
            crate::tool::Blame::TaskFile,
            "an operator session runs on the runner's own desktop, not on a device (UFO's device clients have no computer-use tools): run it without --devices",
        );
        events.log(crate::event::Level::Error, failure.message.clone());
        return Err(AttemptOutcome::failed(failure));
    }
    let mut executor: Box<dyn Executor> = if let Some(hub) = &settings.devices {
        match on_device(task, settings, hub, previous_attempts, events, stop).await {
            Ok(ex) => {
                device = Some(ex.device().to_string());
                Box::new(ex)
            }
            Err(outcome) => return Err(*outcome),
        }
    } else if let Some(plan) = osworld {
        Box::new(
            DesktopExecutor::new(
                shell,
                dir.clone(),
                None,
                None,
                hidden,
                settings.desktop.clone(),
            )
            .with_osworld(plan),
        )
    } else if task.is_desktop() {
        let document = task
            .object_file
            .as_ref()
            .map(|f| f.name().to_string_lossy().into_owned());
        // UFO's `object` may name the app itself (`notepad`).
        let named =
            (task.app.is_none() && task.object_file.is_none() && task.desktop_object().is_some())
                .then(|| crate::task::App::Named(task.object.clone().unwrap_or_default()));
        let app = match crate::desktop::app::launch_for(
            task.app.as_ref().or(named.as_ref()),
            document.as_deref(),
        ) {
            Ok(app) => app,
            Err(unknown) => {
                let failure = DesktopError::TaskFile(unknown.to_string()).failure();
                events.log(crate::event::Level::Error, failure.message.clone());
                return Err(AttemptOutcome::failed(failure));
            }
        };
        Box::new(DesktopExecutor::new(
            shell,
            dir.clone(),
            app,
            document,
            // The run's folder (other tasks' desktops) and the user's home.
            hidden,
            settings.desktop.clone(),
        ))
    } else {
        Box::new(shell)
    };
    if let Some(hub) = &settings.mcp {
        executor = Box::new(crate::mcp::McpRouter::new(
            executor,
            hub.clone(),
            ws.clone(),
        ));
    }
    Ok((executor, device))
}

/// The executor of `task` on a free device of its platform (Linux for shell tasks,
/// Windows for desktop tasks), its folder on the device made. Waiting for the device is
/// not part of the task's time; a wait the run's stop ends cancels the attempt, one
/// that finds no device is an infrastructure error (that stops the run when no device
/// of the platform is connected at all).
async fn on_device(
    task: &Task,
    settings: &AttemptSettings,
    hub: &crate::device::DeviceHub,
    previous_attempts: u32,
    events: &TaskEvents,
    stop: &AttemptStop,
) -> Result<crate::device::DeviceExecutor, Box<AttemptOutcome>> {
    use crate::device::{DeviceExecutor, Platform};
    let platform = if task.is_desktop() {
        Platform::Windows
    } else {
        Platform::Linux
    };
    let lease = lease_device(task, hub, &platform, events, stop).await?;
    hub.ran_on(task.id.as_str(), &lease.device.id);
    events.info(format!("on device {} ({platform})", lease.device.id));
    events.on_device(&lease.device.id);
    let run = device_run(task, settings, hub, previous_attempts);
    let mut executor = DeviceExecutor::new(lease, run);
    match executor.make_workspace(&task.files).await {
        Ok(Some(note)) => events.info(note),
        Ok(None) => {}
        Err(failure) => {
            events.log(crate::event::Level::Error, failure.message.clone());
            let _ = executor.shutdown().await;
            let mut outcome = AttemptOutcome::failed(failure);
            outcome.device = Some(executor.device().to_string());
            return Err(Box::new(outcome));
        }
    }
    Ok(executor)
}

/// A free device of `platform`, another than the one the task last failed on if one is
/// free; waiting ends with the run's stop (the attempt is cancelled) or finds none (an
/// infrastructure error, fatal when no device of the platform is connected).
async fn lease_device(
    task: &Task,
    hub: &crate::device::DeviceHub,
    platform: &crate::device::Platform,
    events: &TaskEvents,
    stop: &AttemptStop,
) -> Result<crate::device::Lease, Box<AttemptOutcome>> {
    // A retry goes to another device than the one the task last failed on, if one is free.
    let avoid = hub.last_device(task.id.as_str());
    let lease = tokio::select! {
        lease = hub.fleet.lease(platform, hub.settings.wait_for, avoid.as_deref()) => {
            lease.map_err(|e| e.to_string())
        }
        () = stop.kill.cancelled() => Err(String::new()),
        () = stop.stopping.cancelled() => Err(String::new()),
    };
    match lease {
        Ok(lease) => Ok(lease),
        Err(why) if why.is_empty() => {
            let mut outcome = AttemptOutcome::infrastructure_error(String::new());
            outcome.cancel(format!(
                "cancelled while waiting for a free {platform} device; it runs again when the run is resumed"
            ));
            Err(Box::new(outcome))
        }
        Err(why) => {
            events.log(crate::event::Level::Error, why.clone());
            let mut outcome = AttemptOutcome::infrastructure_error(why.clone());
            if hub.fleet.count(platform) == 0 {
                outcome.fatal = Some(format!("no {platform} device is connected: {why}"));
            }
            Err(Box::new(outcome))
        }
    }
}

/// What a device needs to know of the attempt: its limits, the values injected into its
/// calls, and a session id of the run, the task and the attempt.
fn device_run(
    task: &Task,
    settings: &AttemptSettings,
    hub: &crate::device::DeviceHub,
    previous_attempts: u32,
) -> crate::device::DeviceRun {
    let name = settings
        .layout
        .root()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let safe = |t: &str| -> String {
        t.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    crate::device::DeviceRun {
        command_timeout: hub.settings.command_timeout,
        inject: hub.settings.inject.clone(),
        session_id: format!(
            "{}-{}-{}",
            safe(&name),
            safe(task.id.as_str()),
            previous_attempts + 1
        ),
        task_name: task.id.to_string(),
        local_workspace: settings.layout.task(&task.id).workspace(),
        dir: settings.layout.task(&task.id),
    }
}
