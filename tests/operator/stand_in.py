"""Stand-ins for the computer-use APIs, on loopback, for ufo-batch's tests.

Every request is validated against the official SDKs' own request types (``openai``
3.51: ``ResponseCreateParamsNonStreaming``, ``CompletionCreateParamsNonStreaming``;
``anthropic`` 2.10: ``MessageCreateParamsNonStreaming`` and its beta twin), with every
TypedDict set to refuse keys it does not declare; and every reply is built from the
SDKs' response models (``Response``, ``Message``, ``ChatCompletion``) by
``model_validate``, then sent as the models dump it. So what the runner sends and reads
is what the real services take and send. A request that does not validate is answered
400 with the validation's words, and logged as invalid.

What each reply says is scripted: a task's instruction carries ``[script:NAME]``, and
NAME's turns are played in order. A turn (one reply)::

    {"thought": "...",                      # reasoning summary / text / Thought:
     "actions": [ACTION, ...],              # one batch
     "message": "...",                      # a final message (no actions)
     "safety_checks": [{"code": "...", "message": "..."}],   # OpenAI's
     "fault": {"status": 400, "body": {...}},                # an HTTP error instead
     "raw": "..." / [...]}                  # the reply's text (chat) or output items
                                            # (OpenAI) or content blocks (Anthropic)

An ACTION names its points as fractions of the image the request carried last (so the
script is the same for every provider, size and coordinate space)::

    {"click": [0.5, 0.5], "button": "left", "keys": ["shift"]}
    {"double_click": [fx, fy]}  {"triple_click": [fx, fy]}  {"move": [fx, fy]}
    {"drag": [[fx, fy], [fx, fy], ...]}
    {"scroll": [fx, fy], "dy": 3, "dx": 0}          # notches; positive: down, right
    {"keypress": ["ctrl", "s"]}  {"type": "text"}   {"wait": 1}
    {"screenshot": true}  {"zoom": [fx0, fy0, fx1, fy1]}  {"cursor_position": true}
    {"done": "message"}  {"fail": "message"}        # chat formats' end
    {"px": [x, y]} in place of fractions gives the image's pixels as they are.
    {"raw": {...}}                                  # the provider's own action object

Run: ``python stand_in.py --log FILE [--script FILE] [--port 0] [--format ui-tars-1.5]
[--parent PID]``; it prints ``listening on http://127.0.0.1:PORT`` and serves until
killed (or until PID ends). ``POST /stand-in/scenarios`` with ``{"scenarios": {...}}``
adds scenarios to the running server. Paths:
``POST /v1/responses`` (OpenAI), ``POST /v1/messages`` (Anthropic), ``POST
/v1/chat/completions`` (chat); any ``GET`` answers 200.
"""

import argparse
import base64
import importlib
import json
import pkgutil
import re
import struct
import sys
import threading
import time
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from typing_extensions import is_typeddict

import anthropic.types
import openai.types

warnings.filterwarnings("ignore")


def forbid_unknown_keys(package):
    """Every TypedDict of the SDK's types refuses keys it does not declare."""
    for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        try:
            loaded = importlib.import_module(module.name)
        except Exception:  # a module for another Python: not ours to judge
            continue
        for value in vars(loaded).values():
            if isinstance(value, type) and is_typeddict(value) and value.__module__.startswith(package.__name__):
                value.__pydantic_config__ = {"extra": "forbid", "arbitrary_types_allowed": True}


forbid_unknown_keys(openai.types)
forbid_unknown_keys(anthropic.types)

from pydantic import TypeAdapter  # noqa: E402
from openai.types.chat import ChatCompletion  # noqa: E402
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming  # noqa: E402
from openai.types.responses import Response  # noqa: E402
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming  # noqa: E402
from anthropic.types import Message  # noqa: E402
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming  # noqa: E402
from anthropic.types.beta.message_create_params import (  # noqa: E402
    MessageCreateParamsNonStreaming as BetaMessageCreateParamsNonStreaming,
)

RESPONSES = TypeAdapter(ResponseCreateParamsNonStreaming)
MESSAGES = TypeAdapter(MessageCreateParamsNonStreaming)
BETA_MESSAGES = TypeAdapter(BetaMessageCreateParamsNonStreaming)
CHAT = TypeAdapter(CompletionCreateParamsNonStreaming)

MARKER = re.compile(r"\[script:([A-Za-z0-9_./-]+)\]")
GRID_FORMATS = {"ui-tars", "ui-tars-2", "qwen3-vl"}


def materialized(value):
    """The validated value with its lazy iterables run through (which validates them)."""
    if isinstance(value, dict):
        return {k: materialized(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [materialized(v) for v in value]
    if type(value).__name__ == "ValidatorIterator":
        return [materialized(v) for v in value]
    return value


def validate(adapter, body):
    """None when `body` is what the SDK's request type takes, else why not (shortly)."""
    try:
        materialized(adapter.validate_python(body))
        return None
    except Exception as e:  # pydantic's ValidationError, or a type error inside it
        text = str(e)
        return text[:3000]


def png_size(data_url_or_b64):
    """The width and height of a PNG given as a data: URL or base64."""
    text = data_url_or_b64
    if text.startswith("data:"):
        text = text.split(",", 1)[1]
    raw = base64.b64decode(text[:64] + "=" * (-len(text[:64]) % 4))
    if raw[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("the image is not a PNG")
    width, height = struct.unpack(">II", raw[16:24])
    return width, height


def last_image(value):
    """The last image in a request body (a data URL or base64), anywhere in it."""
    found = [None]

    def walk(v):
        if isinstance(v, dict):
            if v.get("type") == "image" and isinstance(v.get("source"), dict):
                found[0] = v["source"].get("data")
            for key in ("image_url",):
                u = v.get(key)
                if isinstance(u, str) and u.startswith("data:image"):
                    found[0] = u
                if isinstance(u, dict) and str(u.get("url", "")).startswith("data:image"):
                    found[0] = u["url"]
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(value)
    return found[0]


def texts(value):
    """Every string in a request body."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for x in value.values():
            yield from texts(x)
    elif isinstance(value, list):
        for x in value:
            yield from texts(x)


class Script:
    """The scripted turns, played per scenario."""

    def __init__(self, path, chat_format):
        self.scenarios = {}
        if path:
            with open(path, encoding="utf-8") as f:
                self.scenarios = json.load(f)["scenarios"]
        self.chat_format = chat_format
        self.lock = threading.Lock()
        self.responses = {}  # OpenAI response id -> (scenario, turn index)
        self.counter = 0

    def next_id(self, prefix):
        with self.lock:
            self.counter += 1
            return f"{prefix}_{self.counter:04d}"

    def turn(self, name, index):
        turns = self.scenarios.get(name, [])
        if index < len(turns):
            return turns[index]
        return {"message": f"(stand-in: the script {name!r} has no turn {index + 1})"}


def point(action, key, size):
    """An action's point in the image's pixels."""
    value = action[key]
    if isinstance(value, dict) and "px" in value:
        return value["px"]
    w, h = size
    return [round(value[0] * w), round(value[1] * h)]


def grid_or_pixels(action, key, size, grid):
    """The point in the chat format's space: its grid, or the image's pixels."""
    if grid:
        value = action[key]
        return [round(value[0] * 1000), round(value[1] * 1000)]
    return point(action, key, size)


def kind(action):
    for k in ("click", "double_click", "triple_click", "move", "drag", "scroll", "keypress", "type", "wait",
              "screenshot", "zoom", "cursor_position", "done", "fail", "raw"):
        if k in action:
            return k
    raise ValueError(f"the script's action {action!r} names no kind")


# ---- OpenAI ------------------------------------------------------------------------

def openai_action(action, size):
    k = kind(action)
    if k == "raw":
        return action["raw"]
    if k == "click":
        x, y = point(action, "click", size)
        out = {"type": "click", "button": action.get("button", "left"), "x": x, "y": y}
        if action.get("keys"):
            out["keys"] = action["keys"]
        return out
    if k == "double_click":
        x, y = point(action, "double_click", size)
        return {"type": "double_click", "x": x, "y": y}
    if k == "move":
        x, y = point(action, "move", size)
        return {"type": "move", "x": x, "y": y}
    if k == "drag":
        w, h = size
        return {"type": "drag", "path": [{"x": round(p[0] * w), "y": round(p[1] * h)} for p in action["drag"]]}
    if k == "scroll":
        x, y = point(action, "scroll", size)
        # OpenAI's scroll is in pixels: 100 a notch.
        return {"type": "scroll", "x": x, "y": y, "scroll_x": 100 * action.get("dx", 0),
                "scroll_y": 100 * action.get("dy", 0)}
    if k == "keypress":
        return {"type": "keypress", "keys": action["keypress"]}
    if k == "type":
        return {"type": "type", "text": action["type"]}
    if k == "wait":
        return {"type": "wait"}
    if k == "screenshot":
        return {"type": "screenshot"}
    raise ValueError(f"OpenAI's computer tool has no {k!r}")


def openai_reply(script, body, log):
    problem = validate(RESPONSES, body)
    tools = body.get("tools") or [{}]
    preview = tools[0].get("type") == "computer_use_preview"
    previous = body.get("previous_response_id")
    if previous:
        name, index = script.responses.get(previous, (None, 0))
        index += 1
    else:
        found = [m.group(1) for t in texts(body.get("input")) for m in MARKER.finditer(t)]
        name, index = (found[0] if found else None), 0
    log["scenario"], log["turn"] = name, index + 1
    if problem:
        return 400, {"error": {"message": f"stand-in: the request does not validate as the SDK's ResponseCreateParams: {problem}", "type": "invalid_request_error", "param": None, "code": None}}
    turn = script.turn(name, index)
    if "fault" in turn:
        return turn["fault"]["status"], turn["fault"]["body"]
    size = png_size(last_image(body) or "")
    output = []
    if turn.get("thought"):
        output.append({"id": script.next_id("rs"), "type": "reasoning",
                       "summary": [{"type": "summary_text", "text": turn["thought"]}]})
    if isinstance(turn.get("raw"), list):
        output.extend(turn["raw"])
    actions = [openai_action(a, size) for a in turn.get("actions", [])]
    checks = [{"id": script.next_id("cu_sc"), "code": c.get("code"), "message": c.get("message")}
              for c in turn.get("safety_checks", [])]
    if actions and preview:
        for i, a in enumerate(actions):
            output.append({"id": script.next_id("cu"), "call_id": script.next_id("call"), "type": "computer_call",
                           "status": "completed", "pending_safety_checks": checks if i == 0 else [],
                           "action": a})
    elif actions:
        output.append({"id": script.next_id("cu"), "call_id": script.next_id("call"), "type": "computer_call",
                       "status": "completed", "pending_safety_checks": checks, "actions": actions})
    if turn.get("message"):
        output.append({"id": script.next_id("msg"), "type": "message", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": turn["message"], "annotations": []}]})
    response_id = script.next_id("resp")
    with script.lock:
        script.responses[response_id] = (name, index)
    images = json.dumps(body).count("data:image/png;base64,")
    reply = Response.model_validate({
        "id": response_id, "object": "response", "created_at": time.time(), "model": body.get("model"),
        "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": tools,
        "status": "completed", "previous_response_id": previous, "truncation": body.get("truncation"),
        "usage": {"input_tokens": 1000 * images + 50, "output_tokens": 20, "total_tokens": 1000 * images + 70,
                  "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}},
    })
    return 200, reply.model_dump(mode="json")


# ---- Anthropic ---------------------------------------------------------------------

def anthropic_input(action, size):
    """A toolset member's name and input."""
    k = kind(action)
    held = "+".join(action.get("keys", []))
    def with_held(d):
        if held:
            d["text"] = held
        return d
    if k == "raw":
        return action["raw"]["name"], action["raw"].get("input", {})
    if k == "click":
        member = {"left": "left_click", "right": "right_click", "middle": "middle_click"}[action.get("button", "left")]
        return member, with_held({"coordinate": point(action, "click", size)})
    if k in ("double_click", "triple_click"):
        return k, with_held({"coordinate": point(action, k, size)})
    if k == "move":
        return "mouse_move", {"coordinate": point(action, "move", size)}
    if k == "drag":
        w, h = size
        path = [[round(p[0] * w), round(p[1] * h)] for p in action["drag"]]
        return "left_click_drag", with_held({"start_coordinate": path[0], "coordinate": path[-1]})
    if k == "scroll":
        dx, dy = action.get("dx", 0), action.get("dy", 0)
        direction = "down" if dy > 0 else "up" if dy < 0 else "right" if dx > 0 else "left"
        return "scroll", with_held({"coordinate": point(action, "scroll", size), "scroll_direction": direction,
                                    "scroll_amount": abs(dy or dx)})
    if k == "keypress":
        return "key", {"text": "+".join(action["keypress"])}
    if k == "type":
        return "type", {"text": action["type"]}
    if k == "wait":
        return "wait", {"duration": action["wait"]}
    if k == "screenshot":
        return "screenshot", {}
    if k == "cursor_position":
        return "cursor_position", {}
    if k == "zoom":
        w, h = size
        z = action["zoom"]
        return "zoom", {"region": [round(z[0] * w), round(z[1] * h), round(z[2] * w), round(z[3] * h)]}
    raise ValueError(f"Anthropic's computer tool has no {k!r}")


def anthropic_reply(script, body, headers, log):
    tools = body.get("tools") or [{}]
    old_tool = tools[0].get("type") == "computer_20251124"
    problem = validate(BETA_MESSAGES if old_tool else MESSAGES, body)
    if old_tool and "computer-use-2025-11-24" not in headers.get("anthropic-beta", ""):
        problem = (problem or "") + " the computer_20251124 tool needs the beta header computer-use-2025-11-24"
    if headers.get("anthropic-version") != "2023-06-01":
        problem = (problem or "") + " anthropic-version must be 2023-06-01"
    messages = body.get("messages", [])
    found = [m.group(1) for t in texts(messages[:1]) for m in MARKER.finditer(t)]
    name = found[0] if found else None
    index = sum(1 for m in messages if m.get("role") == "assistant")
    log["scenario"], log["turn"] = name, index + 1
    if problem:
        return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": f"stand-in: the request does not validate as the SDK's MessageCreateParams: {problem}"}}
    turn = script.turn(name, index)
    if "fault" in turn:
        return turn["fault"]["status"], turn["fault"]["body"]
    size = png_size(last_image(messages) or "")
    content = []
    if turn.get("thought"):
        content.append({"type": "text", "text": turn["thought"]})
    if isinstance(turn.get("raw"), list):
        content.extend(turn["raw"])
    for action in turn.get("actions", []):
        member, data = anthropic_input(action, size)
        if old_tool:
            content.append({"type": "tool_use", "id": script.next_id("toolu"), "name": "computer",
                            "input": {"action": member, **data}, "caller": {"type": "direct"}})
        else:
            content.append({"type": "tool_use", "id": script.next_id("toolu"), "name": member, "input": data,
                            "toolset_name": "computer", "caller": {"type": "direct"}})
    if turn.get("message"):
        content.append({"type": "text", "text": turn["message"]})
    images = json.dumps(messages).count('"media_type": "image/png"')
    reply = Message.model_validate({
        "id": script.next_id("msg"), "type": "message", "role": "assistant", "model": body.get("model"),
        "content": content, "stop_reason": "tool_use" if turn.get("actions") else "end_turn",
        "stop_sequence": None, "usage": {"input_tokens": 1500 * images + 60, "output_tokens": 25},
    })
    return 200, reply.model_dump(mode="json")


# ---- Chat formats ------------------------------------------------------------------

def quoted(text):
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"


def uitars_text(turn, size, fmt):
    grid = fmt in GRID_FORMATS
    two = fmt == "ui-tars-2"

    def at(action, key, name="start_box"):
        x, y = grid_or_pixels(action, key, size, grid)
        if two:
            return f"{'point' if name == 'start_box' else 'end_point'}='<point>{x} {y}</point>'"
        return f"{name}='<|box_start|>({x},{y})<|box_end|>'"

    calls = []
    for action in turn.get("actions", []):
        k = kind(action)
        if k == "raw":
            calls.append(action["raw"])
        elif k == "click":
            name = {"left": "click", "right": "right_single", "middle": "click"}[action.get("button", "left")]
            calls.append(f"{name}({at(action, 'click')})")
        elif k == "double_click":
            calls.append(f"left_double({at(action, 'double_click')})")
        elif k == "drag":
            first, last = {"d": action["drag"][0]}, {"d": action["drag"][-1]}
            start = at(first, "d", "start_box")
            if two:
                start = start.replace("point=", "start_point=", 1)
            calls.append(f"drag({start}, {at(last, 'd', 'end_box')})")
        elif k == "scroll":
            dy, dx = action.get("dy", 0), action.get("dx", 0)
            direction = "down" if dy > 0 else "up" if dy < 0 else "right" if dx > 0 else "left"
            calls.append(f"scroll({at(action, 'scroll')}, direction='{direction}')")
        elif k == "keypress":
            calls.append(f"hotkey(key={quoted(' '.join(k.lower() for k in action['keypress']))})")
        elif k == "type":
            calls.append(f"type(content={quoted(action['type'])})")
        elif k == "wait":
            calls.append("wait()")
        elif k in ("done", "fail"):
            calls.append(f"finished(content={quoted(action[k])})" if k == "done" else "call_user()")
        else:
            raise ValueError(f"UI-TARS has no {k!r}")
    return f"Thought: {turn.get('thought', 'Next.')}\nAction: " + "\n\n".join(calls)


def qwen_text(turn, size, fmt):
    grid = fmt in GRID_FORMATS
    calls = []
    for action in turn.get("actions", []):
        k = kind(action)
        if k == "raw":
            calls.append(action["raw"])
            continue
        if k == "click":
            member = {"left": "left_click", "right": "right_click", "middle": "middle_click"}[action.get("button", "left")]
            args = {"action": member, "coordinate": grid_or_pixels(action, "click", size, grid)}
        elif k in ("double_click", "triple_click"):
            args = {"action": k, "coordinate": grid_or_pixels(action, k, size, grid)}
        elif k == "move":
            args = {"action": "mouse_move", "coordinate": grid_or_pixels(action, "move", size, grid)}
        elif k == "drag":
            first = {"d": action["drag"][0]}
            last = {"d": action["drag"][-1]}
            calls.append({"action": "mouse_move", "coordinate": grid_or_pixels(first, "d", size, grid)})
            args = {"action": "left_click_drag", "coordinate": grid_or_pixels(last, "d", size, grid)}
        elif k == "scroll":
            # Qwen's pixels: positive scrolls up.
            args = {"action": "scroll", "coordinate": grid_or_pixels(action, "scroll", size, grid),
                    "pixels": -100 * action.get("dy", 0)}
        elif k == "keypress":
            args = {"action": "key", "keys": action["keypress"]}
        elif k == "type":
            args = {"action": "type", "text": action["type"]}
        elif k == "wait":
            args = {"action": "wait", "time": action["wait"]}
        elif k == "done":
            args = {"action": "terminate", "status": "success"}
        elif k == "fail":
            args = {"action": "terminate", "status": "failure"}
        else:
            raise ValueError(f"Qwen's computer_use has no {k!r}")
        calls.append(args)
    body = "".join(
        f"<tool_call>\n{json.dumps({'name': 'computer_use', 'arguments': c}) if isinstance(c, dict) else c}\n</tool_call>"
        for c in calls)
    return f"{turn.get('thought', '')}\n{body}".strip()


def chat_reply(script, body, log):
    problem = validate(CHAT, body)
    messages = body.get("messages", [])
    users = [m for m in messages if m.get("role") != "system"]
    found = [m.group(1) for t in texts(users[:1]) for m in MARKER.finditer(t)]
    name = found[0] if found else None
    index = sum(1 for m in messages if m.get("role") == "assistant")
    log["scenario"], log["turn"] = name, index + 1
    if problem:
        return 400, {"error": {"message": f"stand-in: the request does not validate as the SDK's CompletionCreateParams: {problem}", "type": "invalid_request_error", "param": None, "code": None}}
    turn = script.turn(name, index)
    if "fault" in turn:
        return turn["fault"]["status"], turn["fault"]["body"]
    size = png_size(last_image(messages) or "")
    fmt = script.chat_format
    if isinstance(turn.get("raw"), str):
        text = turn["raw"]
    elif fmt.startswith("qwen"):
        text = qwen_text(turn, size, fmt)
    else:
        text = uitars_text(turn, size, fmt)
    images = json.dumps(messages).count("data:image/png;base64,")
    reply = ChatCompletion.model_validate({
        "id": script.next_id("chatcmpl"), "object": "chat.completion", "created": int(time.time()),
        "model": body.get("model"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 800 * images + 40, "completion_tokens": 30, "total_tokens": 800 * images + 70},
    })
    return 200, reply.model_dump(mode="json")


# ---- The server --------------------------------------------------------------------

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    script = None
    log_path = None
    log_lock = threading.Lock()
    delay = 0.0

    def log_message(self, *args):
        pass

    def answer(self, status, value):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.answer(200, {"ok": True})

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        headers = {k.lower(): v for k, v in self.headers.items()}
        entry = {"path": self.path, "headers": {k: v for k, v in headers.items() if k != "authorization" and k != "x-api-key"},
                 "authorized": bool(headers.get("authorization") or headers.get("x-api-key"))}
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        entry["body"] = body
        if self.delay:
            time.sleep(self.delay)
        if self.path == "/stand-in/scenarios" and isinstance(body, dict):
            # A test adds its scenarios to the running stand-in.
            with self.script.lock:
                self.script.scenarios.update(body.get("scenarios", {}))
            self.answer(200, {"ok": True})
            return
        try:
            if body is None:
                status, value = 400, {"error": {"message": "stand-in: the body is not JSON"}}
            elif self.path.endswith("/responses"):
                status, value = openai_reply(self.script, body, entry)
            elif self.path.endswith("/messages"):
                status, value = anthropic_reply(self.script, body, headers, entry)
            elif self.path.endswith("/chat/completions"):
                status, value = chat_reply(self.script, body, entry)
            else:
                status, value = 404, {"error": {"message": f"stand-in: no route {self.path}"}}
        except Exception as e:  # the script or the stand-in itself: said, not hidden
            status, value = 500, {"error": {"message": f"stand-in failed: {type(e).__name__}: {e}"}}
        entry["status"] = status
        entry["invalid"] = status == 400 and "does not validate" in json.dumps(value)
        entry["reply"] = value
        with self.log_lock:
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")
        self.answer(status, value)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--script", help="a file of scenarios (more can be posted to /stand-in/scenarios)")
    parser.add_argument("--parent", type=int, help="end when this process does")
    parser.add_argument("--log", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--format", default="ui-tars-1.5", help="the chat action format")
    parser.add_argument("--delay-ms", type=int, default=0)
    args = parser.parse_args()
    Handler.script = Script(args.script, args.format)
    Handler.log_path = args.log
    Handler.delay = args.delay_ms / 1000
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    if args.parent:
        def watch():
            import os
            while True:
                try:
                    os.kill(args.parent, 0)
                except OSError:
                    os._exit(0)
                time.sleep(0.5)
        threading.Thread(target=watch, daemon=True).start()
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
