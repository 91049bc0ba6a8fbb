//! Opening the run's experience before anything runs: the file it saves to, the records
//! it retrieves from, and `--demonstrations`' recorded plans.

use std::sync::Arc;

use super::sources::load_tasks_as;
use super::{BatchError, RunSettings};
use crate::executor::all_tools;
use crate::experience::Experience;
use crate::experience::from_actions::demonstration;

/// The run's experience: the file it saves to made ready, the records it retrieves
/// from read, and `--demonstrations`' recorded plans loaded; `None` when the run uses
/// none. A file that cannot be used, or a folder of demonstrations without one usable
/// plan, refuses the run.
pub(super) fn open_experience(
    config: &RunSettings,
) -> Result<(Option<Arc<Experience>>, Vec<String>), BatchError> {
    let settings = &config.experience;
    if !settings.is_used() {
        return Ok((None, Vec::new()));
    }
    let mut notes = Vec::new();
    let demonstrations = match &settings.demonstrations {
        None => None,
        Some(dir) => {
            let loaded = load_tasks_as(
                std::slice::from_ref(dir),
                None,
                all_tools().to_vec().into(),
                |task, _| task,
            )?;
            let mut unused: Vec<String> = loaded
                .invalid
                .iter()
                .map(|bad| {
                    let why = bad.problems.first().map(ToString::to_string);
                    format!(
                        "{} ({})",
                        bad.source.display(),
                        crate::text::first_line(&why.unwrap_or_default(), 120)
                    )
                })
                .collect();
            let mut records = Vec::new();
            for task in &loaded.tasks {
                match demonstration(task, task.id.to_string()) {
                    Some(record) => records.push(record),
                    None => unused.push(format!(
                        "{} (not a recorded plan whose recording passed)",
                        task.source.display()
                    )),
                }
            }
            let said = |unused: &[String]| {
                let more = unused.len().saturating_sub(5);
                let mut text = unused[..unused.len().min(5)].join("; ");
                if more > 0 {
                    text.push_str(&format!("; and {more} more"));
                }
                text
            };
            if records.is_empty() {
                return Err(BatchError::Refused(format!(
                    "--demonstrations {}: no recorded plan there can serve (a plan with actions whose recording passed): {}",
                    dir.display(),
                    said(&unused)
                )));
            }
            if !unused.is_empty() {
                notes.push(format!(
                    "--demonstrations {}: {} not used: {}",
                    dir.display(),
                    crate::text::plural(unused.len(), "file"),
                    said(&unused)
                ));
            }
            Some(records)
        }
    };
    let (experience, opened) =
        Experience::open(settings, &config.run_name, &config.run_dir, demonstrations)
            .map_err(|e| BatchError::Refused(e.to_string()))?;
    notes.extend(opened);
    Ok((Some(Arc::new(experience)), notes))
}
