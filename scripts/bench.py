"""The runner against the physical limit, for scripts/bench.sh (which builds and
generates the inputs). Every figure comes from this run; rounds are interleaved so
that a slow moment of the machine hits every contender alike, and medians are shown.

Usage: python3 scripts/bench.py plans BIN[,BIN...] PLANS_DIR OUT ROUNDS SANDBOX JOBS...
       python3 scripts/bench.py llm BIN REQUESTS_DIR OUT MOCK_URL MOCK_PID DELAY_MS STEPS SANDBOX ROUNDS JOBS...
"""

import json
import os
import resource
import statistics
import subprocess
import sys
import time


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


RUNS = 0


def fresh(out, name):
    """A new folder name under out for each run: nothing is deleted while measuring, as
    ext4 without a journal (as on these machines) skips every inode deleted in the last
    5 s (305 s once its table block is written again) when it makes a file, which would
    charge one run's deletions to the next. bench.sh deletes them all at the end."""
    global RUNS
    RUNS += 1
    return f"{name}-{os.getpid()}-{RUNS}"


def timed(argv, must_succeed=False, **kw):
    """Runs argv; returns (wall seconds, CPU seconds of it and all it started)."""
    cpu, start = children_cpu(), time.monotonic()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    assert not must_succeed or done.returncode == 0, f"{argv[0]} failed: {done.returncode}"
    return time.monotonic() - start, children_cpu() - cpu


def task_files(folder):
    return sorted(
        os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs if f.endswith(".json")
    )


def bare_loop(plans, out, jobs):
    """The limit: each task's commands as the runner gives them to a shell (`sh -c
    COMMAND`, one after another, in a fresh folder per task), started by xargs -P."""
    tasks = task_files(plans)
    script = os.path.join(out, "bare-task.sh")
    os.makedirs(out, exist_ok=True)
    with open(script, "w") as f:
        f.write(
            'set -e\nd="$1/$(basename "$2" .json)"\nmkdir -p "$d"\ncd "$d"\n'
            'sh -c true\n[ "$(sh -c "printf ok")" = ok ]\n'
        )
    work = os.path.join(out, fresh(out, "bare"))
    os.makedirs(work)
    listing = os.path.join(out, "bare-list.txt")
    with open(listing, "w") as f:
        f.write("\n".join(tasks) + "\n")
    # Every task must run its commands (xargs fails if one did not): a loop whose tasks
    # fail early is no limit (an earlier version of this script measured one).
    with open(listing) as stdin:
        return timed(
            ["xargs", "-P", str(jobs), "-n", "1", "sh", script, work],
            must_succeed=True,
            stdin=stdin,
        )


def runner(bin, plans, out, name, jobs, sandbox):
    name = fresh(out, name)
    wall, cpu = timed(
        [bin, "run", plans, "--out", out, "--name", name, "--jobs", str(jobs),
         "--sandbox", sandbox, "--progress", "quiet"]
    )
    with open(os.path.join(out, name, "run.json")) as f:
        run = json.load(f)
    totals = run["totals"]
    assert totals["passed"] == run["tasks_selected"], f"not every task passed: {totals}"
    return wall, cpu, run["runner"]


def plans_table(bins, plans, out, rounds, sandbox, jobs_list):
    n = len(task_files(plans))
    print(f"{'jobs':>5} {'binary':>10} {'bare t/s':>9} {'ufo t/s':>8} {'ratio':>6} "
          f"{'cpu/task ms':>12} {'bare cpu':>9} {'runner ms':>10} {'syncs/task':>11} {'rss MB':>7}")
    for jobs in jobs_list:
        bare, ours = [], {b: [] for b in bins}
        for _ in range(rounds):
            bare.append(bare_loop(plans, out, jobs))
            for b in bins:
                ours[b].append(runner(b, plans, out, f"plans-j{jobs}", jobs, sandbox))
        bare_wall = statistics.median(w for w, _ in bare)
        bare_cpu = statistics.median(c for _, c in bare)
        for b, runs in ours.items():
            wall = statistics.median(w for w, _, _ in runs)
            cpu = statistics.median(c for _, c, _ in runs)
            own = statistics.median(r["cpu_s"] for _, _, r in runs)
            syncs = statistics.median(r.get("disk_syncs", float("nan")) for _, _, r in runs)
            rss = max(r["peak_rss_kb"] for _, _, r in runs)
            label = os.path.abspath(b).split(os.sep)[-4] if len(bins) > 1 else "ufo-batch"
            print(f"{jobs:>5} {label[-10:]:>10} {n / bare_wall:>9.0f} {n / wall:>8.0f} "
                  f"{bare_wall / wall:>6.2f} {cpu * 1000 / n:>12.2f} {bare_cpu * 1000 / n:>9.2f} "
                  f"{own * 1000 / n:>10.3f} {syncs / n:>11.3f} {rss / 1024:>7.1f}")
    print("  bare t/s: tasks/s of the bare loop (the limit); ratio = ufo-batch / bare;")
    print("  cpu/task: all CPU of the run (runner, jail, shells) per task, bare cpu the loop's;")
    print("  runner ms: the runner's own CPU per task (run.json runner.cpu_s); syncs/task: its")
    print("  fsync/syncfs calls per task (run.json runner.disk_syncs; nan: not counted by that")
    print("  version); rss: the runner's peak.")


def proc_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick


def llm_table(bin, requests, out, url, mock_pid, delay_ms, steps, sandbox, jobs_list, rounds):
    """Each --jobs level `rounds` times, interleaved; the median makespan, and the range."""
    n = len(task_files(requests))
    calls = n * steps
    runs = {jobs: [] for jobs in jobs_list}
    for _ in range(rounds):
        for jobs in jobs_list:
            name = fresh(out, f"llm-s{steps}-j{jobs}")
            mock_before = proc_cpu(mock_pid)
            wall, _ = timed(
                [bin, "run", requests, "--out", out, "--name", name, "--jobs", str(jobs),
                 "--sandbox", sandbox, "--model", "bench", "--llm-base-url", url,
                 "--eval", "none", "--progress", "quiet"]
            )
            mock_cpu = proc_cpu(mock_pid) - mock_before
            with open(os.path.join(out, name, "run.json")) as f:
                run = json.load(f)
            assert run["totals"]["passed"] == n, f"not every task passed: {run['totals']}"
            runs[jobs].append((wall, run["runner"]["cpu_s"] * 1000 / n, mock_cpu / calls))
    print(f"{'jobs':>5} {'makespan s':>11} {'ideal s':>8} {'ratio':>6} {'range':>11} "
          f"{'runner ms':>10} {'mock cpu/call':>14} {'mock limit/s':>13} {'asked/s':>8}")
    for jobs in jobs_list:
        wall = statistics.median(r[0] for r in runs[jobs])
        ideal = calls * delay_ms / 1000 / min(jobs, n)
        low, high = (min(r[0] for r in runs[jobs]) / ideal, max(r[0] for r in runs[jobs]) / ideal)
        runner_ms = statistics.median(r[1] for r in runs[jobs])
        per_call = statistics.median(r[2] for r in runs[jobs])
        limit = 1 / per_call if per_call > 0 else float("inf")
        print(f"{jobs:>5} {wall:>11.2f} {ideal:>8.2f} {wall / ideal:>6.2f} "
              f"{f'{low:.2f}-{high:.2f}':>11} {runner_ms:>10.2f} {per_call * 1e6:>12.0f}us "
              f"{limit:>13.0f} {calls / wall:>8.0f}")
    print(f"  median of {rounds} interleaved rounds (range: the fastest and slowest round);")
    print("  ideal = calls x delay / jobs; mock limit/s: calls per CPU-second the mock server")
    print("  can serve (its own CPU per call), against asked/s, the calls per second the run made.")


def main():
    mode = sys.argv[1]
    if mode == "plans":
        bin, plans, out, rounds, sandbox = sys.argv[2:7]
        plans_table(bin.split(","), plans, out, int(rounds), sandbox,
                    [int(j) for j in sys.argv[7:]])
    else:
        bin, requests, out, url, pid, delay, steps, sandbox, rounds = sys.argv[2:11]
        llm_table(bin, requests, out, url, int(pid), int(delay), int(steps), sandbox,
                  [int(j) for j in sys.argv[11:]], int(rounds))


if __name__ == "__main__":
    main()
