#!/usr/bin/env bash
# The HostAgent -> AppAgent loop measured on real apps (examples/desktop-requests: a
# note in Mousepad, a heading in a Writer document), against a model stand-in on
# loopback that answers at once as a capable model would (a Python OpenAI-compatible
# server in this script: it reads the windows and controls each request lists and picks
# by name). Not part of CI; about two minutes. Prints, with vision on and off:
#
# - steps per second of the whole loop (observe, ask, act) at --jobs 1, and the share
#   of a step the runner spends observing the screen (the AT-SPI walk, the screenshot,
#   the PNGs), from the task logs;
# - the request size per step (bytes sent) and the prompt tokens per step, as OpenAI
#   counts them: text about 4 characters a token, an image 85 + 170 per 512-pixel tile
#   at high detail (the stand-in reports these as its usage; a real provider's figures
#   are in status.json).
#
# Usage: scripts/desktop-llm-bench.sh [ROUNDS]     (default: 2 rounds of each mode)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-2}
if ! bash scripts/setup-desktop.sh --check >/dev/null; then
  bash scripts/setup-desktop.sh --check || true
  exit 2
fi
cargo build --release -q --bin ufo-batch --bin ufo-batch-jail
bin=$PWD/target/release/ufo-batch
root=$PWD/target/desktop-llm-bench
rm -rf "$root"
mkdir -p "$root"

python3 - "$bin" "$root" "$rounds" <<'PY'
import glob, http.server, json, math, os, re, statistics, struct, subprocess, sys, threading, time, base64
bin, root, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
sent = []  # (request bytes, prompt tokens, images) per call

def listed(messages):
    user = [m for m in messages if m["role"] == "user"][-1]["content"]
    text = user if isinstance(user, str) else "\n".join(p.get("text", "") for p in user)
    out = []
    for line in text.splitlines():
        try:
            v = json.loads(line)
        except ValueError:
            continue
        if isinstance(v, dict) and "id" in v:
            out.append(v)
    return out

def image_tokens(url):
    png = base64.b64decode(url.split(",", 1)[1][:64] + "==")
    w, h = struct.unpack(">II", png[16:24])
    scale = min(1.0, 2048 / max(w, h)); w, h = w * scale, h * scale
    scale = min(1.0, 768 / min(w, h)); w, h = w * scale, h * scale
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)

def usage(messages):
    text, images = 0, 0
    for m in messages:
        c = m["content"]
        if isinstance(c, str):
            text += len(c)
        else:
            for p in c:
                if p["type"] == "text":
                    text += len(p["text"])
                else:
                    images += image_tokens(p["image_url"]["url"])
    return text // 4 + images

def host(messages):
    if "<Subtask report>" in json.dumps(messages):
        return {"observation": "done", "thought": "the subtask is done", "current_subtask": "",
                "message": [], "status": "FINISH", "plan": [], "function": "", "arguments": {},
                "comment": "the request is done"}
    window = listed(messages)[0]
    return {"observation": "one window", "thought": "hand the work over", "current_subtask":
            "do the request in this window", "message": [], "status": "ASSIGN", "plan": [],
            "function": "select_application_window",
            "arguments": {"id": window["id"], "name": window["name"]}, "comment": ""}

def app(messages):
    brief = json.dumps(messages[1])
    step = sum(1 for m in messages if m["role"] == "assistant")
    controls = listed(messages)
    def on(control_type, name=""):
        for c in controls:
            if c["control_type"] == control_type and name in c["name"]:
                return {"id": c["id"], "name": c["name"], "control_type": control_type}
        return {"name": name, "control_type": control_type}
    if "Call Ada" in brief:
        plan = [("keyboard_input", dict(on("Edit"), keys="^{END}{ENTER}Call Ada^s"), "FINISH")]
    else:
        plan = [("keyboard_input", dict(on("Document"), keys="^{HOME}^1Quarterly report{ENTER}"), "CONTINUE"),
                ("keyboard_input", dict(on("Document"), keys="^s"), "CONTINUE"),
                ("click_input", on("Button", "Use Word 2007–365 Format"), "FINISH")]
    function, arguments, status = plan[min(step, len(plan) - 1)]
    return {"observation": "the window", "thought": "next action", "action": {"function": function,
            "arguments": arguments, "status": status}, "plan": [], "comment": "",
            "save_screenshot": {"save": False, "reason": ""}}

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_GET(self):
        self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers()
    def do_POST(self):
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        body = json.loads(raw)
        messages = body["messages"]
        system = messages[0]["content"]
        if system.startswith("You are HostAgent"):
            reply = host(messages)
        elif system.startswith("You are AppAgent"):
            reply = app(messages)
        else:
            reply = {"reason": "the screenshots show it", "sub_scores": [], "complete": "yes"}
        prompt = usage(messages)
        images = sum(1 for m in messages if not isinstance(m["content"], str)
                     for p in m["content"] if p["type"] == "image_url")
        if not system.startswith("You evaluate"):
            sent.append((len(raw), prompt, images))
        out = json.dumps({"id": "x", "object": "chat.completion", "choices": [{"index": 0,
              "message": {"role": "assistant", "content": json.dumps(reply)}, "finish_reason": "stop"}],
              "usage": {"prompt_tokens": prompt, "completion_tokens": 80, "total_tokens": prompt + 80}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{server.server_port}/v1"

print(f"{'vision':>7} {'tasks':>5} {'steps':>5} {'wall s':>7} {'steps/s':>8} {'observe %':>9} "
      f"{'KB/call':>8} {'tokens/step':>11} {'images/step':>11}")
for vision in (True, False):
    config = os.path.join(root, f"vision-{vision}.toml")
    with open(config, "w") as f:
        f.write(f'[llm]\nmodel = "stand-in"\nvision = {str(vision).lower()}\n')
    for n in range(rounds):
        del sent[:]
        out = os.path.join(root, f"vision-{vision}-{n}")
        clock = time.monotonic()
        proc = subprocess.run([bin, "run", "examples/desktop-requests/tasks", "--config", config,
                               "--llm-base-url", url, "--out", out, "--jobs", "1", "--fresh",
                               "--progress", "lines"], capture_output=True, text=True,
                              env=dict(os.environ, OPENAI_API_KEY="sk-bench"))
        wall = time.monotonic() - clock
        if proc.returncode != 0:
            sys.exit(f"the run failed:\n{proc.stdout}\n{proc.stderr}")
        steps, observe, session = 0, 0.0, 0.0
        for status in glob.glob(os.path.join(out, "**", "status.json"), recursive=True):
            steps += json.load(open(status))["steps"]
        for log in glob.glob(os.path.join(out, "**", "task.log"), recursive=True):
            stamps = {}
            for line in open(log):
                m = re.search(r"observed .* in ([\d.]+)s; screenshot ([\d.]+)s; saved in ([\d.]+)s", line)
                if m and "final screen" not in line:
                    observe += sum(float(x) for x in m.groups())
                t = line.split(" ", 1)[0]
                if "started:" in line:
                    stamps["start"] = t
                if "session finished" in line or "session failed" in line:
                    stamps["end"] = t
            if "start" in stamps and "end" in stamps:
                parse = lambda s: time.mktime(time.strptime(s[:19], "%Y-%m-%dT%H:%M:%S")) + float(s[19:-1] or 0)
                session += parse(stamps["end"]) - parse(stamps["start"])
        tasks = len(glob.glob(os.path.join(out, "**", "status.json"), recursive=True))
        kb = statistics.mean(s[0] for s in sent) / 1024
        tokens = statistics.mean(s[1] for s in sent)
        images = statistics.mean(s[2] for s in sent)
        print(f"{str(vision):>7} {tasks:>5} {steps:>5} {wall:7.1f} {steps / session:8.2f} "
              f"{100 * observe / session:8.0f}% {kb:8.1f} {tokens:11.0f} {images:11.1f}")
print("steps/s counts the sessions' own time (observe, ask, act), not the apps' start;"
      " tokens as OpenAI counts them (text/4, 85 + 170 per 512-px tile per image)")
server.shutdown()
PY
