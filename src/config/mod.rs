//! The validated configuration of a run: the config file (`ufo-batch.toml`), environment
//! variables and command-line flags merged once (flags over env over file over
//! defaults) into domain types. Nothing past this module sees raw option text.

mod error;
mod experience;
mod file;
mod operator;
mod resolve;
mod sections;
mod values;

#[cfg(test)]
mod tests;

pub(crate) use error::ConfigError;
pub(crate) use experience::ExperienceFlags;
pub(crate) use file::read_config;
pub(crate) use resolve::{RunOverrides, resolve};
pub(crate) use sections::resource_limits as resource_limits_of;
