"""Fake model APIs on 127.0.0.1 for driving real MCP clients offline.

One server answers the three wire formats the pinned clients speak:

- Anthropic streaming Messages (`POST /v1/messages`, SSE), Claude Code;
- Gemini (`POST /v1beta/models/M:streamGenerateContent` SSE, `:generateContent`), Gemini CLI;
- OpenAI Responses (`POST /v1/responses`, SSE), Codex CLI.

Every request body is recorded (the tool declarations a client hands its model are in it),
and each answer comes from a *script*: a function of the conversation so far (the tool
names offered and the tool results already sent back) that returns the next move, a tool
call or a final text. Deciding from the conversation rather than from a request counter keeps
a script correct when a client sends extra requests of its own (titles, routing, quota).
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


@dataclass
class Call:
    """The model asks for one tool call."""

    name: str
    args: dict


@dataclass
class Final:
    """The model ends its turn with text."""

    text: str


@dataclass
class Conversation:
    """What a script sees of one request: the client's tools and the tool results so far."""

    api: str
    tools: list[str]
    # (tool name as the client named it, result text), oldest first.
    results: list[tuple[str, str]] = field(default_factory=list)
    # The text of the whole request, for scripts that look for a marker.
    raw: str = ""


Script = Callable[[Conversation], "Call | Final"]


def say(text: str) -> Script:
    """A script that answers with text at once (no tool call)."""
    return lambda _conv: Final(text)


def _text_of(content) -> str:
    """The text inside a tool result in any of the three formats."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(c) for c in content)
    if isinstance(content, dict):
        # An image is not text (images_seen collects them): its base64 would hide the JSON.
        if content.get("type") in ("image", "input_image") or "inlineData" in content:
            return ""
        for key in ("text", "content", "output", "result", "response"):
            if key in content:
                return _text_of(content[key])
        return json.dumps(content)
    return str(content)


def parse_anthropic(body: dict) -> Conversation:
    tools = [t.get("name", "") for t in body.get("tools") or []]
    names: dict[str, str] = {}
    results: list[tuple[str, str]] = []
    for message in body.get("messages") or []:
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if block.get("type") == "tool_use":
                names[block.get("id", "")] = block.get("name", "")
            elif block.get("type") == "tool_result":
                name = names.get(block.get("tool_use_id", ""), "")
                results.append((name, _text_of(block.get("content"))))
    return Conversation("anthropic", tools, results, json.dumps(body))


def parse_gemini(body: dict) -> Conversation:
    tools = [
        d.get("name", "")
        for t in body.get("tools") or []
        for d in t.get("functionDeclarations") or []
    ]
    results = [
        (part["functionResponse"].get("name", ""), _text_of(part["functionResponse"].get("response")))
        for c in body.get("contents") or []
        for part in c.get("parts") or []
        if "functionResponse" in part
    ]
    return Conversation("gemini", tools, results, json.dumps(body))


def _responses_tool_names(tools: list) -> list[str]:
    names = []
    for t in tools or []:
        if t.get("type") == "namespace" or "tools" in t:
            prefix = t.get("name", "")
            names.extend(prefix + "." + (s.get("name") or "") for s in t.get("tools") or [])
        else:
            names.append(t.get("name") or (t.get("function") or {}).get("name") or t.get("type", ""))
    return names


def parse_responses(body: dict) -> Conversation:
    tools = _responses_tool_names(body.get("tools") or [])
    names: dict[str, str] = {}
    results: list[tuple[str, str]] = []
    for item in body.get("input") or []:
        kind = item.get("type")
        if kind == "function_call":
            name = item.get("name", "")
            if item.get("namespace"):
                name = item["namespace"] + "." + name
            names[item.get("call_id", "")] = name
        elif kind == "function_call_output":
            results.append((names.get(item.get("call_id", ""), ""), _text_of(item.get("output"))))
    return Conversation("responses", tools, results, json.dumps(body))


class FakeModel:
    """A running fake API; `requests` holds every (path, body) it received."""

    def __init__(self, script: Script):
        self.script = script
        self.requests: list[tuple[str, dict]] = []
        self.lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_args):
                pass

            def do_GET(self):
                model._record(self.path, {})
                if "/models" in self.path:
                    self._json({"data": [], "models": [], "object": "list"})
                else:
                    self._json({})

            def do_HEAD(self):
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if self.headers.get("Content-Encoding") == "zstd":
                    body = {"undecodable": True}
                else:
                    try:
                        body = json.loads(raw or b"{}")
                    except ValueError:
                        body = {"undecodable": raw[:200].decode("utf-8", "replace")}
                model._record(self.path, body)
                path = self.path.split("?", 1)[0]
                try:
                    if path.endswith("/messages/count_tokens"):
                        self._json({"input_tokens": 10})
                    elif path.endswith("/messages"):
                        model._anthropic(self, body)
                    elif ":streamGenerateContent" in path or ":generateContent" in path:
                        model._gemini(self, body, stream=":streamGenerateContent" in path)
                    elif ":countTokens" in path:
                        self._json({"totalTokens": 10})
                    elif path.endswith("/responses"):
                        model._responses(self, body)
                    else:
                        self._json({})
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _json(self, obj, status=200):
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def sse(self, events: list[tuple[str | None, dict]]):
                chunks = []
                for name, data in events:
                    head = f"event: {name}\n" if name else ""
                    chunks.append(f"{head}data: {json.dumps(data)}\n\n")
                payload = "".join(chunks).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "FakeModel":
        self.thread.start()
        return self

    def __exit__(self, *_exc):
        self.server.shutdown()
        self.server.server_close()

    def _record(self, path: str, body: dict):
        with self.lock:
            self.requests.append((path, body))

    def _move(self, conv: Conversation):
        try:
            return self.script(conv)
        except Exception as exc:  # a script bug must show up in the session, not hang it
            return Final(f"fake model script failed: {exc!r}")

    # -- what was seen ------------------------------------------------------------------
    def conversations(self) -> list[Conversation]:
        with self.lock:
            seen = list(self.requests)
        out = []
        for path, body in seen:
            p = path.split("?", 1)[0]
            if p.endswith("/messages"):
                out.append(parse_anthropic(body))
            elif "GenerateContent" in p or "generateContent" in p:
                out.append(parse_gemini(body))
            elif p.endswith("/responses"):
                out.append(parse_responses(body))
        return out

    def tools_seen(self) -> set[str]:
        return {t for c in self.conversations() for t in c.tools}

    def images_seen(self) -> list[tuple[str, str]]:
        """Every image a client sent the model, as (media type, base64 data), from any request:
        Anthropic Messages image blocks (inside tool_result content too), Gemini inlineData
        parts, Responses input_image data URLs."""
        with self.lock:
            bodies = [body for _path, body in self.requests]
        found: list[tuple[str, str]] = []

        def walk(node):
            if isinstance(node, dict):
                source = node.get("source")
                if node.get("type") == "image" and isinstance(source, dict) and source.get("data"):
                    found.append((source.get("media_type", ""), source["data"]))
                inline = node.get("inlineData") or node.get("inline_data")
                if isinstance(inline, dict) and inline.get("data"):
                    found.append((inline.get("mimeType") or inline.get("mime_type", ""), inline["data"]))
                url = node.get("image_url")
                if node.get("type") == "input_image" and isinstance(url, str) and url.startswith("data:"):
                    head, _, data = url.partition(",")
                    found.append((head[5:].split(";")[0], data))
                for v in node.values():
                    walk(v)
            elif isinstance(node, list):
                for v in node:
                    walk(v)

        for body in bodies:
            walk(body)
        return found

    def results_seen(self) -> list[tuple[str, str]]:
        """The longest list of tool results any request carried (the latest conversation)."""
        best: list[tuple[str, str]] = []
        for c in self.conversations():
            if len(c.results) >= len(best):
                best = c.results
        return best

    # -- Anthropic Messages -------------------------------------------------------------
    def _anthropic(self, h, body: dict):
        conv = parse_anthropic(body)
        # Requests without tools are the client's own side requests (titles, quota checks).
        move = self._move(conv) if conv.tools else Final("ok")
        msg_id = "msg_" + uuid.uuid4().hex[:12]
        usage = {"input_tokens": 10, "output_tokens": 5}
        if isinstance(move, Call):
            block = {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:12], "name": move.name, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(move.args)}
            stop = "tool_use"
            full = dict(block, input=move.args)
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": move.text}
            stop = "end_turn"
            full = {"type": "text", "text": move.text}
        model = body.get("model", "claude-fake")
        if not body.get("stream"):
            h._json({
                "id": msg_id, "type": "message", "role": "assistant", "model": model,
                "content": [full], "stop_reason": stop, "stop_sequence": None, "usage": usage,
            })
            return
        h.sse([
            ("message_start", {"type": "message_start", "message": {
                "id": msg_id, "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ])

    # -- Gemini -------------------------------------------------------------------------
    def _gemini(self, h, body: dict, stream: bool):
        conv = parse_gemini(body)
        if conv.tools:
            move = self._move(conv)
        else:
            # Side requests (routing, next-speaker checks) ask for JSON; a valid-looking
            # object that decides nothing lets the client fall back to its defaults.
            move = Final('{"next_speaker": "user", "reasoning": "done"}'
                         if "next_speaker" in json.dumps(body) else "ok")
        if isinstance(move, Call):
            part = {"functionCall": {"name": move.name, "args": move.args}}
        else:
            part = {"text": move.text}
        answer = {
            "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": "gemini-fake",
        }
        if stream:
            h.sse([(None, answer)])
        else:
            h._json(answer)

    # -- OpenAI Responses ---------------------------------------------------------------
    def _responses(self, h, body: dict):
        conv = parse_responses(body)
        move = self._move(conv) if conv.tools else Final("ok")
        resp_id = "resp_" + uuid.uuid4().hex[:12]
        if isinstance(move, Call):
            namespace, _, name = move.name.rpartition(".")
            item = {"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:12],
                    "call_id": "call_" + uuid.uuid4().hex[:12], "name": name or move.name,
                    "arguments": json.dumps(move.args), "status": "completed"}
            if namespace:
                item["namespace"] = namespace
        else:
            item = {"type": "message", "role": "assistant", "id": "msg_" + uuid.uuid4().hex[:12],
                    "status": "completed",
                    "content": [{"type": "output_text", "text": move.text, "annotations": []}]}
        base = {"id": resp_id, "object": "response", "status": "in_progress", "model": body.get("model", "fake"),
                "output": []}
        done = dict(base, status="completed", output=[item], usage={
            "input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15})
        h.sse([
            ("response.created", {"type": "response.created", "response": base}),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "response": done}),
        ])
