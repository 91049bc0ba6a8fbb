"""An AIP device client for the tests, speaking UFO's protocol as its own client does
(../shared/reference/aip.md): it dials out over one WebSocket (the token in the URL),
registers with its client id and platform, waits for the server's heartbeat/ok, sends a
heartbeat every --heartbeat seconds, carries out one command frame at a time through its
tools and answers it with one command_results frame (prev_response_id = the command's
response_id, one Result per action, the rest skipped after a failure), drops a command it
cannot route without a word (an unknown agent or tool, as UFO's client does), and
reconnects after any close with back-off (--backoff, doubling), registering again with
the same id.

It is kept only for what UFO's own client (which the tests in ufo_real.rs start from
../shared/ufo) cannot do on demand: stay silent, die on a given command, send garbage,
fake a Windows desktop. What it does send is what UFO's client sends: its list_tools
answer is MCPToolInfo as aip/messages.py defines it (parameters under `input_schema`),
its results and messages are those of UFO's Linux MCP server (linux_mcp_server.py:
execute_command(command, api_key, timeout=30, cwd) and get_system_info(api_key), both
`action` tools, the key checked against $UFO_MCP_API_KEY, the same error texts), missing
or unknown arguments fail as FastMCP fails them, and a command whose tool_type is not
the tool's gets no answer. Unlike UFO's server, execute_command runs its command through
a shell unless --ufo-allowlist is given (some tests' plans use pipes and redirections);
with it, only UFO's allow-list runs, without a shell. With --platform windows it offers
instead the tools of UFO's Windows UI servers by agent as ui_mcp_server.py declares them
(HostAgent: select_application_window(id, name), get_desktop_app_info,
capture_desktop_screenshot; AppAgent: click_input, keyboard_input, texts with id and
name, get_app_window_controls_info, get_app_window_info, capture_window_screenshot) on
a fake desktop: one Notepad window with one edit control.

Fault modes for the tests: --mute answers no command but list_tools, --mute-on TEXT no
command that holds TEXT; --die-on TEXT exits the process (as if killed) when a command
holds TEXT.

usage: aip_client.py URL CLIENT_ID [--platform linux] [--heartbeat 120] [--backoff 2]
                     [--mute] [--mute-on TEXT] [--die-on TEXT] [--max-retries 0]
"""

import argparse
import asyncio
import datetime
import json
import os
import platform as host_platform
import subprocess
import sys
import uuid

import websockets

def schema(properties, required=()):
    return {"type": "object", "properties": properties, "required": list(required)}


def tool(name, tool_type, namespace, properties, required=()):
    """A tool as UFO's list_tools lists it: MCPToolInfo.model_dump() (aip/messages.py),
    its parameters under `input_schema`."""
    return {"tool_key": f"{tool_type}::{name}", "tool_name": name, "title": None, "namespace": namespace,
            "tool_type": tool_type, "description": f"UFO's {name}",
            "input_schema": schema(properties, required),
            "output_schema": {"additionalProperties": True, "type": "object"},
            "meta": {"_fastmcp": {"tags": []}}, "annotations": None}


S = {"type": "string"}
B = {"type": "boolean"}
# UFO's Linux MCP server (linux_mcp_server.py) as its client lists it: both tools are
# LinuxAgent `action` tools (config/ufo/mcp.yaml gives LinuxAgent no data collection).
TOOLS = [
    tool("execute_command", "action", "BashExecutor",
         {"command": S, "api_key": S, "timeout": {"type": "integer", "default": 30},
          "cwd": {"anyOf": [S, {"type": "null"}], "default": None}},
         ["command", "api_key"]),
    tool("get_system_info", "action", "BashExecutor", {"api_key": S}, ["api_key"]),
]

CONTROL = {"id": S, "name": S}
# The tools of UFO's Windows UI servers (ui_mcp_server.py: HostUIExecutor, AppUIExecutor,
# UICollector), by agent, with their declared parameters.
# Both agents get UFO's whole UICollector (config/ufo/mcp.yaml), as its client lists it.
COLLECTOR = [
    tool("get_desktop_app_info", "data_collection", "UICollector", {"remove_empty": B, "refresh_app_windows": B}),
    tool("capture_desktop_screenshot", "data_collection", "UICollector", {"all_screens": B}),
    tool("get_app_window_controls_info", "data_collection", "UICollector",
         {"field_list": {"type": "array", "items": S}}, ["field_list"]),
    tool("get_app_window_info", "data_collection", "UICollector",
         {"field_list": {"type": "array", "items": S}}, ["field_list"]),
    tool("capture_window_screenshot", "data_collection", "UICollector", {}),
]
WINDOWS_TOOLS = {
    "HostAgent": COLLECTOR + [
        tool("select_application_window", "action", "HostUIExecutor", CONTROL, ["id", "name"]),
    ],
    "AppAgent": COLLECTOR + [
        tool("click_input", "action", "AppUIExecutor", dict(CONTROL, button=S, double=B), ["id", "name"]),
        tool("keyboard_input", "action", "AppUIExecutor", dict(CONTROL, keys=S, control_focus=B),
             ["id", "name", "keys"]),
        tool("texts", "action", "AppUIExecutor", CONTROL, ["id", "name"]),
    ],
}

JSON_TYPES = {"string": str, "boolean": bool, "integer": int, "number": (int, float), "array": list, "object": dict}


def validate(declared, params):
    """FastMCP's argument check, as UFO's client reports it: a failure Result."""
    required = declared["input_schema"]["required"]
    known = declared["input_schema"]["properties"]
    for name in required:
        if name not in params:
            raise ToolFailure(f"Input validation error: '{name}' is a required property")
    for name, value in params.items():
        wanted = JSON_TYPES.get(known.get(name, {}).get("type"))
        if wanted and (not isinstance(value, wanted) or (wanted is int and isinstance(value, bool))):
            raise ToolFailure(f"Input validation error: {json.dumps(value)} is not of type '{known[name]['type']}'")
    extra = [k for k in params if k not in known]
    if extra:
        raise ToolFailure(f"Error calling tool '{declared['tool_name']}': 1 validation error for call[{declared['tool_name']}]\n"
                          f"{extra[0]}\n  Unexpected keyword argument [type=unexpected_keyword_argument]")


def png(width, height, rgb):
    """A solid PNG, made with the standard library."""
    import struct, zlib
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


class FakeDesktop:
    """A Windows desktop as UFO's UI servers show it: one Notepad window with one edit
    control, which keyboard_input types into and texts reads."""

    def __init__(self):
        self.listed = None
        self.selected = None
        self.text = ""

    def shot(self):
        import base64
        return "data:image/png;base64," + base64.b64encode(png(80, 60, (200, 220, 240))).decode()

    def run(self, agent, name, params):
        if name == "get_desktop_app_info":
            self.listed = {"1": "notes - Notepad"}
            return [{"id": "1", "name": "notes - Notepad", "type": "Window", "kind": "window"}]
        if name == "capture_desktop_screenshot":
            return self.shot()
        if name == "select_application_window":
            if not self.listed:
                raise ToolFailure("No application windows available. Please call get_desktop_app_info first.")
            if params.get("id") not in self.listed:
                raise ToolFailure(f"Control with id '{params.get('id')}' not found. Available control ids: {list(self.listed)}")
            self.selected = self.listed[params["id"]]
            return {"root_name": "notepad.exe",
                    "window_info": {"annotation_id": None, "name": self.selected, "title": self.selected,
                                    "class_name": "Notepad", "control_type": "Window"}}
        if self.selected is None:
            raise ToolFailure("No window is selected, please select a window first.")
        if name == "get_app_window_controls_info":
            return [{"control_type": "Edit", "control_rect": [10, 40, 790, 580], "control_text": "Text Editor", "label": "1"}]
        if name == "get_app_window_info":
            return {"control_text": self.selected, "control_rect": [0, 0, 800, 600]}
        if name == "capture_window_screenshot":
            return self.shot()
        if params.get("id") != "1":
            raise ToolFailure(f"Control with id '{params.get('id')}' not found. Available control ids: ['1']")
        if name == "keyboard_input":
            self.text += params.get("keys", "")
            return f"Executed action keyboard_input, please check the application for whether it took effect."
        if name == "texts":
            return self.text
        if name == "click_input":
            return f"Executed action click_input, please check the application for whether it took effect."
        raise Unroutable(name)


class ToolFailure(Exception):
    """A tool that ran and failed (UFO's ToolError): a failure Result."""


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat()


def log(*parts):
    print(f"[{now()}]", *parts, file=sys.stderr, flush=True)


class Unroutable(Exception):
    """A command UFO's client cannot route: it sends no answer at all."""


# UFO's Linux MCP server runs only these programs (linux_mcp_server.py), without a shell,
# and refuses shell metacharacters and redirections (with --ufo-allowlist).
ALLOWED = {"ls", "pwd", "cat", "head", "tail", "grep", "find", "which", "whereis", "wc", "sort", "uniq", "cut",
           "tr", "uname", "hostname", "whoami", "id", "uptime", "free", "df", "du", "ps", "ping", "traceroute",
           "nslookup", "dig", "host", "file", "stat", "md5sum", "sha256sum", "python3", "python", "echo", "date",
           "cal", "basename", "dirname", "realpath", "diff", "test"}
BLOCKED = ["[;|&`]", r"\$\(", r"\$\{", r"-exec\b", "/dev/tcp/", "/dev/udp/", "[><]", "[\n\r\x00]"]
KEY_REFUSED = "Authentication failed. Invalid or missing API key."
COMMAND_REFUSED = "Command blocked by security policy. Only allow-listed commands may be executed."


def allowed(command):
    import re, shlex
    if any(re.search(p, command) for p in BLOCKED):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return bool(words) and os.path.basename(words[0]) in ALLOWED


ALLOWLIST = False


def run_tool(name, params):
    if name == "list_tools":
        return {"status": "success", "result": TOOLS}
    declared = next((t for t in TOOLS if t["tool_name"] == name), None)
    if declared is None:
        raise Unroutable(name)
    try:
        validate(declared, params)
    except ToolFailure as e:
        return {"status": "failure", "error": str(e), "result": None}
    if params.get("api_key") != os.environ.get("UFO_MCP_API_KEY"):
        if name == "get_system_info":
            return {"status": "success", "result": {"error": KEY_REFUSED}}
        return {"status": "success", "result": {"success": False, "error": KEY_REFUSED}}
    if name == "get_system_info":
        return {"status": "success", "result": {"uname": " ".join(host_platform.uname()),
                                                "uptime": f"up {datetime.datetime.now().isoformat()}",
                                                "memory": "", "disk": ""}}
    if ALLOWLIST and not allowed(params["command"]):
        return {"status": "success", "result": {"success": False, "error": COMMAND_REFUSED}}
    timeout = max(1, min(120, int(params.get("timeout") if params.get("timeout") is not None else 30)))
    cwd = params.get("cwd") or None
    if cwd and not os.path.isdir(cwd):
        return {"status": "success", "result": {"success": False,
                                                "error": f"Invalid working directory: Working directory does not exist: {cwd}"}}
    try:
        import shlex
        command = shlex.split(params["command"]) if ALLOWLIST else params["command"]
        # UFO's server decodes what a command prints with errors="replace".
        done = subprocess.run(command, shell=not ALLOWLIST, cwd=cwd, capture_output=True, text=True,
                              errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "success", "result": {"success": False, "error": f"Timeout after {timeout}s."}}
    except OSError as e:
        return {"status": "success", "result": {"success": False, "error": str(e)}}
    return {
        "status": "success",
        "result": {"success": done.returncode == 0, "exit_code": done.returncode, "stdout": done.stdout, "stderr": done.stderr},
    }


class Device:
    def __init__(self, args):
        self.args = args
        self.lock = asyncio.Lock()
        self.desktop = FakeDesktop()

    def windows_tool(self, agent, name, params):
        if name == "list_tools":
            return {"status": "success", "result": WINDOWS_TOOLS.get(agent, [])}
        declared = next((t for t in WINDOWS_TOOLS.get(agent, []) if t["tool_name"] == name), None)
        if declared is None:
            raise Unroutable(name)
        try:
            validate(declared, params)
            return {"status": "success", "result": self.desktop.run(agent, name, params)}
        except ToolFailure as e:
            return {"status": "failure", "error": str(e), "result": None}

    async def register(self, ws):
        await ws.send(json.dumps({
            "type": "register", "status": "ok", "client_type": "device", "client_id": self.args.client_id,
            "timestamp": now(), "metadata": {"platform": self.args.platform, "system_info": {
                "device_id": self.args.client_id, "platform": self.args.platform, "os_version": host_platform.release(),
                "cpu_count": os.cpu_count(), "hostname": host_platform.node(), "supported_features": ["shell"]}},
        }))
        answer = json.loads(await ws.recv())
        # UFO's client accepts on the status alone (aip/protocol/registration.py).
        if answer.get("status") != "ok":
            raise RuntimeError(f"registration refused: {answer}")
        log("registered as", self.args.client_id)

    async def heartbeats(self, ws):
        while True:
            await asyncio.sleep(self.args.heartbeat)
            await ws.send(json.dumps({"type": "heartbeat", "status": "ok", "client_id": self.args.client_id, "timestamp": now()}))

    async def handle(self, ws, frame):
        async with self.lock:  # one command at a time
            listing = all(a.get("tool_name") == "list_tools" for a in frame.get("actions") or [])
            muted = self.args.mute_on and self.args.mute_on in json.dumps(frame.get("actions"))
            if (self.args.mute and not listing) or muted:
                log("mute: not answering", frame.get("response_id"))
                return
            agent = frame.get("agent_name")
            windows = self.args.platform == "windows"
            if (windows and agent not in WINDOWS_TOOLS) or (not windows and agent != "LinuxAgent"):
                log("cannot route agent", agent, "- no answer")
                return
            results, failed = [], False
            try:
                for action in frame.get("actions") or []:
                    call_id = action.get("call_id")
                    if failed:
                        results.append({"status": "skipped", "error": "Skipped due to previous failure (early_exit=True).",
                                        "result": None, "namespace": None, "call_id": call_id})
                        continue
                    params = action.get("parameters") or {}
                    declared = [t for t in (WINDOWS_TOOLS.get(agent, []) if windows else TOOLS)
                                if t["tool_name"] == action.get("tool_name")]
                    if action.get("tool_name") != "list_tools" and declared and declared[0]["tool_type"] != action.get("tool_type"):
                        # UFO's client looks tools up as `tool_type::tool_name`: no answer.
                        raise Unroutable(f"{action.get('tool_type')}::{action.get('tool_name')}")
                    if self.args.die_on and self.args.die_on in json.dumps(params):
                        log("dying on", params)
                        os._exit(9)
                    if windows:
                        r = self.windows_tool(agent, action.get("tool_name"), params)
                    else:
                        r = await asyncio.to_thread(run_tool, action.get("tool_name"), params)
                    # Each result carries its tool's namespace, and no result when the tool
                    # gave nothing (UFO's client: `result=data or None`).
                    namespace = declared[0]["namespace"] if declared else "BashExecutor"
                    r.update({"namespace": namespace, "call_id": call_id, "error": r.get("error")})
                    if not r.get("result"):
                        r["result"] = None
                    failed = r["status"] == "failure"
                    results.append(r)
            except Unroutable as e:
                log("cannot route tool", e, "- no answer")
                return
            await ws.send(json.dumps({
                "type": "command_results", "status": frame.get("status", "continue"), "client_id": self.args.client_id,
                "session_id": frame.get("session_id"), "request_id": str(uuid.uuid4()),
                "prev_response_id": frame.get("response_id"), "action_results": results, "timestamp": now(),
            }))

    async def listen(self, ws):
        beats = asyncio.create_task(self.heartbeats(ws))
        try:
            async for text in ws:
                try:
                    frame = json.loads(text)
                except ValueError:
                    log("not JSON, ignored:", text[:80])
                    continue
                if not isinstance(frame, dict) or "status" not in frame:
                    log("not an AIP frame, ignored:", text[:80])
                    continue
                if frame.get("type") == "command":
                    asyncio.create_task(self.handle(ws, frame))
        finally:
            beats.cancel()

    async def run(self):
        failures = 0
        while True:
            try:
                async with websockets.connect(self.args.url, max_size=100 * 2**20, ping_interval=20, ping_timeout=180) as ws:
                    await self.register(ws)
                    failures = 0
                    await self.listen(ws)
                    log("connection closed")
            except Exception as e:  # any close or refusal: back off and reconnect
                log("connection failed:", repr(e))
            failures += 1
            if self.args.max_retries and failures > self.args.max_retries:
                log("Exiting.")
                return
            wait = self.args.backoff * 2 ** min(failures - 1, 4)
            log(f"reconnecting in {wait}s")
            await asyncio.sleep(wait)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("client_id")
    p.add_argument("--platform", default="linux")
    p.add_argument("--heartbeat", type=float, default=120)
    p.add_argument("--backoff", type=float, default=2)
    p.add_argument("--mute", action="store_true")
    p.add_argument("--mute-on")
    p.add_argument("--die-on")
    p.add_argument("--max-retries", type=int, default=0)
    p.add_argument("--ufo-allowlist", action="store_true")
    args = p.parse_args()
    global ALLOWLIST
    ALLOWLIST = args.ufo_allowlist
    asyncio.run(Device(args).run())


if __name__ == "__main__":
    main()
