#!/usr/bin/env bash
# slurm-test.sh: run ufo-batch as a Slurm job array on a real single-node Slurm cluster
# started on this machine, then cancel one shard mid-run and resume it.
#
#   sudo scripts/slurm-test.sh [UFO_BATCH]
#
# Needs root and Debian 12 (bookworm). Installs slurmctld, slurmd, slurm-client, munge and
# jq if missing; starts munged, slurmctld and slurmd (no systemd) with a config and state in
# a private folder; stops all of them again on exit, also on failure or Ctrl-C.
#
# What it proves:
#   1. `sbatch --wait --array=0-3` of `ufo-batch run PLANS --shards 4`: each array task runs
#      its shard (SLURM_ARRAY_TASK_ID 0..3 -> run dirs plans-shard-1-of-4 .. plans-shard-4-of-4),
#      and `ufo-batch merge` puts every task of the batch together exactly once.
#   2. `scancel` of one array task mid-run, then `sbatch --array=K` of that index alone, into
#      the same results: the tasks the scheduler's SIGTERM killed end `cancelled` (not
#      `failed`), and the resumed shard keeps what was final, runs them again, and ends with
#      every task final.
#
# Settings (environment):
#   UFO_BATCH       the runner, or the first argument (default: the project's
#                   target/release/ufo-batch; ufo-batch-jail beside it)
#   PLANS           the sample plans (default: the project's plans/; those under failing/ fail)
#   SLURM_TEST_DIR  the private folder: config, state, logs, results
#                   (default /tmp/ufo-batch-slurm-test; emptied at start, kept at the end)
#   SLOW_SECONDS    how long each slow task of the cancel test sleeps (default 8)
#   GRACE           the runner's --grace (default 10s; must stay below KillWait, see below)
#   SLURM_TEST_PORT slurmctld's port (default 16817, not Slurm's 6817, so that a Slurm already
#                   on the machine is left alone); slurmd uses the next one
#
# Exit code: 0 when every check passed, 1 when a check failed, 2 when the cluster could not
# be set up, 130 when interrupted.
set -euo pipefail

T0=$SECONDS
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)   # the project (this is scripts/slurm-test.sh)
UFO_BATCH=${1:-${UFO_BATCH:-$ROOT/target/release/ufo-batch}}
PLANS=${PLANS:-$ROOT/plans}
WORK=${SLURM_TEST_DIR:-/tmp/ufo-batch-slurm-test}
SLOW_SECONDS=${SLOW_SECONDS:-8}
GRACE=${GRACE:-10s}
PORT=${SLURM_TEST_PORT:-16817}
SHARDS=4
JOBS=2   # sessions at once in each shard
# Slurm's KillWait: after the SIGTERM of a scancel (or of a time limit, or a requeue) Slurm
# waits this long, then sends SIGKILL. The runner's --grace must be shorter, so that it can
# stop its running tasks and record them (`cancelled`) before the SIGKILL. 30 s is Slurm's
# default; the config states it so that the relation is visible.
KILL_WAIT=30

MUNGE=$WORK/munge
SLURM=$WORK/slurm
LOGS=$WORK/logs
SOCKET=$MUNGE/run/munge.socket
export SLURM_CONF=$SLURM/slurm.conf   # every Slurm command needs it (else "DNS SRV lookup failed")

# =============================================================================================
# Helpers

say() { printf '[%4ss] %s\n' "$((SECONDS - T0))" "$*"; }
die() { say "SETUP ERROR: $*" >&2; exit 2; }
CHECKS=()   # "PASS ..." / "FAIL ...", printed again in the summary
FAILED=0
pass() { CHECKS+=("PASS  $*"); say "ok:   $*"; }
fail() { CHECKS+=("FAIL  $*"); say "FAIL: $*"; FAILED=1; }

# wait_for SECONDS WHAT COMMAND...: run COMMAND every 0.2 s until it succeeds; false on timeout.
wait_for() {
    local limit=$1 what=$2 end=$((SECONDS + $1))
    shift 2
    until "$@"; do
        if ((SECONDS >= end)); then
            say "timed out after ${limit}s waiting for $what"
            return 1
        fi
        sleep 0.2
    done
}

no_jobs_left() { [[ -z $(squeue -h -o %i 2>/dev/null) ]]; }
job_gone() { [[ -z $(squeue -h -j "$1" -o %i 2>/dev/null) ]]; }

# element_states JOB: "K STATE EXITCODE" per array task, from slurmctld (no accounting needed;
# slurmctld keeps ended jobs for MinJobAge, 300 s)
element_states() {
    scontrol -o show job "$1" |
        sed -n 's/.*ArrayTaskId=\([0-9]*\) .*JobState=\([A-Z_]*\) .* ExitCode=\([0-9:]*\).*/\1 \2 \3/p' |
        sort -n
}
# an array task that ran to its end: exit 0 (all passed) or 1 (some task did not pass)
ended_normally() { awk '$2 == "COMPLETED" || ($2 == "FAILED" && $3 == "1:0")'; }

show_log() {   # FILE: print a job's output, indented
    echo "    --- $(basename "$1")"
    sed 's/^/    | /' "$1" 2>/dev/null || echo "    | (no output file)"
}

# task ids of a plans folder, as ufo-batch names them: the path without .json
plan_ids() { (cd "$1" && find . -name '*.json' -not -path '*/.*' | sed 's|^\./||; s|\.json$||' | sort); }
# the status each task of the sample sets must end with
expected_status() { [[ $1 == failing/* ]] && echo failed || echo passed; }

# task_rows RUN_DIR: "id<TAB>status<TAB>attempts<TAB>error" for every task of a run, read from
# each task's own status.json (or its row of summary.json: a task the stop caught before it
# started has no folder). The tasks are those of summary.json, or, when the runner ended
# before writing it, every task folder with a status.json.
task_rows() {
    local run=$1 id f
    if [[ -f $run/summary.json ]]; then
        jq -r '.tasks[].id' "$run/summary.json"
    else
        find "$run" -name status.json -not -path '*/attempts/*' -not -path '*/workspace/*' |
            while IFS= read -r f; do jq -r .id "$f"; done
    fi | sort | while IFS= read -r id; do
        if [[ -f $run/$id/status.json ]]; then
            jq -r '[.id, .status, (.attempts | length), (.error // "" | gsub("[\t\n]"; " "))] | @tsv' \
                "$run/$id/status.json"
        elif [[ -f $run/summary.json ]]; then
            jq -r --arg id "$id" '.tasks[] | select(.id == $id)
                | [.id, .status, .attempts, (.error // "" | gsub("[\t\n]"; " "))] | @tsv' \
                "$run/summary.json"
        else
            printf '%s\t(none)\t0\tno status.json\n' "$id"
        fi
    done
}

show_rows() {   # TITLE TSV
    echo "    $1:"
    awk -F'\t' '{printf "      %-26s %-10s attempts %s%s\n", $1, $2, $3, ($4 == "" ? "" : "  " $4)}' "$2"
}

# check_first_run LABEL TSV: the run the scancel stopped. Every task is final as expected or
# `cancelled`; a task whose command the SIGTERM killed must not be a final `failed`.
check_first_run() {
    local label=$1 tsv=$2 id status err exp why wrong="" n_cancelled=0
    while IFS=$'\t' read -r id status _ err; do
        exp=$(expected_status "$id")
        case $status in
        cancelled) n_cancelled=$((n_cancelled + 1)) ;;
        "$exp") ;;
        failed)
            why="recorded as a final 'failed' ($err)"
            if [[ $err == *signal* ]]; then
                why+=": its command was killed by the scheduler's SIGTERM while the runner was"
                why+=" stopping; it must be 'cancelled', so that the resumed run runs it again"
            fi
            wrong+="      $id: $why"$'\n'
            ;;
        *) wrong+="      $id: '$status', expected '$exp' or 'cancelled'${err:+ ($err)}"$'\n' ;;
        esac
    done <"$tsv"
    if [[ -n $wrong ]]; then
        fail "$label: wrong statuses:"$'\n'"${wrong%$'\n'}"
    elif ((n_cancelled == 0)); then
        fail "$label: no task is 'cancelled': the scancel did not catch a task mid-run"
    else
        pass "$label: $n_cancelled task(s) cancelled, none wrongly failed"
    fi
}

# check_resumed LABEL FIRST_TSV RESUMED_TSV: the same shard after its resume. Every task is
# final and as expected; what was final before is kept; what was cancelled ran again (it has
# one attempt more).
check_resumed() {
    local label=$1 first_tsv=$2 tsv=$3 id status attempts err exp first first_attempts why wrong="" missing
    while IFS=$'\t' read -r id status attempts err; do
        exp=$(expected_status "$id")
        first=$(awk -F'\t' -v id="$id" '$1 == id {print $2}' "$first_tsv")
        first_attempts=$(awk -F'\t' -v id="$id" '$1 == id {print $3}' "$first_tsv")
        if [[ $status != "$exp" ]]; then
            why="'$status', expected '$exp'${err:+ ($err)}"
            [[ $first == "$status" ]] && why+="; kept as it was recorded by the cancelled run"
            wrong+="      $id: $why"$'\n'
        elif [[ $first == cancelled ]] && ((attempts <= first_attempts)); then
            wrong+="      $id: was cancelled, but the resumed run did not run it (attempts: $first_attempts, then $attempts)"$'\n'
        elif [[ -n $first && $first != cancelled && $first != "$status" ]]; then
            wrong+="      $id: was final ('$first') and is now '$status'"$'\n'
        fi
    done <"$tsv"
    missing=$(comm -23 <(cut -f1 "$first_tsv" | sort) <(cut -f1 "$tsv" | sort))
    [[ -z $missing ]] || wrong+="      missing after the resume: ${missing//$'\n'/ }"$'\n'
    if [[ -n $wrong ]]; then
        fail "$label:"$'\n'"${wrong%$'\n'}"
    elif [[ ! -s $tsv ]]; then
        fail "$label: no tasks found"
    else
        pass "$label: every task final and as expected; the cancelled ones ran again and passed"
    fi
}

# check_merge LABEL OUT PLANS RUN_DIRS...: merge the shards, then: merge printed no problem,
# every task of the batch (the task files under PLANS) is there exactly once, each with the
# status it must have.
check_merge() {
    local label=$1 out=$2 plans=$3 rc=0 want got dups missing extra wrong totals n_failing
    shift 3
    "$UFO_BATCH" merge "$out" "$@" >"$out.log" 2>&1 || rc=$?
    sed 's/^/    merge: /' "$out.log"
    if ((rc <= 1)) && ! grep -qv '^merged ' "$out.log"; then
        pass "$label: merge of $# shards printed no problem (exit $rc)"
    else
        fail "$label: merge exit $rc; problems: $(grep -v '^merged ' "$out.log" | tr '\n' ' ')"
    fi
    [[ -f $out/summary.json ]] || { fail "$label: merge wrote no summary.json"; return 0; }
    want=$(plan_ids "$plans")
    got=$(jq -r '.tasks[].id' "$out/summary.json" | sort)
    dups=$(uniq -d <<<"$got")
    missing=$(comm -23 <(echo "$want") <(uniq <<<"$got"))
    extra=$(comm -13 <(echo "$want") <(uniq <<<"$got"))
    if [[ -z $dups$missing$extra ]]; then
        pass "$label: all $(grep -c . <<<"$want") tasks of the batch in the merged summary, each exactly once"
    else
        fail "$label: merged summary: twice [${dups//$'\n'/ }] missing [${missing//$'\n'/ }] not in the batch [${extra//$'\n'/ }]"
    fi
    wrong=$(jq -r '.tasks[] | [.id, .status, (.error // "")] | @tsv' "$out/summary.json" |
        while IFS=$'\t' read -r id status err; do
            exp=$(expected_status "$id")
            if [[ $status != "$exp" ]]; then
                printf '      %s: %s, expected %s%s\n' "$id" "$status" "$exp" "${err:+ ($err)}"
            fi
        done)
    totals=$(jq -r '.totals | "\(.total) tasks: \(.passed) passed, \(.failed) failed, \(.error) error, \(.timeout) timeout, \(.cancelled) cancelled"' "$out/summary.json")
    n_failing=$(grep -c '^failing/' <<<"$want" || true)
    if [[ -z $wrong ]]; then
        pass "$label: $totals (the $n_failing under failing/ fail, as they must)"
    else
        fail "$label: $totals; wrong statuses:"$'\n'"$wrong"
    fi
}

# The checks above can be tried on their own: `source slurm-test.sh` defines them and stops here.
if [[ ${BASH_SOURCE[0]} != "$0" ]]; then
    return 0
fi

# =============================================================================================
# Cleanup: whatever this script started goes away on exit, whatever the exit.
POLICY=/usr/sbin/policy-rc.d
POLICY_SAVED=""
POLICY_OURS=0
HOSTS_LINE=""
PIDS=()   # "name:pid" of the daemons we started, in start order

restore_policy() {
    ((POLICY_OURS)) || return 0
    if [[ -n $POLICY_SAVED ]]; then mv -f "$POLICY_SAVED" "$POLICY"; else rm -f "$POLICY"; fi
    POLICY_OURS=0
}

stop_daemon() {   # NAME PID: SIGTERM, up to 10 s, then SIGKILL
    local name=$1 pid=$2 i
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.2
    done
    if kill -0 "$pid" 2>/dev/null; then
        say "$name (pid $pid) did not stop on SIGTERM: SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
}

cleanup() {
    local rc=$? i
    set +e
    trap - EXIT INT TERM
    restore_policy
    if ((${#PIDS[@]} >= 2)); then
        # Jobs first: a slurmstepd outlives slurmd, and a runner left behind would keep running.
        # The cluster is private: every job in it is ours.
        scancel --user=root 2>/dev/null
        wait_for $((KILL_WAIT + 10)) "the jobs to end" no_jobs_left >/dev/null
    fi
    for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
        stop_daemon "${PIDS[i]%%:*}" "${PIDS[i]##*:}"
    done
    if [[ -n $HOSTS_LINE ]]; then
        # /etc/hosts is often bind-mounted (containers): rewrite it in place, no rename.
        grep -vxF "$HOSTS_LINE" /etc/hosts >"$WORK/hosts.new" && cat "$WORK/hosts.new" >/etc/hosts
    fi
    ((${#PIDS[@]} == 0)) || say "stopped slurmd, slurmctld and munged; files kept in $WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM

[[ $(id -u) == 0 ]] || die "must run as root (it installs packages and starts Slurm's daemons)"
[[ -x $UFO_BATCH ]] || die "no ufo-batch at $UFO_BATCH (build it, or give its path: $0 PATH or UFO_BATCH=PATH)"
[[ -d $PLANS ]] || die "no plans folder at $PLANS"
UFO_BATCH=$(readlink -f "$UFO_BATCH")
PLANS=$(readlink -f "$PLANS")
if ! [[ $SLOW_SECONDS =~ ^[0-9]+$ ]] || ((SLOW_SECONDS < 6)); then
    die "SLOW_SECONDS must be a whole number, at least 6"
fi
case $GRACE in
*ms) grace_s=0 ;;
*s) grace_s=${GRACE%s} ;;
*m) grace_s=$((${GRACE%m} * 60)) ;;
*) grace_s=$GRACE ;;
esac
if ! [[ $grace_s =~ ^[0-9]+$ ]] || ((grace_s >= KILL_WAIT)); then
    die "GRACE=$GRACE: give whole seconds (10s) below Slurm's KillWait ($KILL_WAIT s)"
fi
say "ufo-batch: $UFO_BATCH ($("$UFO_BATCH" --version))"

# =============================================================================================
# 0. A clean private folder. Daemons an earlier run left behind (killed with -9) are recognised
#    by the pid files in it, and stopped.
for f in "$MUNGE/munged.pid:munged" "$SLURM/slurmctld.pid:slurmctld" "$SLURM/slurmd.pid:slurmd"; do
    pidfile=${f%%:*} name=${f##*:}
    [[ -s $pidfile ]] || continue
    pid=$(<"$pidfile")
    if [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$name" ]]; then
        say "stopping $name (pid $pid), left by an earlier run"
        kill -KILL "$pid" 2>/dev/null || true
    fi
done
mkdir -p "$WORK"
rm -rf "${WORK:?}"/{munge,slurm,logs,plans,slowplans,results,results-cancel,first-run.tsv,resumed.tsv,hosts.new,apt.log,job.sh}
mkdir -p "$MUNGE/run" "$SLURM"/{state,spool} "$LOGS"

# =============================================================================================
# 1. Packages, if missing. A policy-rc.d that exits 101 keeps the packages' services from
#    starting during the install; the one that was there before (if any) comes back after.
PACKAGES=(slurmctld slurmd slurm-client munge jq)
missing=()
for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
    say "installing ${missing[*]}"
    if [[ -e $POLICY ]]; then
        POLICY_SAVED=$WORK/policy-rc.d.saved
        cp -p "$POLICY" "$POLICY_SAVED"
    fi
    POLICY_OURS=1
    printf '#!/bin/sh\n# slurm-test.sh, during its install: start no service\nexit 101\n' >"$POLICY"
    chmod 755 "$POLICY"
    apt=(env DEBIAN_FRONTEND=noninteractive apt-get -qq -o DPkg::Lock::Timeout=120)
    if ! { "${apt[@]}" update && "${apt[@]}" install -y --no-install-recommends "${missing[@]}"; } \
        >"$WORK/apt.log" 2>&1; then
        tail -n 20 "$WORK/apt.log" >&2
        die "apt-get install failed (log: $WORK/apt.log)"
    fi
    restore_policy
    say "installed"
else
    say "packages already installed: ${PACKAGES[*]}"
fi

# =============================================================================================
# 2. munged, slurmctld and slurmd, private.
HOST=$(hostname -s)
if ! getent hosts "$HOST" >/dev/null; then
    HOSTS_LINE="127.0.0.1 $HOST # slurm-test.sh"
    [[ -z $(tail -c 1 /etc/hosts) ]] || echo >>/etc/hosts   # a last line without its newline
    echo "$HOSTS_LINE" >>/etc/hosts
    say "added '$HOST' to /etc/hosts (removed again on exit)"
fi
CPUS=$(nproc)
for p in "$PORT" "$((PORT + 1))"; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
        die "port $p is in use (another Slurm on this machine?); choose others with SLURM_TEST_PORT"
    fi
done

mungekey --create --keyfile="$MUNGE/munge.key"
chmod 600 "$MUNGE/munge.key"
chmod 755 "$MUNGE" "$MUNGE/run"   # munged refuses a socket folder that others cannot enter
munged -F --key-file="$MUNGE/munge.key" --socket="$SOCKET" --pid-file="$MUNGE/munged.pid" \
    --log-file="$MUNGE/munged.log" --seed-file="$MUNGE/munged.seed" >"$MUNGE/munged.out" 2>&1 &
PIDS+=("munged:$!")
munge_works() { munge -n -S "$SOCKET" 2>/dev/null | unmunge -S "$SOCKET" >/dev/null 2>&1; }
if ! wait_for 15 "munged" munge_works; then
    cat "$MUNGE/munged.out" "$MUNGE/munged.log" >&2 2>/dev/null || true
    die "munged did not start"
fi

cat >"$SLURM_CONF" <<EOF
# Written by slurm-test.sh: one node, no systemd, no cgroups, no accounting.
ClusterName=ufobatch
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCKET
StateSaveLocation=$SLURM/state
SlurmdSpoolDir=$SLURM/spool
SlurmctldPidFile=$SLURM/slurmctld.pid
SlurmdPidFile=$SLURM/slurmd.pid
SlurmctldLogFile=$SLURM/slurmctld.log
SlurmdLogFile=$SLURM/slurmd.log
# linuxproc finds a job's processes by their parents: a plain scancel sends SIGTERM to every
# process of the job, the runner and the commands of its tasks alike.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
KillWait=$KILL_WAIT
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
# OverSubscribe: the $SHARDS array tasks run at once even on a machine with fewer CPUs.
PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:$SHARDS
EOF

slurmctld -D >"$SLURM/slurmctld.out" 2>&1 &
PIDS+=("slurmctld:$!")
slurmd -D >"$SLURM/slurmd.out" 2>&1 &
PIDS+=("slurmd:$!")
node_idle() { [[ $(sinfo -h -n "$HOST" -o %T 2>/dev/null) == idle ]]; }
if ! wait_for 60 "node $HOST to be idle" node_idle; then
    sinfo -N -o '%N %T %E' >&2 || true
    tail -n 15 "$SLURM"/slurmctld.{out,log} "$SLURM"/slurmd.{out,log} >&2 2>/dev/null || true
    die "the Slurm node did not become idle within 60 s"
fi
say "Slurm is up: node $HOST idle ($CPUS CPUs), $(sinfo -V), port $PORT"

# The batch script of every array task.
# `exec`: the runner must BE the batch step's main process. Without exec, bash is: a
# `scancel --batch` or `sbatch --signal=B:...` reaches only bash, and under linuxproc a plain
# scancel kills bash along with the rest, so the runner is orphaned and keeps running after
# Slurm has marked the job ended. With exec the runner gets the SIGTERM itself: it starts no
# more tasks, lets the running ones finish for --grace, records the rest as `cancelled` and
# writes its summaries. --grace must be shorter than KillWait: the SIGKILL comes KillWait
# after the SIGTERM.
cat >"$WORK/job.sh" <<'EOF'
#!/bin/bash
# Arguments: UFO_BATCH PLANS RESULTS GRACE JOBS SHARDS
exec "$1" run "$2" --shards "$6" --out "$3" --grace "$4" --jobs "$5" --progress lines
EOF
chmod 755 "$WORK/job.sh"

# sbatch_job TIMEOUT PLANS RESULTS [sbatch options...]: submit the job; prints sbatch's output.
# sbatch itself gets at most TIMEOUT seconds (with --wait, it waits for the job).
sbatch_job() {
    local limit=$1 plans=$2 results=$3
    shift 3
    timeout "$limit" sbatch --parsable --job-name=ufo-batch --time=10 --output="$LOGS/%x-%A_%a.out" "$@" \
        "$WORK/job.sh" "$UFO_BATCH" "$plans" "$results" "$GRACE" "$JOBS" "$SHARDS"
}

# =============================================================================================
# 3. The sample plans as a job array, then merged.
say "--- 1. job array: ufo-batch run plans --shards $SHARDS, then merge"
cp -r "$PLANS" "$WORK/plans"   # the run's name is the folder's: plans-shard-K-of-4
RESULTS=$WORK/results
mkdir -p "$RESULTS"
T3=$SECONDS
rc=0
sbatch_job 180 "$WORK/plans" "$RESULTS" --wait --array=0-$((SHARDS - 1)) \
    >"$LOGS/sbatch-array.out" 2>&1 || rc=$?
JOB1=$(head -n 1 "$LOGS/sbatch-array.out")
JOB1=${JOB1%%;*}
[[ $JOB1 =~ ^[0-9]+$ ]] || { cat "$LOGS/sbatch-array.out" >&2; die "sbatch failed"; }
say "job $JOB1 ended after $((SECONDS - T3))s; sbatch --wait exit $rc"
element_states "$JOB1" | sed 's/^/    array task /'
for f in "$LOGS/ufo-batch-${JOB1}"_*.out; do show_log "$f"; done
if ((rc == 1)) && [[ $(element_states "$JOB1" | ended_normally | wc -l) == "$SHARDS" ]]; then
    pass "job array: $SHARDS array tasks ran to their end (exit 0 or 1); sbatch --wait exit 1 (the failing samples)"
else
    fail "job array: sbatch --wait exit $rc (must be 1); array tasks: $(element_states "$JOB1" | tr '\n' ';')"
fi
names=$(find "$RESULTS" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort | tr '\n' ' ')
want_names=$(for ((k = 1; k <= SHARDS; k++)); do printf 'plans-shard-%d-of-%d ' "$k" "$SHARDS"; done)
if [[ $names == "$want_names" ]]; then
    pass "job array: run dirs ${names}(SLURM_ARRAY_TASK_ID 0..$((SHARDS - 1)) is shard 1..$SHARDS)"
else
    fail "job array: run dirs [$names], expected [$want_names]"
fi
check_merge "job array" "$RESULTS/merged" "$WORK/plans" "$RESULTS"/plans-shard-*-of-$SHARDS
T3=$((SECONDS - T3))

# =============================================================================================
# 4. Cancel one array task mid-run, then resume that index alone.
say "--- 2. cancel and resume: the plans and 8 tasks that sleep ${SLOW_SECONDS}s"
# Two shapes of slow command, as a SIGTERM to every process of the job finds them:
#   nap_1..4: `sleep N && echo done > done.txt`: a shell waits for sleep. Both get the
#             SIGTERM; the shell dies of it, or, when sleep dies first, exits 143 (128 + 15).
#   nap_5..8: `echo done > done.txt && exec sleep N`: the shell becomes sleep, which dies of it.
# (With 4 shards, nap_i and nap_i+4 fall in the same shard: the cancelled one has both shapes.)
# Either way the task was cut off by the scheduler and must end `cancelled`, not `failed`.
cp -r "$PLANS" "$WORK/slowplans"
mkdir -p "$WORK/slowplans/slow"
for i in 1 2 3 4 5 6 7 8; do
    if ((i <= 4)); then
        command="sleep $SLOW_SECONDS && echo done > done.txt"
    else
        command="echo done > done.txt && exec sleep $SLOW_SECONDS"
    fi
    cat >"$WORK/slowplans/slow/nap_$i.json" <<EOF
{
  "request": "Sleep ${SLOW_SECONDS} seconds and write done.txt",
  "actions": [{"action": "execute_command", "parameters": {"command": "$command"}}],
  "evaluate": [{"type": "file_equals", "path": "done.txt", "content": "done\n"}]
}
EOF
done
RES2=$WORK/results-cancel
mkdir -p "$RES2"
T4=$SECONDS
JOB2=$(sbatch_job 30 "$WORK/slowplans" "$RES2" --array=0-$((SHARDS - 1)))
JOB2=${JOB2%%;*}
say "submitted job $JOB2"

# The shard to cancel: the first whose array task is running and has a slow task in flight:
# its status.json says "running" and its task.log shows that its command has started.
in_flight() {   # RUN_DIR: the slow tasks whose command is running
    local d
    for d in "$1"/slow/nap_*; do
        [[ -f $d/status.json && $(jq -r .status "$d/status.json" 2>/dev/null) == running ]] &&
            grep -q 'execute_command' "$d/task.log" 2>/dev/null && echo "slow/${d##*/}"
    done
    return 0
}
K=""
pick_shard() {
    local k
    for ((k = 0; k < SHARDS; k++)); do
        [[ $(squeue -h -j "${JOB2}_$k" -o %T 2>/dev/null) == RUNNING ]] || continue
        [[ -n $(in_flight "$RES2/slowplans-shard-$((k + 1))-of-$SHARDS") ]] && { K=$k; return 0; }
    done
    return 1
}
wait_for 60 "an array task with a slow task in flight" pick_shard || die "no array task of job $JOB2 ran a slow task"
SHARD_DIR=$RES2/slowplans-shard-$((K + 1))-of-$SHARDS
sleep 1   # well into the command's sleep
say "scancel ${JOB2}_$K (shard $((K + 1))/$SHARDS; in flight: $(in_flight "$SHARD_DIR" | tr '\n' ' '))"
T_CANCEL=$SECONDS
scancel "${JOB2}_$K"
wait_for 15 "array task $K to end" job_gone "${JOB2}_$K" ||
    fail "cancel: array task $K still there 15 s after its scancel"
say "array task $K ended within $((SECONDS - T_CANCEL))s of its scancel"
wait_for $((SLOW_SECONDS + KILL_WAIT + 30)) "job $JOB2 to end" job_gone "$JOB2" || fail "cancel: job $JOB2 did not end in time"
element_states "$JOB2" | sed 's/^/    array task /'
LOG_K=$LOGS/ufo-batch-${JOB2}_$K.out
show_log "$LOG_K"

state_k=$(element_states "$JOB2" | awk -v k="$K" '$1 == k {print $2}')
if [[ $state_k == CANCELLED ]]; then
    pass "cancel: array task $K is CANCELLED"
else
    fail "cancel: array task $K is ${state_k:-unknown}, expected CANCELLED"
fi
others=$(element_states "$JOB2" | awk -v k="$K" '$1 != k' | ended_normally | wc -l)
if ((others == SHARDS - 1)); then
    pass "cancel: the other $((SHARDS - 1)) array tasks ran to their end"
else
    fail "cancel: array tasks: $(element_states "$JOB2" | tr '\n' ';')"
fi
if [[ -f $SHARD_DIR/summary.json ]] && grep -q '^stopping: ' "$LOG_K"; then
    pass "cancel: the runner got the SIGTERM, stopped, and wrote its summary before the SIGKILL"
else
    fail "cancel: no summary.json in $SHARD_DIR or no 'stopping:' line in its output: the runner did not stop cleanly"
fi
FIRST=$WORK/first-run.tsv
task_rows "$SHARD_DIR" >"$FIRST"
show_rows "shard $((K + 1)) after the scancel" "$FIRST"
check_first_run "cancel: shard $((K + 1))" "$FIRST"

# (Waited for by polling squeue: `sbatch --wait` polls after 2, 10, 42 s..., which makes a
# 10-second job cost 42 s.)
say "resubmit: sbatch --array=$K into the same results"
JOB3=$(sbatch_job 30 "$WORK/slowplans" "$RES2" --array="$K")
JOB3=${JOB3%%;*}
wait_for $((SLOW_SECONDS * 2 + 60)) "job $JOB3 to end" job_gone "$JOB3" || fail "resume: job $JOB3 did not end in time"
LOG_R=$LOGS/ufo-batch-${JOB3}_$K.out
show_log "$LOG_R"
state_r=$(element_states "$JOB3")
if [[ -n $(ended_normally <<<"$state_r") ]]; then
    pass "resume: array task $K ran to its end (${state_r#* })"
else
    fail "resume: array task $K: ${state_r:-no state}"
fi
RESUMED=$WORK/resumed.tsv
task_rows "$SHARD_DIR" >"$RESUMED"
show_rows "shard $((K + 1)) after the resume" "$RESUMED"
check_resumed "resume: shard $((K + 1))" "$FIRST" "$RESUMED"
check_merge "cancel+resume" "$RES2/merged" "$WORK/slowplans" "$RES2"/slowplans-shard-*-of-$SHARDS
T4=$((SECONDS - T4))

# =============================================================================================
echo
echo "=== slurm-test: $("$UFO_BATCH" --version) on Slurm $(sinfo -V | awk '{print $2}')"
printf '  %s\n' "${CHECKS[@]}"
echo "  time: job array ${T3}s, cancel+resume ${T4}s, total $((SECONDS - T0))s; files in $WORK"
if ((FAILED)); then
    echo "=== FAILED"
    exit 1
fi
echo "=== all checks passed"
