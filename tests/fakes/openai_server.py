"""A local fake OpenAI-compatible chat-completions server for offline tests and benchmarks.

It listens on 127.0.0.1 (a free port), answers ``POST /v1/chat/completions`` (plain JSON or
server-sent events when ``stream`` is true) and ``GET /v1/models``, and replays a script of
replies: plain texts, tool calls, faults (HTTP errors, sleeps past the client timeout, empty
completions, truncated tool-call JSON, absurdly long texts, dropped connections) or callables
that build a reply from the request body. When the script runs out it answers with
``responder(request)`` if set, else an echo of the last user message.

Example:
    with FakeOpenAIServer() as server:
        server.script(["hello", Reply.tool_call("search", {"q": "red shoes"})])
        ...  # call f"openai/any-model" with api_base=server.base_url, api_key="dummy"
        assert len(server.requests) == 2
"""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeAlias

__all__ = ["FakeOpenAIServer", "Fault", "Reply", "ToolCallSpec"]


@dataclass(frozen=True)
class ToolCallSpec:
    """One tool call the fake model makes; ``arguments`` may be a dict or a raw JSON string."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(dict(self.arguments), sort_keys=True)


@dataclass(frozen=True)
class Reply:
    """A successful completion: optional text plus optional tool calls."""

    text: str | None = None
    tool_calls: tuple[ToolCallSpec, ...] = ()
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    @staticmethod
    def say(text: str) -> Reply:
        return Reply(text=text)

    @staticmethod
    def tool_call(
        name: str, arguments: Mapping[str, Any] | str | None = None, *, text: str | None = None
    ) -> Reply:
        return Reply(text=text, tool_calls=(ToolCallSpec(name, arguments or {}),))

    @staticmethod
    def tool_calls_(*calls: ToolCallSpec, text: str | None = None) -> Reply:
        return Reply(text=text, tool_calls=tuple(calls))


@dataclass(frozen=True)
class Fault:
    """A scripted misbehaviour. Build one with the static constructors."""

    kind: str
    status: int = 0
    seconds: float = 0.0
    name: str = ""
    n_chars: int = 0
    retry_after: float | None = None
    payload: Any = None

    @staticmethod
    def http(status: int, *, retry_after: float | None = None) -> Fault:
        """Answer with an OpenAI-style JSON error body and this HTTP status."""
        return Fault("http", status=status, retry_after=retry_after)

    @staticmethod
    def timeout(seconds: float) -> Fault:
        """Sleep ``seconds`` (longer than the client timeout) before answering."""
        return Fault("timeout", seconds=seconds)

    @staticmethod
    def empty() -> Fault:
        """Answer 200 with an empty assistant message (no text, no tool calls)."""
        return Fault("empty")

    @staticmethod
    def truncated_tool_call(name: str) -> Fault:
        """Answer with a tool call whose JSON arguments are cut off mid-object."""
        return Fault("truncated", name=name)

    @staticmethod
    def long(n_chars: int) -> Fault:
        """Answer with an absurdly long text of exactly ``n_chars`` characters."""
        return Fault("long", n_chars=n_chars)

    @staticmethod
    def garbage() -> Fault:
        """Answer 200 with a body that is not JSON (a misconfigured proxy's HTML page)."""
        return Fault("garbage")

    @staticmethod
    def body(payload: Any, status: int = 200) -> Fault:
        """Answer with exactly this JSON payload (malformed replies: error bodies, junk)."""
        return Fault("body", status=status, payload=payload)

    @staticmethod
    def disconnect() -> Fault:
        """Close the connection without sending any response."""
        return Fault("disconnect")


ScriptItem: TypeAlias = str | Reply | Fault | Mapping[str, Any] | Callable[[dict[str, Any]], Any]


def _count_tokens(text: str) -> int:
    return max(1, len(text.split())) if text else 0


def _prompt_tokens(body: Mapping[str, Any]) -> int:
    total = 0
    for msg in body.get("messages") or []:
        content = msg.get("content") if isinstance(msg, Mapping) else None
        if isinstance(content, str):
            total += _count_tokens(content)
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                    total += _count_tokens(part["text"])
        total += 3
    return total


def echo_reply(body: Mapping[str, Any]) -> Reply:
    """The default reply: echo the last user message."""
    last = ""
    for msg in body.get("messages") or []:
        if isinstance(msg, Mapping) and msg.get("role") == "user":
            content = msg.get("content")
            last = content if isinstance(content, str) else json.dumps(content)
    return Reply(text=f"echo: {last}")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 1024
    allow_reuse_address = True
    owner: FakeOpenAIServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # TCP_NODELAY on every accepted socket
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return

    # -- plumbing ------------------------------------------------------------------------
    def _send_json(self, status: int, payload: Any, extra: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode("ascii") + data + b"\r\n")
        self.wfile.flush()

    # -- routes --------------------------------------------------------------------------
    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(
                200,
                {"object": "list", "data": [{"id": "fake-model", "object": "model"}]},
            )
            return
        self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send_json(400, {"error": {"message": "invalid JSON body"}})
            return
        owner = self.server.owner
        item = owner._record_and_next(body, {k.lower(): v for k, v in self.headers.items()})
        if owner.latency_s > 0:
            owner._stop.wait(owner.latency_s)
        while callable(item) and not isinstance(item, (Reply, Fault)):
            item = item(body)
        self._answer(body, item)

    def _answer(self, body: dict[str, Any], item: Any) -> None:
        owner = self.server.owner
        if isinstance(item, Fault):
            if item.kind == "http":
                extra = {}
                if item.retry_after is not None:
                    extra["Retry-After"] = str(item.retry_after)
                message = f"fake fault: HTTP {item.status}"
                self._send_json(
                    item.status,
                    {"error": {"message": message, "type": "fake_error", "code": item.status}},
                    extra,
                )
                return
            if item.kind == "body":
                self._send_json(item.status or 200, item.payload)
                return
            if item.kind == "garbage":
                page = b"<html><body>502 Bad Gateway (but sent as 200)</body></html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)
                return
            if item.kind == "timeout":
                owner._stop.wait(item.seconds)
                item = Reply(text="too late")
            elif item.kind == "disconnect":
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            elif item.kind == "empty":
                item = Reply(text="", finish_reason="stop")
            elif item.kind == "truncated":
                args = json.dumps({"query": "red running shoes", "max_price": 50})
                item = Reply(
                    tool_calls=(ToolCallSpec(item.name, args[: len(args) // 2]),),
                    finish_reason="length",
                )
            elif item.kind == "long":
                unit = "very long reply "
                text = (unit * (item.n_chars // len(unit) + 1))[: item.n_chars]
                item = Reply(text=text, finish_reason="length")
        if isinstance(item, str):
            item = Reply(text=item)
        elif isinstance(item, Mapping):
            item = Reply(
                tool_calls=(
                    ToolCallSpec(str(item["name"]), item.get("arguments") or {}, item.get("id")),
                )
            )
        if not isinstance(item, Reply):
            raise TypeError(f"unsupported scripted reply: {item!r}")
        try:
            if body.get("stream"):
                self._stream(body, item)
            else:
                self._send_json(200, _completion_json(body, item))
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (e.g. its timeout fired)

    def _stream(self, body: dict[str, Any], reply: Reply) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        cid = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        model = str(body.get("model", "fake-model"))
        created = int(time.time())
        owner = self.server.owner

        def event(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> None:
            chunk = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                **extra,
            }
            self._write_chunk(f"data: {json.dumps(chunk)}\n\n".encode())
            if owner.stream_chunk_delay_s > 0:
                owner._stop.wait(owner.stream_chunk_delay_s)

        event({"role": "assistant", "content": ""})
        for piece in _pieces(reply.text or "", owner.stream_chunk_chars):
            event({"content": piece})
        for index, call in enumerate(reply.tool_calls):
            args = call.arguments_text()
            event(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call.id or f"call_{index}_{uuid.uuid4().hex[:8]}",
                            "type": "function",
                            "function": {"name": call.name, "arguments": ""},
                        }
                    ]
                }
            )
            for piece in _pieces(args, owner.stream_chunk_chars):
                event({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        event({}, _finish_reason(reply))
        options = body.get("stream_options") or {}
        if options.get("include_usage"):
            usage = _usage(body, reply)
            chunk = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [],
                "usage": usage,
            }
            self._write_chunk(f"data: {json.dumps(chunk)}\n\n".encode())
        self._write_chunk(b"data: [DONE]\n\n")
        self._write_chunk(b"")


def _pieces(text: str, size: int) -> Iterable[str]:
    for start in range(0, len(text), max(1, size)):
        yield text[start : start + size]


def _finish_reason(reply: Reply) -> str:
    if reply.finish_reason:
        return reply.finish_reason
    return "tool_calls" if reply.tool_calls else "stop"


def _usage(body: Mapping[str, Any], reply: Reply) -> dict[str, int]:
    prompt = reply.prompt_tokens if reply.prompt_tokens is not None else _prompt_tokens(body)
    if reply.completion_tokens is not None:
        completion = reply.completion_tokens
    else:
        completion = _count_tokens(reply.text or "") + sum(
            _count_tokens(c.arguments_text()) + 1 for c in reply.tool_calls
        )
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _completion_json(body: Mapping[str, Any], reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id or f"call_{index}_{uuid.uuid4().hex[:8]}",
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_text()},
            }
            for index, call in enumerate(reply.tool_calls)
        ]
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(body.get("model", "fake-model")),
        "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(reply)}],
        "usage": _usage(body, reply),
    }


class FakeOpenAIServer:
    """A scripted OpenAI-compatible server on 127.0.0.1; use it as a context manager.

    Attributes:
        base_url: ``http://127.0.0.1:PORT/v1``, to pass as ``api_base``.
        requests: The JSON bodies received on ``/chat/completions``, in arrival order.
        headers: The (lower-cased) request headers, parallel to ``requests``.
        latency_s: Seconds to wait before answering each completion (settable at any time).
        responder: Called with the request body once the script is exhausted; defaults to
            an echo of the last user message.
        stream_chunk_chars: Characters per streamed content delta.
        stream_chunk_delay_s: Pause after each streamed event.
    """

    def __init__(self, *, latency_s: float = 0.0) -> None:
        self.latency_s = latency_s
        self.responder: Callable[[dict[str, Any]], Any] = echo_reply
        self.stream_chunk_chars = 8
        self.stream_chunk_delay_s = 0.0
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._queue: deque[ScriptItem] = deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self.base_url = ""

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> FakeOpenAIServer:
        """Bind a free loopback port and serve in a daemon thread."""
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.owner = self
        self._httpd = httpd
        port = httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; wakes handlers that are sleeping on latency or timeout faults."""
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting -----------------------------------------------------------------------
    def script(self, replies: Iterable[ScriptItem]) -> FakeOpenAIServer:
        """Replace the queue of upcoming replies (consumed one per completion request)."""
        with self._lock:
            self._queue = deque(replies)
        return self

    def then(self, *replies: ScriptItem) -> FakeOpenAIServer:
        """Append replies to the end of the current script."""
        with self._lock:
            self._queue.extend(replies)
        return self

    @property
    def pending(self) -> int:
        """How many scripted replies remain."""
        with self._lock:
            return len(self._queue)

    @property
    def request_count(self) -> int:
        """How many completion requests arrived so far."""
        with self._lock:
            return len(self.requests)

    def reset(self) -> None:
        """Forget received requests and the remaining script."""
        with self._lock:
            self.requests.clear()
            self.headers.clear()
            self._queue.clear()

    def _record_and_next(self, body: dict[str, Any], headers: dict[str, str]) -> Any:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            if self._queue:
                return self._queue.popleft()
            return self.responder
