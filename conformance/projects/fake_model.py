"""A fake OpenAI-compatible chat-completions server: the only fake in the project matrix.

It plays a language model by rules the tests rely on (see `decide`), answers streamed and
non-streamed requests the way the OpenAI API does (text deltas, tool-call deltas with the
arguments split over several chunks, a usage chunk when asked), and records every request
it receives per `model`, so a test can check what the agent sent (two-turn memory).
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

WEATHER = re.compile(r"weather in ([A-Za-z]+)", re.IGNORECASE)
NAME = re.compile(r"my name is ([A-Za-z]+)", re.IGNORECASE)


@dataclass
class Reply:
    text: str = ""
    tool: str = ""
    args: dict[str, Any] | None = None


def text_of(content: Any) -> str:
    """A message's text: content is a string or a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def tool_names(tools: list[dict[str, Any]] | None) -> list[str]:
    return [t.get("function", {}).get("name", "") for t in tools or []]


def decide(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Reply:
    """The fake model's rules, applied to the turn's last user message:

    - tool results after it: "Done. " + the results (so the reply proves the tools ran);
    - "weather in <City>": call get_weather(city);
    - "email": call send_email(to="bob@example.com", body=...);
    - "my name is <Name>": "Nice to meet you, <Name>.";
    - "what is my name": the name from an earlier user message, if the request carries one;
    - anything else: "You said: <message>".
    """
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    if last_user < 0:
        return Reply(text="No user message.")
    said = text_of(messages[last_user].get("content")).strip()
    results = [text_of(m.get("content")) for m in messages[last_user + 1 :] if m.get("role") == "tool"]
    if results:
        return Reply(text="Done. " + " | ".join(results))
    offered = tool_names(tools)
    if m := WEATHER.search(said):
        return call("get_weather", {"city": m.group(1)}, offered)
    if "email" in said.lower():
        return call("send_email", {"to": "bob@example.com", "body": "The launch is on Monday."}, offered)
    if m := NAME.search(said):
        return Reply(text=f"Nice to meet you, {m.group(1)}.")
    if "what is my name" in said.lower():
        for earlier in messages[:last_user]:
            if earlier.get("role") == "user" and (m := NAME.search(text_of(earlier.get("content")))):
                return Reply(text=f"Your name is {m.group(1)}.")
        return Reply(text="I do not know your name.")
    return Reply(text=f"You said: {said}")


def call(name: str, args: dict[str, Any], offered: list[str]) -> Reply:
    if name not in offered:
        return Reply(text=f"(the agent offered no {name} tool; tools: {', '.join(offered) or 'none'})")
    return Reply(tool=name, args=args)


def pieces(s: str, n: int = 3) -> list[str]:
    """s in about n chunks (at least one), as a model streams it."""
    if not s:
        return [""]
    size = max(1, -(-len(s) // n))
    return [s[i : i + size] for i in range(0, len(s), size)]


class FakeModel:
    """Serves POST /v1/chat/completions (and GET /v1/models) on 127.0.0.1 in a thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-model", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> FakeModel:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def requests(self, model: str) -> list[dict[str, Any]]:
        """The chat-completions request bodies received for model, oldest first."""
        with self._lock:
            return [r for r in self._requests if r.get("model") == model]

    def _record(self, body: dict[str, Any]) -> None:
        with self._lock:
            self._requests.append(body)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": []})
                else:
                    self._json(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    self._json(400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._json(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
                    return
                fake._record(body)
                reply = decide(body.get("messages") or [], body.get("tools"))
                if body.get("stream"):
                    self._stream(body, reply)
                else:
                    self._json(200, completion(body, reply))

            def _json(self, status: int, obj: dict[str, Any]) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, body: dict[str, Any], reply: Reply) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in chunks(body, reply):
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        return Handler


def _usage(body: dict[str, Any], reply: Reply) -> dict[str, int]:
    prompt = sum(len(text_of(m.get("content")).split()) for m in body.get("messages") or [])
    out = len(reply.text.split()) + (len(json.dumps(reply.args)) // 4 if reply.tool else 0)
    return {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out}


def completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    finish = "stop"
    if reply.tool:
        message["tool_calls"] = [
            {
                "id": "call_" + uuid.uuid4().hex[:12],
                "type": "function",
                "function": {"name": reply.tool, "arguments": json.dumps(reply.args)},
            }
        ]
        finish = "tool_calls"
    return {
        "id": "chatcmpl-" + uuid.uuid4().hex,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", ""),
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": _usage(body, reply),
    }


def chunks(body: dict[str, Any], reply: Reply) -> list[dict[str, Any]]:
    base = {
        "id": "chatcmpl-" + uuid.uuid4().hex,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model", ""),
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}

    out = [chunk({"role": "assistant", "content": ""})]
    if reply.tool:
        args = json.dumps(reply.args)
        head, *rest = pieces(args)
        out.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_" + uuid.uuid4().hex[:12],
                            "type": "function",
                            "function": {"name": reply.tool, "arguments": head},
                        }
                    ]
                }
            )
        )
        out += [chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in rest]
        out.append(chunk({}, "tool_calls"))
    else:
        out += [chunk({"content": p}) for p in pieces(reply.text)]
        out.append(chunk({}, "stop"))
    if (body.get("stream_options") or {}).get("include_usage"):
        out.append({**base, "choices": [], "usage": _usage(body, reply)})
    return out
