//! What can be wrong with a run's configuration: every problem is reported before
//! anything runs.

use std::path::PathBuf;

/// Problems with the configuration; all are reported before anything runs.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfigError {
    /// The config file could not be read.
    #[error("cannot read the config file {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The config file is not valid TOML of the expected shape.
    #[error("bad config file {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A value is out of range or malformed.
    #[error("{0}")]
    Invalid(String),
    /// `--shard`/`--shards` cannot be taken as given.
    #[error(transparent)]
    Shard(#[from] crate::shard::ShardError),
}
