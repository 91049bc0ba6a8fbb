//! `[experience]` of the config file and the flags over it (`--save-experience`,
//! `--experience-dir`, `--experience`, `--demonstrations`, `--experience-top-k`),
//! resolved into the run's `ExperienceSettings`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ConfigError;
use crate::experience::{DEFAULT_TOP_K, ExperienceSettings, MAX_TOP_K, SaveExperience};

/// `[experience]` of the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExperienceSection {
    /// `never`, `passed` or `always` (UFO's `SAVE_EXPERIENCE`).
    pub(crate) save: Option<String>,
    /// Where records are saved (default: OUT/experience).
    pub(crate) dir: Option<PathBuf>,
    /// Where records are retrieved from (UFO's `RAG_EXPERIENCE`).
    pub(crate) retrieve: Option<PathBuf>,
    /// Recorded plans given as demonstrations (UFO's `RAG_DEMONSTRATION`).
    pub(crate) demonstrations: Option<PathBuf>,
    /// Records given per source and agent (UFO's `RAG_EXPERIENCE_RETRIEVED_TOPK`).
    pub(crate) top_k: Option<usize>,
}

/// The experience options given as flags.
#[derive(Debug, Default, Clone)]
pub(crate) struct ExperienceFlags {
    /// `--save-experience`.
    pub(crate) save: Option<SaveExperience>,
    /// `--experience-dir`.
    pub(crate) dir: Option<PathBuf>,
    /// `--experience`.
    pub(crate) retrieve: Option<PathBuf>,
    /// `--demonstrations`.
    pub(crate) demonstrations: Option<PathBuf>,
    /// `--experience-top-k`.
    pub(crate) top_k: Option<usize>,
}

/// The experience settings: flags over the file over defaults (saving to
/// `out_root/experience`).
pub(super) fn experience_settings(
    flags: ExperienceFlags,
    file: ExperienceSection,
    out_root: &Path,
) -> Result<ExperienceSettings, ConfigError> {
    let save = match (flags.save, file.save) {
        (Some(save), _) => save,
        (None, Some(text)) => text
            .parse()
            .map_err(|e| ConfigError::Invalid(format!("[experience] save: {e}")))?,
        (None, None) => SaveExperience::Never,
    };
    let top_k = flags.top_k.or(file.top_k).unwrap_or(DEFAULT_TOP_K);
    if !(1..=MAX_TOP_K).contains(&top_k) {
        return Err(ConfigError::Invalid(format!(
            "--experience-top-k / [experience] top_k is {top_k}: give 1 to {MAX_TOP_K}"
        )));
    }
    let settings = ExperienceSettings {
        save,
        dir: flags
            .dir
            .or(file.dir)
            .unwrap_or_else(|| out_root.join("experience")),
        retrieve: flags.retrieve.or(file.retrieve),
        demonstrations: flags.demonstrations.or(file.demonstrations),
        top_k,
    };
    // The folder saved to is made when the run starts: retrieving from it is fine.
    let saved_to = |p: &Path| save != SaveExperience::Never && p == settings.dir;
    for (path, flag) in [
        (&settings.retrieve, "--experience / [experience] retrieve"),
        (
            &settings.demonstrations,
            "--demonstrations / [experience] demonstrations",
        ),
    ] {
        if let Some(path) = path
            && !path.exists()
            && !(flag.starts_with("--experience ") && saved_to(path))
        {
            return Err(ConfigError::Invalid(format!(
                "{flag} {}: no such file or folder",
                path.display()
            )));
        }
    }
    Ok(settings)
}
