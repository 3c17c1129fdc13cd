"""A local OpenAI-compatible chat-completions server for integration tests and benchmarks.

    from tests.support.openai_stub import OpenAIStub, rate_limit, server_error

    def answer(request):                  # request = the JSON body the client sent
        return {"ok": True}               # str -> content as is; dict/list -> JSON-encoded

    with OpenAIStub(answer, latency=0.2) as stub:
        stub.enqueue(rate_limit(retry_after=0), server_error(500))   # next two requests fail
        client = openai.OpenAI(base_url=stub.base_url, api_key="x")
        ...
        assert len(stub.requests) == 3 and stub.peak_in_flight == 1

Serves POST /v1/chat/completions and /chat/completions on 127.0.0.1 (a free port) from a
thread per connection. Each request takes the next queued behaviour (`enqueue`), else `always`,
else a normal answer from `handler` (default: a minimal instance of the requested JSON schema,
`{"ok": true}` in JSON mode, "ok" otherwise) after `latency` seconds. `reject_json_schema=True`
answers 400 to any request whose response_format is json_schema, like servers that lack it.
Usage reports estimated prompt/completion tokens and `cached_tokens`. A reply over the request's
`max_tokens` (or `max_completion_tokens`) is cut there with `finish_reason: "length"`, as real
servers do.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from hti_git.tokens import estimate_tokens

Handler = Callable[[dict], Any]
PATHS = ("/v1/chat/completions", "/chat/completions")


@dataclass(frozen=True)
class Behaviour:
    """What the stub does with one request; build one with the functions below."""

    kind: str  # "answer" | "status" | "slow" | "malformed" | "empty_choices"
    status: int = 200
    retry_after: float | None = None
    seconds: float = 0.0
    content: Any = None
    message: str = ""


def rate_limit(retry_after: float | None = 0.0) -> Behaviour:
    """HTTP 429, with a Retry-After header (seconds) unless retry_after is None."""
    return Behaviour("status", 429, retry_after=retry_after, message="Rate limit reached")


def server_error(status: int = 500) -> Behaviour:
    """An HTTP 5xx (or any status) error with an OpenAI-style error body."""
    return Behaviour("status", status, message=f"stub error {status}")


def bad_request(message: str = "invalid request") -> Behaviour:
    """HTTP 400 with `message` in the error body."""
    return Behaviour("status", 400, message=message)


def slow(seconds: float) -> Behaviour:
    """Wait `seconds` before answering normally (longer than the client timeout -> a timeout)."""
    return Behaviour("slow", seconds=seconds)


def malformed() -> Behaviour:
    """HTTP 200 whose body is not JSON."""
    return Behaviour("malformed")


def empty_choices() -> Behaviour:
    """HTTP 200 with "choices": []."""
    return Behaviour("empty_choices")


def reply(content: Any) -> Behaviour:
    """HTTP 200 with this content (str as is, else JSON-encoded), bypassing the handler."""
    return Behaviour("answer", content=content)


@dataclass
class StubRequest:
    """One request the stub received: path, parsed JSON body, the status it answered, and
    `duration`, the seconds from reading the request to writing the response (latency included)."""

    path: str
    body: dict
    status: int = 0
    received: float = field(default_factory=time.perf_counter)
    duration: float = 0.0

    @property
    def messages(self) -> list[dict]:
        """The chat messages of the request."""
        return self.body.get("messages", [])

    @property
    def response_format(self) -> str | None:
        """"json_schema", "json_object" or None."""
        fmt = self.body.get("response_format")
        return fmt.get("type") if isinstance(fmt, dict) else None


def user_text(request: dict) -> str:
    """The content of the last user message of a request body (handy inside handlers)."""
    for message in reversed(request.get("messages", [])):
        if message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


def minimal_instance(schema: dict) -> Any:
    """The smallest value that satisfies a JSON schema of the subset hti-git uses."""
    if "enum" in schema:
        return schema["enum"][0]
    if "anyOf" in schema:
        return minimal_instance(schema["anyOf"][0])
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = "null" if "null" in kind else kind[0]
    if kind == "object":
        props = schema.get("properties", {})
        return {name: minimal_instance(props.get(name, {})) for name in schema.get("required", [])}
    return {"array": [], "string": "", "number": 0, "integer": 0, "boolean": True, "null": None}[kind]


def default_handler(request: dict) -> Any:
    """A minimal valid answer for the requested response format."""
    fmt = request.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return minimal_instance(fmt["json_schema"]["schema"])
    if fmt.get("type") == "json_object":
        return {"ok": True}
    return "ok"


class OpenAIStub:
    """The stub server; a context manager that starts on enter and stops on exit."""

    def __init__(
        self,
        handler: Handler | None = None,
        *,
        latency: float = 0.0,
        model: str = "stub-model",
        reject_json_schema: bool = False,
        cached_tokens: int = 0,
    ):
        self.handler = handler or default_handler
        self.latency = latency
        self.model = model
        self.reject_json_schema = reject_json_schema
        self.cached_tokens = cached_tokens
        self.always: Behaviour | None = None
        self.requests: list[StubRequest] = []
        self.in_flight = 0
        self.peak_in_flight = 0
        self._queue: deque[Behaviour] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> OpenAIStub:
        """Bind a free port on 127.0.0.1 and serve in a background thread."""
        stub = self

        class RequestHandler(_Handler):
            owner = stub

        self._server = _Server(("127.0.0.1", 0), RequestHandler)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; slow requests in progress are released."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The port the stub listens on."""
        assert self._server is not None, "stub not started"
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        """The URL to give as base_url to an OpenAI client (ends in /v1)."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting ---------------------------------------------------------------------------

    def enqueue(self, *behaviours: Behaviour) -> None:
        """Behaviours for the next requests, one each, in order."""
        with self._lock:
            self._queue.extend(behaviours)

    def reset(self) -> None:
        """Forget recorded requests, the in-flight peak and queued behaviours."""
        with self._lock:
            self.requests.clear()
            self._queue.clear()
            self.peak_in_flight = self.in_flight

    def _next(self) -> Behaviour | None:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            return self.always

    def _enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _completion(self, body: dict, content: Any) -> dict:
        text = content if isinstance(content, str) else json.dumps(content)
        prompt = sum(estimate_tokens(str(m.get("content", ""))) for m in body.get("messages", []))
        completion = estimate_tokens(text)
        finish = "stop"
        limit = body.get("max_tokens") or body.get("max_completion_tokens")
        if limit and completion > limit:
            # as real servers do: the reply stops at the limit and says so
            text, completion, finish = cut_to_tokens(text, limit), limit, "length"
        with self._lock:
            number = len(self.requests)
        return {
            "id": f"chatcmpl-stub-{number}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model") or self.model,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": min(self.cached_tokens, prompt)},
            },
        }

    def _respond(self, request: StubRequest) -> tuple[int, dict[str, str], bytes]:
        behaviour = self._next()
        if behaviour is not None and behaviour.kind == "slow":
            self._stopping.wait(behaviour.seconds)
            behaviour = None
        elif self.latency:
            self._stopping.wait(self.latency)
        if behaviour is None and self.reject_json_schema and request.response_format == "json_schema":
            behaviour = bad_request("response_format json_schema is not supported by this server")
        if behaviour is None:
            return 200, {}, _json(self._completion(request.body, self.handler(request.body)))
        if behaviour.kind == "status":
            headers = {}
            if behaviour.retry_after is not None:
                headers["Retry-After"] = f"{behaviour.retry_after:g}"
            error = {"error": {"message": behaviour.message, "type": "stub_error", "code": behaviour.status}}
            return behaviour.status, headers, _json(error)
        if behaviour.kind == "malformed":
            return 200, {}, b'{"id": "chatcmpl-stub", "choices": [ this is not json'
        if behaviour.kind == "empty_choices":
            data = self._completion(request.body, "")
            data["choices"] = []
            return 200, {}, _json(data)
        return 200, {}, _json(self._completion(request.body, behaviour.content))


def cut_to_tokens(text: str, limit: int) -> str:
    """The longest prefix of `text` within `limit` estimated tokens (where a server would stop)."""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate_tokens(text[:mid]) <= limit:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]


def _json(data: Any) -> bytes:
    return json.dumps(data).encode("utf-8")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default listen backlog (5) drops bursts of parallel connects


class _Handler(BaseHTTPRequestHandler):
    owner: OpenAIStub
    protocol_version = "HTTP/1.1"  # keep-alive, like real servers, so connection setup is not measured
    # Headers and body go out in separate writes; without TCP_NODELAY, Nagle plus the client's
    # delayed ACK adds ~40 ms to every keep-alive response.
    disable_nagle_algorithm = True
    timeout = 30

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence the access log
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        started = time.perf_counter()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.split("?")[0] not in PATHS:
            self._send(404, {}, _json({"error": {"message": f"no route {self.path}"}}))
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send(400, {}, _json({"error": {"message": "request body is not JSON"}}))
            return
        request = StubRequest(self.path, body)
        stub = self.owner
        with stub._lock:
            stub.requests.append(request)
        stub._enter()
        try:
            status, headers, payload = stub._respond(request)
        finally:
            stub._leave()
        request.status = status
        self._send(status, headers, payload)
        request.duration = time.perf_counter() - started

    def _send(self, status: int, headers: dict[str, str], payload: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (its timeout), nothing to do


def configure_env(monkeypatch: Any, stub: OpenAIStub, model: str = "stub-model") -> None:
    """Point hti-git at `stub` through the environment, as a user would configure a real endpoint."""
    monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-dummy")
    monkeypatch.setenv("HTI_MODEL", model)


def stub_fixtures(handler: Handler):
    """(stub, model_env) pytest fixtures for a module: a stub server answering with `handler`, and
    the environment pointing hti-git at it. In a test module: `stub, model_env = stub_fixtures(h)`."""
    import pytest

    @pytest.fixture
    def stub():
        with OpenAIStub(handler) as server:
            yield server

    @pytest.fixture
    def model_env(monkeypatch, stub):
        configure_env(monkeypatch, stub)

    return stub, model_env
