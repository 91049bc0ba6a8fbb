"""An AIP device client for the tests, speaking UFO's protocol as its own client does
(../shared/reference/aip.md): it dials out over one WebSocket (the token in the URL),
registers with its client id and platform, waits for the server's heartbeat/ok, sends a
heartbeat every --heartbeat seconds, carries out one command frame at a time through its
tools and answers it with one command_results frame (prev_response_id = the command's
response_id, one Result per action, the rest skipped after a failure), drops a command it
cannot route without a word (an unknown agent or tool, as UFO's client does), and
reconnects after any close with back-off (--backoff, doubling), registering again with
the same id.

Its tools are the signatures of UFO's Linux MCP server: execute_command(command,
api_key, timeout=30, cwd) and get_system_info(api_key), the key checked against
$UFO_MCP_API_KEY; and UFO's meta tool list_tools. Unlike UFO's server, execute_command
runs its command through a shell (the tests' plans use pipes and redirections). With
--platform windows it offers instead the tools of UFO's Windows UI servers by agent
(HostAgent: select_application_window(window_label), get_desktop_app_info,
capture_desktop_screenshot; AppAgent: click_input, keyboard_input, texts with
control_label/control_text, get_app_window_controls_info, get_app_window_info,
capture_window_screenshot) on a fake desktop: one Notepad window with one edit
control.

With --ufo-allowlist, execute_command runs only what UFO's own Linux server allows
(allow-listed read-only programs, no shell metacharacters, no redirections).

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

TOOLS = [
    {
        "tool_key": "action::execute_command",
        "tool_name": "execute_command",
        "title": "execute_command",
        "namespace": "BashExecutor",
        "tool_type": "action",
        "description": "Execute a shell command on the device and return its output.",
        "tool_schema": {
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command to run"},
                "api_key": {"type": "string", "description": "The server's API key"},
                "timeout": {"type": "integer", "default": 30, "description": "Seconds, 1 to 120"},
                "cwd": {"type": "string", "description": "The working folder"},
            },
            "required": ["command", "api_key"],
        },
    },
    {
        "tool_key": "data_collection::get_system_info",
        "tool_name": "get_system_info",
        "title": "get_system_info",
        "namespace": "BashExecutor",
        "tool_type": "data_collection",
        "description": "Basic facts about the device.",
        "tool_schema": {
            "type": "object",
            "properties": {"api_key": {"type": "string"}},
            "required": ["api_key"],
        },
    },
]


def tool(name, tool_type, namespace, properties, required=()):
    return {"tool_key": f"{tool_type}::{name}", "tool_name": name, "title": name, "namespace": namespace,
            "tool_type": tool_type, "description": f"UFO's {name}",
            "tool_schema": {"type": "object", "properties": properties, "required": list(required)}}


S = {"type": "string"}
CONTROL = {"control_label": S, "control_text": S}
# The tools of UFO's Windows UI servers (HostUIExecutor, AppUIExecutor, UICollector),
# by agent, with their parameters.
WINDOWS_TOOLS = {
    "HostAgent": [
        tool("select_application_window", "action", "HostUIExecutor", {"window_label": S}, ["window_label"]),
        tool("get_desktop_app_info", "data_collection", "UICollector",
             {"remove_empty": {"type": "boolean"}, "refresh_app_windows": {"type": "boolean"}}),
        tool("capture_desktop_screenshot", "data_collection", "UICollector", {"all_screens": {"type": "boolean"}}),
    ],
    "AppAgent": [
        tool("click_input", "action", "AppUIExecutor", dict(CONTROL, button=S, double={"type": "boolean"}),
             ["control_label", "control_text"]),
        tool("keyboard_input", "action", "AppUIExecutor", dict(CONTROL, keys=S, control_focus={"type": "boolean"}),
             ["control_label", "control_text", "keys"]),
        tool("texts", "action", "AppUIExecutor", CONTROL, ["control_label", "control_text"]),
        tool("get_app_window_controls_info", "data_collection", "UICollector",
             {"field_list": {"type": "array", "items": S}}, ["field_list"]),
        tool("get_app_window_info", "data_collection", "UICollector",
             {"field_list": {"type": "array", "items": S}}, ["field_list"]),
        tool("capture_window_screenshot", "data_collection", "UICollector", {}),
    ],
}


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
            return [{"label": "1", "control_text": "notes - Notepad", "control_type": "Window"}]
        if name == "capture_desktop_screenshot":
            return self.shot()
        if name == "select_application_window":
            if not self.listed:
                raise ToolFailure("No application windows available. Please call get_desktop_app_info first.")
            if params.get("window_label") not in self.listed:
                raise ToolFailure(f"Window with label '{params.get('window_label')}' not found.")
            self.selected = self.listed[params["window_label"]]
            return {"root_name": "notepad.exe", "window_info": {"title": self.selected}}
        if self.selected is None:
            raise ToolFailure("No window is selected, please select a window first.")
        if name == "get_app_window_controls_info":
            return [{"label": "1", "control_text": "Text Editor", "control_type": "Edit", "control_rect": [10, 40, 790, 580]}]
        if name == "get_app_window_info":
            return {"control_text": self.selected, "control_rect": [0, 0, 800, 600]}
        if name == "capture_window_screenshot":
            return self.shot()
        if params.get("control_label") != "1":
            raise ToolFailure(f"Control with label {params.get('control_label')} not found.")
        if name == "keyboard_input":
            self.text += params.get("keys", "")
            return {"status": "success"}
        if name == "texts":
            return self.text
        if name == "click_input":
            return {"status": "success"}
        raise Unroutable(name)


class ToolFailure(Exception):
    """A tool that ran and failed (UFO's ToolError): a failure Result."""


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat()


def log(*parts):
    print(f"[{now()}]", *parts, file=sys.stderr, flush=True)


class Unroutable(Exception):
    """A command UFO's client cannot route: it sends no answer at all."""


# UFO's Linux MCP server runs only these programs, without a shell, and refuses shell
# metacharacters and redirections (with --ufo-allowlist).
ALLOWED = {"ls", "cat", "grep", "find", "ps", "df", "echo", "head", "tail", "wc", "uname", "whoami", "pwd", "test", "base64"}
METACHARACTERS = set(";|&><`$")


def allowed(command):
    words = command.split()
    return bool(words) and words[0] in ALLOWED and not (set(command) & METACHARACTERS)


ALLOWLIST = False


def run_tool(name, params):
    if name == "list_tools":
        return {"status": "success", "result": TOOLS}
    if name not in ("execute_command", "get_system_info"):
        raise Unroutable(name)
    if params.get("api_key") != os.environ.get("UFO_MCP_API_KEY"):
        return {"status": "success", "result": {"success": False, "error": "Invalid API key"}}
    if name == "get_system_info":
        return {"status": "success", "result": {"uname": " ".join(host_platform.uname()), "cpus": os.cpu_count()}}
    if ALLOWLIST and not allowed(params["command"]):
        return {"status": "success", "result": {"success": False, "error": f"Command not allowed: {params['command']}"}}
    timeout = max(1, min(120, int(params.get("timeout") or 30)))
    cwd = params.get("cwd") or None
    try:
        done = subprocess.run(params["command"], shell=True, cwd=cwd, capture_output=True, text=True, timeout=timeout)
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
        if not any(t["tool_name"] == name for t in WINDOWS_TOOLS.get(agent, [])):
            raise Unroutable(name)
        try:
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
        if answer.get("type") != "heartbeat" or answer.get("status") != "ok":
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
                    if self.args.die_on and self.args.die_on in json.dumps(params):
                        log("dying on", params)
                        os._exit(9)
                    if windows:
                        r = self.windows_tool(agent, action.get("tool_name"), params)
                    else:
                        r = await asyncio.to_thread(run_tool, action.get("tool_name"), params)
                    r.update({"namespace": "BashExecutor", "call_id": call_id, "error": r.get("error")})
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
