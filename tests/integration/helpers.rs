//! A temporary project folder with task files, and the binary run on it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Longest a single run of the binary may take before the test fails.
const WATCHDOG: Duration = Duration::from_secs(180);

/// A temporary UFO-style project folder `proj/` holding task files under `tasks/` and
/// results under `results/` (runs of `tasks/` are named `proj`, after the project).
pub(crate) struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Project {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("proj");
        std::fs::create_dir(&root).unwrap();
        Self { _dir: dir, root }
    }

    /// A project in memory (`/dev/shm`, where there is one), for tests that make many
    /// files.
    pub(crate) fn in_memory() -> Self {
        let shm = Path::new("/dev/shm");
        let dir = if shm.is_dir() {
            tempfile::tempdir_in(shm).expect("temp dir")
        } else {
            tempfile::tempdir().expect("temp dir")
        };
        let root = dir.path().join("proj");
        std::fs::create_dir(&root).unwrap();
        Self { _dir: dir, root }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.root
    }

    /// Writes `tasks/<rel>` as pretty JSON.
    pub(crate) fn task(&self, rel: &str, value: Value) -> &Self {
        self.file(
            &format!("tasks/{rel}"),
            &serde_json::to_string_pretty(&value).unwrap(),
        )
    }

    /// Writes any file under the project.
    pub(crate) fn file(&self, rel: &str, text: &str) -> &Self {
        let path = self.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }

    /// Runs `ufo-batch <args>` in the project folder.
    pub(crate) fn cmd(&self, args: &[&str]) -> Output {
        run_binary(self.path(), args, &[])
    }

    /// Runs `ufo-batch <args>` with extra environment variables.
    pub(crate) fn cmd_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        run_binary(self.path(), args, env)
    }

    /// Runs `ufo-batch run tasks --progress lines <extra>` and reads `results/proj`.
    pub(crate) fn run(&self, extra: &[&str]) -> Output {
        let mut args = vec!["run", "tasks", "--progress", "lines"];
        args.extend_from_slice(extra);
        self.cmd(&args)
    }
}

/// What one run of the binary did.
/// `run tasks` under Landlock, its progress a line per task.
pub(crate) const RUN_UNDER_LANDLOCK: [&str; 6] = [
    "run",
    "tasks",
    "--progress",
    "lines",
    "--sandbox",
    "landlock",
];

pub(crate) struct Output {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) cwd: PathBuf,
}

impl Output {
    /// The run dir of a run named `name` under `results/`.
    pub(crate) fn run_dir(&self, name: &str) -> PathBuf {
        self.cwd.join("results").join(name)
    }

    /// `results/proj/<id>/status.json`.
    pub(crate) fn status(&self, id: &str) -> Value {
        read_json(&self.run_dir("proj").join(id).join("status.json"))
    }

    /// The `status` field of a task.
    pub(crate) fn status_of(&self, id: &str) -> String {
        self.status(id)["status"]
            .as_str()
            .unwrap_or("?")
            .to_string()
    }

    /// A file of a task's results folder.
    pub(crate) fn task_file(&self, id: &str, name: &str) -> String {
        let path = self.run_dir("proj").join(id).join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// A task's row of `results/proj/summary.json`: its result, also for a task that
    /// never started (which has no folder).
    pub(crate) fn row(&self, id: &str) -> Value {
        let summary = self.summary();
        summary["tasks"]
            .as_array()
            .and_then(|tasks| tasks.iter().find(|t| t["id"] == id))
            .cloned()
            .unwrap_or_else(|| panic!("no row for {id}: {summary}"))
    }

    /// `results/proj/summary.json`.
    pub(crate) fn summary(&self) -> Value {
        read_json(&self.run_dir("proj").join("summary.json"))
    }

    /// Fails the test showing the output unless the exit code is `code`.
    #[track_caller]
    pub(crate) fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code, code,
            "exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

/// Runs the binary with a watchdog, so a hang fails the test instead of stalling it.
pub(crate) fn run_binary(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    spawn_binary(cwd, args, env).wait()
}

/// Starts the binary in `cwd` with a clean environment (none of the variables ufo-batch
/// reads) plus `env`, capturing its output.
fn spawn_binary(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Started {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ufo-batch"));
    command.args(args).current_dir(cwd);
    for var in [
        "UFO_BATCH_JOBS",
        "UFO_BATCH_OUT",
        "UFO_BATCH_TIMEOUT",
        "UFO_BATCH_CONFIG",
        "UFO_BATCH_MODEL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "JOB_COMPLETION_INDEX",
        "SLURM_ARRAY_TASK_ID",
    ] {
        command.env_remove(var);
    }
    let mut child = command
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ufo-batch");
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    Started {
        child,
        cwd: cwd.to_path_buf(),
        out: Some(std::thread::spawn(move || {
            std::io::read_to_string(stdout).unwrap_or_default()
        })),
        err: Some(std::thread::spawn(move || {
            std::io::read_to_string(stderr).unwrap_or_default()
        })),
    }
}

pub(crate) fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}\n{text}", path.display()))
}

/// A recorded plan of shell commands, all expected to succeed.
pub(crate) fn shell_plan(request: &str, commands: &[&str]) -> Value {
    let actions: Vec<Value> = commands
        .iter()
        .map(|c| serde_json::json!({"action": "execute_command", "parameters": {"command": c}}))
        .collect();
    serde_json::json!({"request": request, "actions": actions})
}

/// Processes (not zombies) whose command line begins with `prefix` (the program and
/// its first arguments, as `sleep 304.9`): the commands themselves, not the shells that
/// started them (whose `-c` text may hold the same words).
pub(crate) fn commands_running(prefix: &str) -> Vec<i32> {
    processes_matching(|cmdline| cmdline.starts_with(prefix))
}

/// The pids of live processes whose command line holds `needle` (a unique argument
/// marks a test's processes, whatever PID namespace they run in).
pub(crate) fn processes_running(needle: &str) -> Vec<i32> {
    processes_matching(|cmdline| cmdline.contains(needle))
}

/// The pids of live processes whose working folder is `dir` or below it (a runner's
/// helpers, such as its jail factory, work where the runner was started).
pub(crate) fn processes_working_in(dir: &Path) -> Vec<i32> {
    processes_matching(|_| true)
        .into_iter()
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(dir))
        })
        .collect()
}

/// Processes (not zombies) whose command line (arguments joined by spaces) `fits`.
fn processes_matching(fits: impl Fn(&str) -> bool) -> Vec<i32> {
    process_table()
        .into_iter()
        .filter(|p| !p.zombie)
        .map(|p| p.pid)
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            fits(&String::from_utf8_lossy(&cmdline).replace('\0', " "))
        })
        .collect()
}

/// A process as `/proc/PID/stat` gives it.
pub(crate) struct ProcessStat {
    pub(crate) pid: i32,
    /// It has ended and waits for its parent to reap it.
    pub(crate) zombie: bool,
    /// Its parent's pid.
    pub(crate) parent: i32,
}

/// The fields of a `/proc/.../stat` line from the third (the state) on: they follow the
/// command name in brackets, which may hold anything.
pub(crate) fn stat_fields(stat: &str) -> Option<Vec<&str>> {
    Some(stat.rsplit_once(')')?.1.split_whitespace().collect())
}

/// Every process of the machine (those that end meanwhile left out).
pub(crate) fn process_table() -> Vec<ProcessStat> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let fields = stat_fields(&stat)?;
            let zombie = *fields.first()? == "Z";
            let parent = fields.get(1)?.parse().ok()?;
            Some(ProcessStat {
                pid,
                zombie,
                parent,
            })
        })
        .collect()
}

/// The binary, started and not yet waited for.
pub(crate) struct Started {
    child: std::process::Child,
    cwd: PathBuf,
    out: Option<std::thread::JoinHandle<String>>,
    err: Option<std::thread::JoinHandle<String>>,
}

impl Project {
    /// Starts `ufo-batch <args>` without waiting for it.
    pub(crate) fn start(&self, args: &[&str]) -> Started {
        spawn_binary(self.path(), args, &[])
    }

    /// Starts `ufo-batch <args>` with extra environment variables, without waiting.
    pub(crate) fn start_env(&self, args: &[&str], env: &[(&str, &str)]) -> Started {
        spawn_binary(self.path(), args, env)
    }

    /// Runs `ufo-batch <args>`, failing the test if it takes longer than `limit`.
    pub(crate) fn cmd_within(&self, args: &[&str], limit: Duration) -> Output {
        spawn_binary(self.path(), args, &[]).wait_within(limit)
    }
}

impl Drop for Started {
    /// A test that fails half-way leaves no runner behind.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Started {
    /// The runner's process id.
    pub(crate) fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Sends `signal` (a libc signal number).
    pub(crate) fn signal(&self, signal: i32) {
        // SAFETY: kill only sends a signal to our own child.
        unsafe {
            libc::kill(self.child.id() as i32, signal);
        }
    }

    /// Waits (with the watchdog) and collects the output.
    pub(crate) fn wait(self) -> Output {
        self.wait_within(WATCHDOG)
    }

    /// Waits at most `limit` and collects the output, with the runner's peak resident
    /// memory in KiB (its `VmHWM`, read until it ends).
    pub(crate) fn wait_measuring(self, limit: Duration) -> (Output, u64) {
        let pid = self.pid();
        let status = format!("/proc/{pid}");
        let peak = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let watching = {
            let peak = std::sync::Arc::clone(&peak);
            std::thread::spawn(move || {
                while std::fs::metadata(&status).is_ok() {
                    if let Some(kib) = peak_rss_kib(pid) {
                        peak.fetch_max(kib, std::sync::atomic::Ordering::Relaxed);
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            })
        };
        let out = self.wait_within(limit);
        let _ = watching.join();
        (out, peak.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Waits at most `limit` (a hang fails the test) and collects the output.
    pub(crate) fn wait_within(mut self, limit: Duration) -> Output {
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > limit {
                let _ = self.child.kill();
                panic!("ufo-batch did not finish within {limit:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        use std::os::unix::process::ExitStatusExt;
        Output {
            code: status
                .code()
                .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
            stdout: self.out.take().unwrap().join().unwrap(),
            stderr: self.err.take().unwrap().join().unwrap(),
            cwd: self.cwd.clone(),
        }
    }
}

/// The peak resident memory of process `pid` so far, in KiB (its `VmHWM`), while it runs.
pub(crate) fn peak_rss_kib(pid: i32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// Polls until `ready` holds, `limit` at most; false if it never does.
pub(crate) fn eventually_within(mut ready: impl FnMut() -> bool, limit: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if ready() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    ready()
}

/// Polls until `ready` holds (about ten seconds at most); false if it never does.
pub(crate) fn eventually(mut ready: impl FnMut() -> bool) -> bool {
    for _ in 0..500 {
        if ready() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// How many tasks of `run_dir` have a status.json saying `status`.
pub(crate) fn count_status(run_dir: &Path, status: &str) -> usize {
    walkdir::WalkDir::new(run_dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_name() == "status.json")
        .filter(|e| {
            std::fs::read_to_string(e.path())
                .ok()
                .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                .is_some_and(|v| v["status"] == status)
        })
        .count()
}

/// Fails the test unless its stack is here, naming the command that installs it. A test
/// never passes by skipping: a test that needs a stack carries
/// `#[cfg_attr(skip_<stack>, ignore = "...")]`, and when the user asks to skip that
/// stack's tests (`UFO_BATCH_SKIP_TESTS=desktop,mcp` or `all`; build.rs turns it into
/// the `skip_<stack>` cfg and `UFO_BATCH_SKIPPED_STACKS`) the harness reports the test
/// as ignored and never runs it. So a test that gets here while its stack is skipped
/// lacks that attribute: it fails saying so.
pub(crate) fn require_stack(stack: &str, present: bool, install: &str) {
    let skipped = env!("UFO_BATCH_SKIPPED_STACKS")
        .split(',')
        .any(|s| s == stack);
    assert!(
        !skipped,
        "this test needs the {stack} stack, which UFO_BATCH_SKIP_TESTS asks to skip, but it \
         is not marked `#[cfg_attr(skip_{stack}, ignore = \"...\")]`"
    );
    assert!(
        present,
        "the {stack} stack is not installed: run `{install}` (scripts/test.sh installs \
         every stack), or set UFO_BATCH_SKIP_TESTS={stack} to skip the tests that need it"
    );
}

/// A loopback port free when asked (for a server a test starts).
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
