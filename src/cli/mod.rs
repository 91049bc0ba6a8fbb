//! The command line (clap only). Options are turned into a validated configuration by
//! `into_overrides` + `config::resolve`; nothing past here sees clap.

use std::path::PathBuf;

use clap::{Args, Parser};

use crate::render::FailOn;

mod run;

pub(crate) use run::{Progress, RunArgs};

/// ufo-batch runs batches of computer-use agent tasks: every task file in a folder, many
/// at once, each in its own workspace, with a complete results folder.
#[derive(Debug, Parser)]
#[command(name = "ufo-batch", version, about, max_term_width = 100)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub(crate) command: Subcommand,
}

impl Cli {
    /// A note for an error `message` about a flag that was not on the command line but
    /// whose environment variable is set (`UFO_BATCH_JOBS=abc` fails as `--jobs`): where
    /// the value really came from.
    pub fn env_note(message: &str) -> Option<String> {
        use clap::CommandFactory;
        // Not `args()`: an argument that is not UTF-8 (the error being explained) panics it.
        let given: Vec<String> = std::env::args_os()
            .skip(1)
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let command = Self::command();
        command
            .get_subcommands()
            .flat_map(|sub| sub.get_arguments())
            .filter_map(|arg| Some((arg.get_long()?, arg.get_env()?)))
            .find(|(long, env)| {
                let flag = format!("--{long}");
                message.contains(&flag)
                    && std::env::var_os(env).is_some()
                    && !given
                        .iter()
                        .any(|g| *g == flag || g.starts_with(&format!("{flag}=")))
            })
            .map(|(long, env)| {
                format!(
                    "note: --{long} was not given: its value comes from the environment variable {}",
                    env.to_string_lossy()
                )
            })
    }
}

/// The subcommands.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Subcommand {
    /// Run every task file (*.json) found under the paths given.
    Run(Box<RunArgs>),
    /// Check task files and print every problem; run nothing. Exits 2 if any file is bad.
    Validate(ValidateArgs),
    /// Re-render the summaries, report and trajectories of a run dir from its task results.
    Report(ReportArgs),
    /// List every tool an agent would see (built in, and the config's MCP servers'),
    /// with where it comes from and its parameters' schema.
    Tools(ToolsArgs),
    /// Compare two runs task by task: the verdict (a regression beyond noise or not),
    /// the statistics, the tasks that changed; exits 1 as --fail-on says.
    Compare(CompareArgs),
    /// Merge the run dirs of shards (or runs of one batch) into one run dir.
    Merge(MergeArgs),
    /// Write a run dir in another tool's format: `--harbor OUT` writes it as a Harbor
    /// job that `harbor view OUT` opens.
    Export(ExportArgs),
    /// Run a command confined with Landlock (used by the runner itself).
    #[command(hide = true)]
    SandboxExec(SandboxExecArgs),
    /// Read a document's text or a cell for a check (used by the runner itself, in a
    /// child process with bounded memory).
    #[command(hide = true)]
    ReadDocument(ReadDocumentArgs),
}

/// Options of `ufo-batch report`.
#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// The run dir.
    #[arg(value_name = "RUN_DIR", value_parser = utf8_path)]
    pub(crate) run_dir: PathBuf,
}

/// Options of `ufo-batch compare`.
#[derive(Debug, Args)]
pub(crate) struct CompareArgs {
    /// The baseline run dir.
    #[arg(value_name = "RUN_A", value_parser = utf8_path)]
    pub(crate) a: PathBuf,
    /// The run dir to compare with it.
    #[arg(value_name = "RUN_B", value_parser = utf8_path)]
    pub(crate) b: PathBuf,
    /// Also write the comparison to FILE.
    #[arg(long, value_name = "FILE", value_parser = utf8_path)]
    pub(crate) out: Option<PathBuf>,
    /// JSON instead of markdown.
    #[arg(long)]
    pub(crate) json: bool,
    /// Also write the comparison as a page to FILE (its task links lead to RUN_B's
    /// task pages).
    #[arg(long, value_name = "FILE", value_parser = utf8_path)]
    pub(crate) html: Option<PathBuf>,
    /// When to exit 1: any (a task's pass rate dropped), significant (a regression
    /// beyond noise at --alpha: exact McNemar, or a sign-flip permutation test with
    /// repetitions), never.
    #[arg(long, value_name = "WHEN", default_value = "any", value_parser = parse_fail_on)]
    pub(crate) fail_on: FailOn,
    /// Tasks of RUN_A that RUN_B lacks do not fail the gate (by default they do: a
    /// partial B, such as one shard, is no evidence that they still pass).
    #[arg(long)]
    pub(crate) allow_missing: bool,
    /// The significance level of the tests.
    #[arg(long, value_name = "P", default_value_t = 0.05, value_parser = parse_alpha)]
    pub(crate) alpha: f64,
}

/// A path argument: UTF-8 (clap says so as a usage error otherwise), for every path the
/// runner is given ends up in a file it writes (`run.json`, a task's status) and in a
/// jail's command line.
pub(super) fn utf8_path(s: &str) -> Result<PathBuf, std::convert::Infallible> {
    Ok(PathBuf::from(s))
}

fn parse_fail_on(s: &str) -> Result<FailOn, crate::render::UnknownFailOn> {
    s.parse()
}

fn parse_alpha(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(a) if (1e-6..=0.5).contains(&a) => Ok(a),
        _ => Err(format!(
            "`{s}` is not a significance level from 0.000001 to 0.5 (say 0.05)"
        )),
    }
}

/// Options of `ufo-batch export`.
#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// Write the run as a Harbor job (ATIF trajectories, rewards, totals) under OUT, as
    /// OUT/RUN_NAME; open it with `harbor view OUT`.
    #[arg(long, value_name = "OUT", required = true, value_parser = utf8_path)]
    pub(crate) harbor: PathBuf,
    /// The run dir.
    #[arg(value_name = "RUN_DIR", value_parser = utf8_path)]
    pub(crate) run_dir: PathBuf,
}

/// Options of `ufo-batch merge`.
#[derive(Debug, Args)]
pub(crate) struct MergeArgs {
    /// The new run dir to create.
    #[arg(value_name = "OUT", value_parser = utf8_path)]
    pub(crate) out: PathBuf,
    /// The run dirs to merge.
    #[arg(value_name = "RUN_DIR", required = true, value_parser = utf8_path)]
    pub(crate) inputs: Vec<PathBuf>,
}

/// Options of the hidden `ufo-batch sandbox-exec`.
#[derive(Debug, Args)]
pub(crate) struct SandboxExecArgs {
    /// A folder the command may write (repeatable).
    #[arg(long = "rw", value_name = "DIR", value_parser = utf8_path)]
    pub(crate) writable: Vec<PathBuf>,
    /// Apply only the limits, no Landlock (bubblewrap or no sandbox).
    #[arg(long)]
    pub(crate) no_landlock: bool,
    /// Address-space limit in bytes.
    #[arg(long, value_name = "BYTES")]
    pub(crate) memory: Option<u64>,
    /// CPU-time limit in seconds.
    #[arg(long, value_name = "SECS")]
    pub(crate) cpu: Option<u64>,
    /// Stay as the command's supervisor, a subreaper that ends every process the command
    /// leaves (its own sessions included) when asked (a real-time signal, SIGRTMIN+3) or
    /// when the runner of this pid is gone.
    #[arg(long, value_name = "RUNNER_PID")]
    pub(crate) supervise: Option<u32>,
    /// With `--supervise`: standard input is a pipe to write the command's end to
    /// (`exit N` or `signal N`, then `done` or `running`: whether anything of it is
    /// left); the command gets /dev/null.
    #[arg(long, requires = "supervise")]
    pub(crate) report_status: bool,
    /// The command and its arguments.
    #[arg(last = true, required = true)]
    pub(crate) argv: Vec<String>,
}

/// Options of the hidden `ufo-batch read-document`.
#[derive(Debug, Args)]
pub(crate) struct ReadDocumentArgs {
    /// The document's name (its extension says how to read it); its bytes come on
    /// standard input, from a file the runner opened with the task's rights.
    pub(crate) name: PathBuf,
    /// Print this cell's value instead of the text (`B4`).
    #[arg(long)]
    pub(crate) cell: Option<String>,
    /// The sheet of `--cell` (default: the first).
    #[arg(long)]
    pub(crate) sheet: Option<String>,
}

/// Options of `ufo-batch validate`.
#[derive(Debug, Args)]
pub(crate) struct ValidateArgs {
    /// Task files or folders.
    #[arg(required = true, value_name = "PATH", value_parser = utf8_path)]
    pub(crate) paths: Vec<PathBuf>,
    /// Config file (default: ufo-batch.toml if present): its MCP servers are started and
    /// their tools checked against the plans.
    #[arg(long, value_name = "FILE", env = "UFO_BATCH_CONFIG", value_parser = utf8_path)]
    pub(crate) config: Option<PathBuf>,
}

/// Options of `ufo-batch tools`.
#[derive(Debug, Args)]
pub(crate) struct ToolsArgs {
    /// Config file (default: ufo-batch.toml if present).
    #[arg(long, value_name = "FILE", env = "UFO_BATCH_CONFIG", value_parser = utf8_path)]
    pub(crate) config: Option<PathBuf>,
    /// Print the tools as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}
