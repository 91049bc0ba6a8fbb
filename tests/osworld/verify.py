#!/usr/bin/env python3
"""Checks the OSWorld fixtures for real, on private desktops built the way the runner builds them.

    python3 tests/osworld/verify.py               every fixture: solved -> 1.0, untouched -> 0.0,
                                                  infeasible FAIL -> 1 / DONE -> 0, bad tasks -> their error
    python3 tests/osworld/verify.py --make-golds  (re)make the LibreOffice golds: solve, let the task's
                                                  postconfig save, copy the saved file into cache/
    python3 tests/osworld/verify.py --only calc   only the tasks whose name contains "calc"
    python3 tests/osworld/verify.py --json FILE   also write every run's answers to FILE

Needs root (bubblewrap), scripts/setup-desktop.sh and scripts/setup-osworld.sh. Each run gets a
fresh desktop: Xvfb :N 1920x1080x24, a D-Bus session bus, the AT-SPI bus launcher, openbox, and
OSWorld's unmodified server (a private copy of desktop_env/server) in a bubblewrap jail whose
/home/user is a scratch home and whose /tmp is private, started as
`python -m flask --app <copy>/main.py run --host 127.0.0.1 --port P` with /home/user as its working
directory (OSWorld's tasks name some files relative to it). The driver (src/osworld/driver.py serve)
runs outside the jail and talks to the server over loopback. The keyboard solves are typed with
xdotool (make_fixtures.SOLVES). Everything started is stopped again, by process id.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import make_fixtures as fx  # noqa: E402

VENV = os.path.join(REPO, "target", "osworld", "venv")
SERVER = os.path.join(REPO, "target", "osworld", "OSWorld", "desktop_env", "server")
DRIVER = os.path.join(REPO, "src", "osworld", "driver.py")
KEY_DELAY_MS = 60

# The LibreOffice profile every desktop starts with (OSWorld's VM image has these off).
LO_PROFILE = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Common/Save/Document"><prop oor:name="WarnAlienFormat" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="ShowTipOfTheDay" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="FirstRun" oor:op="fuse"><value>false</value></prop></item>
</oor:items>
"""


def log(msg):
    print(f"[verify {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def free_display():
    for n in range(90, 200):
        if not os.path.exists(f"/tmp/.X11-unix/X{n}") and not os.path.exists(f"/tmp/.X{n}-lock"):
            return n
    raise RuntimeError("no free X display number")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(path, seconds, what):
    deadline = time.monotonic() + seconds
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not appear within {seconds} s ({path})")
        time.sleep(0.02)


class Desktop:
    def __init__(self):
        self.n = free_display()
        self.port = free_port()
        self.work = tempfile.mkdtemp(prefix=f"ufo-osworld-{self.n}-", dir="/tmp")
        self.home = os.path.join(self.work, "home")
        self.run = os.path.join(self.work, "run")
        self.server = os.path.join(self.work, "server")
        self.cache = os.path.join(self.work, "cache")
        self.procs = []  # (name, Popen)
        self.display = f":{self.n}"
        self.bus = f"unix:path={self.run}/bus"

    def env(self, **extra):
        env = {
            "PATH": f"{VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "DISPLAY": self.display, "DBUS_SESSION_BUS_ADDRESS": self.bus, "XDG_RUNTIME_DIR": self.run,
            "LANG": "C.UTF-8", "SAL_USE_VCLPLUGIN": "gtk3", "GTK_USE_PORTAL": "0",
            "GSETTINGS_BACKEND": "memory",
        }
        env.update(extra)
        return env

    def spawn(self, name, argv, env, **kw):
        logf = open(os.path.join(self.work, f"{name}.log"), "wb")
        p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                             start_new_session=True, **kw)
        self.procs.append((name, p))
        return p

    def start(self):
        t0 = time.monotonic()
        os.makedirs(self.home)
        os.makedirs(self.run, mode=0o700)
        shutil.copytree(SERVER, self.server, ignore=shutil.ignore_patterns("screenshots", "__pycache__"))
        open(os.path.join(self.home, ".Xauthority"), "wb").close()
        profile = os.path.join(self.home, ".config", "libreoffice", "4", "user")
        os.makedirs(profile)
        with open(os.path.join(profile, "registrymodifications.xcu"), "w") as f:
            f.write(LO_PROFILE)
        shutil.copytree(os.path.join(HERE, "cache"), self.cache)
        host_env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": self.home}
        self.spawn("xvfb", ["Xvfb", self.display, "-screen", "0", "1920x1080x24", "-nolisten", "tcp", "-noreset"],
                   host_env)
        wait_for(f"/tmp/.X11-unix/X{self.n}", 10, "the X socket")
        self.spawn("dbus", ["dbus-daemon", "--session", "--nofork", f"--address={self.bus}"], host_env)
        wait_for(f"{self.run}/bus", 10, "the session bus socket")
        self.spawn("atspi", ["/usr/libexec/at-spi-bus-launcher", "--launch-immediately", "--a11y=1"],
                   self.env(HOME=self.home))
        self.spawn("openbox", ["openbox", "--sm-disable"], self.env(HOME=self.home))
        jail = ["bwrap", "--dev-bind", "/", "/", "--tmpfs", "/home", "--bind", self.home, "/home/user",
                "--tmpfs", "/tmp", "--bind", "/tmp/.X11-unix", "/tmp/.X11-unix", "--bind", self.work, self.work,
                "--unshare-pid", "--proc", "/proc", "--die-with-parent", "--chdir", "/home/user", "--"]
        server_env = self.env(HOME="/home/user", XDG_CONFIG_HOME="/home/user/.config",
                              XDG_CACHE_HOME="/home/user/.cache", XDG_DATA_HOME="/home/user/.local/share")
        self.spawn("server", jail + [f"{VENV}/bin/python", "-m", "flask", "--app", f"{self.server}/main.py",
                                     "run", "--host", "127.0.0.1", "--port", str(self.port)], server_env)
        self.desktop_seconds = time.monotonic() - t0

    def stop(self):
        for name, p in reversed(self.procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 5
        for name, p in self.procs:
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(5)
        # Anything else this desktop started (a11y registry, its bus) has our DISPLAY.
        marker = f"DISPLAY={self.display}\0".encode()
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or int(pid) == os.getpid():
                continue
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if marker in f.read():
                        os.kill(int(pid), signal.SIGKILL)
                        log(f"killed stray process {pid} of display {self.display}")
            except (OSError, ProcessLookupError):
                pass
        shutil.rmtree(self.work, ignore_errors=True)

    def execute(self, command):
        data = json.dumps({"command": command, "shell": True}).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/execute", data=data,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())

    def xdotool(self, *args):
        subprocess.run(["xdotool", *args], env=self.env(HOME=self.home), check=True, timeout=60)


class Driver:
    def __init__(self, desktop):
        self.log = open(os.path.join(desktop.work, "driver.log"), "wb")
        self.p = subprocess.Popen([f"{VENV}/bin/python", DRIVER, "serve"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.log, start_new_session=True,
                                  env={"PATH": f"{VENV}/bin:/usr/bin:/bin", "HOME": desktop.work,
                                       "LANG": "C.UTF-8"})

    def ask(self, req):
        self.p.stdin.write((json.dumps(req) + "\n").encode())
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError(f"the driver exited (rc {self.p.wait()})")
        return json.loads(line)

    def close(self):
        try:
            self.p.stdin.write(b'{"op": "quit"}\n')
            self.p.stdin.close()
            self.p.wait(10)
        except (BrokenPipeError, subprocess.TimeoutExpired):
            os.killpg(self.p.pid, signal.SIGKILL)
            self.p.wait()


def load_task(root, tid):
    for dirpath, _, files in os.walk(os.path.join(HERE, root, "examples")):
        if f"{tid}.json" in files:
            with open(os.path.join(dirpath, f"{tid}.json")) as f:
                return json.load(f)
    raise KeyError(tid)


def run_solve(desktop, steps):
    last_action = "DONE"
    for step in steps:
        if "sleep" in step:
            time.sleep(step["sleep"])
        elif "key" in step:
            desktop.xdotool("key", "--delay", str(KEY_DELAY_MS), *step["key"])
        elif "type" in step:
            desktop.xdotool("type", "--delay", str(KEY_DELAY_MS), step["type"])
        elif "shell" in step:
            out = desktop.execute(step["shell"])
            if out.get("returncode") != 0:
                raise RuntimeError(f"solve command failed: {out}")
        elif "last_action" in step:
            last_action = step["last_action"]
    return last_action


def one_run(task, solve, last_action=None, before_setup=None, after_evaluate=None, evaluate_twice=None):
    """A fresh desktop: setup, the solve (or none), evaluate. Returns the answers."""
    desktop = Desktop()
    result = {"task": task["id"]}
    driver = None
    try:
        desktop.start()
        if before_setup:
            before_setup(desktop)
        driver = Driver(desktop)
        result["setup"] = driver.ask({"op": "setup", "task": task, "cache_dir": desktop.cache,
                                      "server": f"http://127.0.0.1:{desktop.port}", "screen": [1920, 1080],
                                      "wait": 60})
        if "ok" not in result["setup"]:
            return result
        action = run_solve(desktop, solve) if solve is not None else "DONE"
        if last_action is not None:
            action = last_action
        result["last_action"] = action
        result["evaluate"] = driver.ask({"op": "evaluate", "last_action": action})
        if evaluate_twice is not None:
            result["evaluate_again"] = driver.ask({"op": "evaluate", "last_action": evaluate_twice})
        if after_evaluate:
            after_evaluate(desktop)
        return result
    finally:
        if driver is not None:
            driver.close()
        result["driver_log_tail"] = _tail(os.path.join(desktop.work, "driver.log"))
        # Keep what the evaluator looked at (and the logs) for a look after a failed check.
        kept = tempfile.mkdtemp(prefix="ufo-osworld-kept-", dir="/tmp")
        shutil.copytree(os.path.join(desktop.cache, task["id"]), os.path.join(kept, "cache"),
                        dirs_exist_ok=True)
        for f in os.listdir(desktop.work):
            if f.endswith(".log"):
                shutil.copy(os.path.join(desktop.work, f), kept)
        result["kept"] = kept
        desktop.stop()


def _tail(path, n=3000):
    try:
        with open(path, "rb") as f:
            data = f.read()
        return data[-n:].decode("utf-8", "replace")
    except OSError:
        return ""


def score_of(answer):
    return (answer or {}).get("ok", {}).get("score")


NAMES = {fx.CALC: "calc", fx.WRITER: "writer", fx.IMPRESS: "impress", fx.OS: "os", fx.INFEASIBLE: "infeasible",
         fx.BAD_STEP: "bad-unknown-step", fx.BAD_METRIC: "bad-unknown-metric",
         fx.BAD_MISSING_PACKAGE: "bad-needs-skimage", fx.BAD_DOTDOT: "bad-path-dotdot",
         fx.BAD_ABSOLUTE: "bad-path-absolute", fx.BAD_NO_RESULT: "bad-result-missing",
         fx.BAD_OPEN: "bad-open-missing-file"}


def make_golds(only):
    for tid, (path, dest) in fx.GOLDS.items():
        if only and only not in NAMES[tid]:
            continue
        task = load_task("evaluation_examples", tid)
        input_file = [f for f in os.listdir(os.path.join(HERE, "cache", tid)) if f != dest][0]

        def placeholder(desktop, tid=tid, dest=dest, input_file=input_file):
            # The gold does not exist yet: let cloud_file find the input in its place.
            gold = os.path.join(desktop.cache, tid, dest)
            if not os.path.exists(gold):
                shutil.copy(os.path.join(desktop.cache, tid, input_file), gold)

        def take(desktop, tid=tid, path=path, dest=dest):
            saved = os.path.join(desktop.home, os.path.relpath(path, "/home/user"))
            shutil.copy(saved, os.path.join(HERE, "cache", tid, dest))
            log(f"gold {NAMES[tid]}: cache/{tid}/{dest} ({os.path.getsize(saved)} bytes)")

        r = one_run(task, fx.SOLVES[tid], before_setup=placeholder, after_evaluate=take)
        shutil.rmtree(r.get("kept", ""), ignore_errors=True)
        log(f"{NAMES[tid]}: setup {r.get('setup')}")
        log(f"{NAMES[tid]}: evaluate {r.get('evaluate')}")


def verify(only, json_out):
    runs, failures = [], []

    def check(name, ok, what, run):
        runs.append({"name": name, "check": what, "passed": ok, **run})
        log(f"{'PASS' if ok else 'FAIL'} {name}: {what}")
        if ok:
            shutil.rmtree(run.get("kept", ""), ignore_errors=True)
        else:
            failures.append(f"{name}: {what} (files kept in {run.get('kept')})")
            log(json.dumps({k: v for k, v in run.items() if k != 'driver_log_tail'})[:3000])
            log(run.get("driver_log_tail", "")[-1500:])

    for tid in (fx.CALC, fx.WRITER, fx.IMPRESS, fx.OS):
        name = NAMES[tid]
        if only and only not in name:
            continue
        task = load_task("evaluation_examples", tid)
        r = one_run(task, fx.SOLVES[tid])
        check(name, score_of(r.get("evaluate")) == 1.0, "solved scores 1.0", r)
        r = one_run(task, None)
        check(name, score_of(r.get("evaluate")) == 0.0, "untouched scores 0.0", r)
    if not only or only in "infeasible":
        task = load_task("evaluation_examples", fx.INFEASIBLE)
        r = one_run(task, None, last_action="FAIL", evaluate_twice="DONE")
        check("infeasible", score_of(r.get("evaluate")) == 1.0 and score_of(r.get("evaluate_again")) == 0.0,
              "FAIL scores 1, DONE scores 0", r)
    for tid, want in fx.BAD_EXPECTED.items():
        name = NAMES[tid]
        if only and only not in name:
            continue
        task = load_task("bad/evaluation_examples", tid)
        r = one_run(task, None)
        if "setup" in want:
            ok = r.get("setup", {}).get("kind") == want["setup"]
            what = f"setup answers kind {want['setup']}"
        elif "evaluate" in want:
            ok = r.get("evaluate", {}).get("kind") == want["evaluate"]
            what = f"evaluate answers kind {want['evaluate']}"
        else:
            details = (r.get("evaluate") or {}).get("ok", {}).get("details", [])
            ok = score_of(r.get("evaluate")) == want["score"] and any(d.get("missing") for d in details)
            what = f"scores {want['score']} and names the missing file"
        check(name, ok, what, r)
    if json_out:
        with open(json_out, "w") as f:
            json.dump(runs, f, indent=1)
    print(f"{len(runs) - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


def main(argv):
    only = None
    json_out = None
    if "--only" in argv:
        only = argv[argv.index("--only") + 1]
    if "--json" in argv:
        json_out = argv[argv.index("--json") + 1]
    for need in (f"{VENV}/bin/python", f"{SERVER}/main.py", DRIVER):
        if not os.path.exists(need):
            print(f"missing {need}: run scripts/setup-osworld.sh", file=sys.stderr)
            return 2
    if "--make-golds" in argv:
        make_golds(only)
        return 0
    return verify(only, json_out)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
