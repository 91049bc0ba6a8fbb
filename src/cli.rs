//! The command line (clap only). Options are turned into a validated configuration by
//! `into_overrides` + `config::resolve`; nothing past here sees clap.

use std::path::PathBuf;

use clap::{Args, Parser, ValueEnum};

use crate::config::RunOverrides;
use crate::eval::EvalMode;
use crate::render::FailOn;

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

/// Options of `ufo-batch run`, grouped under headings in the order a user needs them:
/// where results go and how many at once, the tasks, the LLM, failures and stopping,
/// confinement, scale-out. Each says its default.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// Task files or folders (searched recursively for *.json). A run folder of an
    /// earlier run replays its tasks' plan.json files.
    #[arg(value_name = "PATH", required_unless_present_any = ["request", "suite"], value_parser = utf8_path)]
    pub(crate) paths: Vec<PathBuf>,

    /// Results root; the run dir is OUT/NAME (default: results).
    #[arg(long, value_name = "DIR", env = "UFO_BATCH_OUT", help_heading = RESULTS, value_parser = utf8_path)]
    pub(crate) out: Option<PathBuf>,
    /// Run name (default: the first PATH's folder name). The same name resumes the run.
    #[arg(long, help_heading = RESULTS)]
    pub(crate) name: Option<String>,
    /// Sessions at once (default: logical CPUs).
    #[arg(short, long, value_name = "N", env = "UFO_BATCH_JOBS", help_heading = RESULTS)]
    pub(crate) jobs: Option<usize>,
    /// Delete this run's earlier results and start over (default: resume, keeping the
    /// tasks that have a result).
    #[arg(long, conflicts_with = "rerun_failed", help_heading = RESULTS)]
    pub(crate) fresh: bool,
    /// Also re-run tasks whose last result was not `passed`.
    #[arg(long, help_heading = RESULTS)]
    pub(crate) rerun_failed: bool,
    /// How progress is shown (auto: a bar on a terminal, lines otherwise).
    #[arg(long, value_name = "MODE", value_enum, default_value_t = Progress::Auto, help_heading = RESULTS)]
    pub(crate) progress: Progress,
    /// Print a one-line JSON summary of the run on stdout at the end.
    #[arg(long, help_heading = RESULTS)]
    pub(crate) summary_json: bool,
    /// Config file (default: ufo-batch.toml if present).
    #[arg(long, value_name = "FILE", env = "UFO_BATCH_CONFIG", help_heading = RESULTS, value_parser = utf8_path)]
    pub(crate) config: Option<PathBuf>,

    /// Run this request without a task file (repeatable).
    #[arg(long, value_name = "TEXT", help_heading = TASKS)]
    pub(crate) request: Vec<String>,
    /// Wall-clock limit per task, e.g. 90s or 10m (default: 10m).
    #[arg(long, value_name = "DUR", env = "UFO_BATCH_TIMEOUT", help_heading = TASKS)]
    pub(crate) timeout: Option<String>,
    /// Default timeout of one shell command, e.g. 60s (default: 60s).
    #[arg(long, value_name = "DUR", help_heading = TASKS)]
    pub(crate) command_timeout: Option<String>,
    /// Step limit per session (UFO's MAX_STEP; default: 50, or a recorded plan's
    /// length).
    #[arg(long, value_name = "N", help_heading = TASKS)]
    pub(crate) max_steps: Option<u32>,
    /// Round limit per session (UFO's MAX_ROUND: a round is one pass of an agent at one
    /// request; default: 1 for a request; follower sessions always get enough).
    #[arg(long, value_name = "N", help_heading = TASKS)]
    pub(crate) max_rounds: Option<u32>,
    /// Run every task K times (as TASK_ID/rep-1 ... rep-K) to measure pass rates and
    /// flakiness (default: 1).
    #[arg(long, value_name = "K", help_heading = TASKS)]
    pub(crate) repeat: Option<u32>,
    /// How tasks are judged: auto (a task's checks if it has any, else the LLM judge if
    /// a model is set), checks, llm, none, or both (as auto, and the judge also judges
    /// the tasks the checks decide, to measure its agreement with them) (default: auto).
    #[arg(long, value_name = "MODE", value_parser = parse_eval, help_heading = TASKS)]
    pub(crate) eval: Option<EvalMode>,
    /// Desktop tasks: save each step's UI tree as ui_trees/ui_tree_step{N}.json.
    #[arg(long, help_heading = TASKS)]
    pub(crate) save_ui_tree: bool,
    /// The session kind of tasks whose file sets no "mode": normal (the HostAgent and
    /// its AppAgents, or the LinuxAgent), operator (a computer-use agent on the whole
    /// desktop) or normal_operator (the HostAgent handing its subtasks to an operator);
    /// the operator's model is [operator] in ufo-batch.toml (default: normal).
    #[arg(long, value_name = "MODE", value_parser = parse_mode, help_heading = TASKS)]
    pub(crate) mode: Option<crate::task::SessionMode>,
    /// An OSWorld suite to run (evaluation_examples/test_all.json: {domain: [task
    /// id, ...]}, the tasks in examples/ beside it) (repeatable).
    #[arg(long, value_name = "FILE", help_heading = TASKS, value_parser = utf8_path)]
    pub(crate) suite: Vec<PathBuf>,
    /// OSWorld's cache folder (CACHE/<task id>/<file>: the tasks' downloads and gold
    /// files, as OSWorld keeps them); OSWorld tasks that need a file it lacks are
    /// unsupported, never fetched.
    #[arg(long, value_name = "DIR", help_heading = TASKS, value_parser = utf8_path)]
    pub(crate) osworld_cache: Option<PathBuf>,

    /// LLM model; LLM-driven tasks need one.
    #[arg(long, value_name = "MODEL", env = "UFO_BATCH_MODEL", help_heading = LLM)]
    pub(crate) model: Option<String>,
    /// OpenAI-compatible server root (OpenAI, Azure, vLLM, llama.cpp, Ollama; default:
    /// OpenAI's).
    #[arg(long, value_name = "URL", env = "OPENAI_BASE_URL", help_heading = LLM)]
    pub(crate) llm_base_url: Option<String>,
    /// LLM calls in flight at once, run-wide; fewer while the provider rate-limits
    /// (default: --jobs).
    #[arg(long, value_name = "N", help_heading = LLM)]
    pub(crate) max_connections: Option<usize>,
    /// Stop starting tasks once the run's LLM spend reaches this many USD (default: no
    /// limit).
    #[arg(long, value_name = "USD", help_heading = LLM)]
    pub(crate) max_cost: Option<f64>,

    /// Save tasks as experience records in UFO's experience.yaml: never, passed (UFO's
    /// auto), or always (every task whose session reached a verdict) (default: never).
    #[arg(long, value_name = "WHEN", value_parser = parse_save_experience, help_heading = EXPERIENCE)]
    pub(crate) save_experience: Option<crate::experience::SaveExperience>,
    /// Where saved records go: DIR/experience.yaml (default: OUT/experience).
    #[arg(long, value_name = "DIR", help_heading = EXPERIENCE, value_parser = utf8_path)]
    pub(crate) experience_dir: Option<PathBuf>,
    /// Give the agents the records of DIR/experience.yaml most like their task, for
    /// their app, as examples and tips (UFO's RAG_EXPERIENCE; BM25, no network).
    #[arg(long, value_name = "DIR", help_heading = EXPERIENCE, value_parser = utf8_path)]
    pub(crate) experience: Option<PathBuf>,
    /// Give the agents the recorded plans under DIR (task files, or an earlier run's
    /// folder) most like their task, as worked examples (UFO's RAG_DEMONSTRATION).
    #[arg(long, value_name = "DIR", help_heading = EXPERIENCE, value_parser = utf8_path)]
    pub(crate) demonstrations: Option<PathBuf>,
    /// Records given per source and agent (UFO's RAG_EXPERIENCE_RETRIEVED_TOPK;
    /// default: 5).
    #[arg(long, value_name = "K", help_heading = EXPERIENCE)]
    pub(crate) experience_top_k: Option<usize>,

    /// Retry a task up to N times after an infrastructure error, never after `failed`
    /// (default: 0).
    #[arg(long, value_name = "N", help_heading = STOPPING)]
    pub(crate) retries: Option<u32>,
    /// Stop starting tasks after the first task that does not pass.
    #[arg(long, conflicts_with = "max_fail", help_heading = STOPPING)]
    pub(crate) fail_fast: bool,
    /// Stop starting tasks after N tasks failed, erred or timed out (default: never).
    #[arg(long, value_name = "N", help_heading = STOPPING)]
    pub(crate) max_fail: Option<u32>,
    /// After Ctrl-C or SIGTERM, how long running tasks may finish before they are
    /// stopped (default: 30s).
    #[arg(long, value_name = "DUR", help_heading = STOPPING)]
    pub(crate) grace: Option<String>,

    /// How commands are confined: auto (a jail per task where the kernel allows one,
    /// else Landlock, else bubblewrap), jail, landlock, bwrap or none (default: auto).
    #[arg(long, value_name = "MODE", value_parser = parse_sandbox, help_heading = CONFINEMENT)]
    pub(crate) sandbox: Option<crate::executor::sandbox::SandboxMode>,

    /// Run only shard I of N (stable hash of the task id), e.g. 2/4.
    #[arg(long, value_name = "I/N", conflicts_with = "shards", help_heading = SCALE_OUT)]
    pub(crate) shard: Option<String>,
    /// Run this machine's shard of N, from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID.
    #[arg(long, value_name = "N", help_heading = SCALE_OUT)]
    pub(crate) shards: Option<u32>,
    /// Listen on ADDR (e.g. 0.0.0.0:5000) for UFO's device clients and run the tasks on
    /// them, one task per device at a time (the token is read from
    /// $UFO_BATCH_DEVICE_TOKEN).
    #[arg(long, value_name = "ADDR", help_heading = SCALE_OUT)]
    pub(crate) devices: Option<String>,
    /// With --devices: wait for N devices to connect before the first task starts
    /// (at most [devices] wait_for; default: 0, start at once).
    #[arg(long, value_name = "N", help_heading = SCALE_OUT)]
    pub(crate) devices_wait: Option<usize>,
}

/// `run --help`'s headings.
const RESULTS: &str = "Results and concurrency";
const TASKS: &str = "Tasks";
const LLM: &str = "LLM";
const EXPERIENCE: &str = "Experience";
const STOPPING: &str = "Failures and stopping";
const CONFINEMENT: &str = "Confinement";
const SCALE_OUT: &str = "Scale-out";

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
fn utf8_path(s: &str) -> Result<PathBuf, std::convert::Infallible> {
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

/// Progress display choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Progress {
    /// A bar on a terminal, lines otherwise.
    Auto,
    /// A live bar.
    Bar,
    /// One line per finished task.
    Lines,
    /// Only the final summary.
    Quiet,
}

impl RunArgs {
    /// The options that override the config file.
    pub(crate) fn into_overrides(self) -> (RunOverrides, Option<PathBuf>, Progress, bool) {
        let overrides = RunOverrides {
            paths: self.paths,
            suites: self.suite,
            out: self.out,
            name: self.name,
            jobs: self.jobs,
            timeout: self.timeout,
            max_steps: self.max_steps,
            max_rounds: self.max_rounds,
            eval: self.eval,
            command_timeout: self.command_timeout,
            fresh: self.fresh,
            rerun_failed: self.rerun_failed,
            save_ui_tree: self.save_ui_tree,
            model: self.model,
            llm_base_url: self.llm_base_url,
            max_cost: self.max_cost,
            max_connections: self.max_connections,
            devices: self.devices,
            devices_wait: self.devices_wait,
            requests: self.request,
            sandbox: self.sandbox,
            retries: self.retries,
            max_fail: if self.fail_fast {
                Some(1)
            } else {
                self.max_fail
            },
            shard: self.shard,
            shards: self.shards,
            grace: self.grace,
            repeat: self.repeat,
            experience: crate::config::ExperienceFlags {
                save: self.save_experience,
                dir: self.experience_dir,
                retrieve: self.experience,
                demonstrations: self.demonstrations,
                top_k: self.experience_top_k,
            },
            mode: self.mode,
            osworld_cache: self.osworld_cache,
        };
        (overrides, self.config, self.progress, self.summary_json)
    }
}

fn parse_mode(s: &str) -> Result<crate::task::SessionMode, String> {
    s.parse()
}

fn parse_eval(s: &str) -> Result<EvalMode, crate::eval::UnknownEvalMode> {
    s.parse()
}

fn parse_save_experience(
    s: &str,
) -> Result<crate::experience::SaveExperience, crate::experience::UnknownPolicy> {
    s.parse()
}

fn parse_sandbox(
    s: &str,
) -> Result<crate::executor::sandbox::SandboxMode, crate::executor::sandbox::SandboxError> {
    s.parse()
}
