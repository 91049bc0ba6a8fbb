//! The options of `ufo-batch run`, under their headings, and how they become the
//! overrides of the config file (`into_overrides`), with their value parsers.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::utf8_path;
use crate::config::RunOverrides;
use crate::eval::EvalMode;

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
