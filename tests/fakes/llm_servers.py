"""Small real HTTP servers that speak the OpenAI and Anthropic protocols on 127.0.0.1.

The official SDKs talk to them exactly as to the real services, so agent and judge tests run
the real client code (timeouts, retries, parsing) without the internet. Each request takes
the next queued behaviour::

    server.enqueue(text="PASS")                                   # a normal answer
    server.enqueue(status=429, headers={"Retry-After": "0"})      # an HTTP error
    server.enqueue(delay_s=2, text="late")                        # slow: past a short timeout
    server.enqueue(reset=True)                                    # connection closed, no reply
    server.enqueue(respond=judge_answer(0.8))                     # computed from the prompt
    server.requests[0].body["messages"]                           # what the client sent
    server.requests[0].api_key                                    # the key it carried

``judge_answer`` answers as a judge that follows its prompt does: it echoes the prompt's
``canary: <hex>`` line as ``"canary"``. ``obedient_judge`` also obeys any instruction it
reads, as the LLM judges do that issue 21 guards against.

With nothing queued a request gets HTTP 400 "no reply queued" (not retried by our agents),
so a test that forgot to queue fails with a clear message instead of hanging.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import re
import socket
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from fakes.local_server import LocalServer


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it; header names are lower-case."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    """The parsed JSON body (None when it was not JSON)."""

    @property
    def api_key(self) -> str | None:
        """The key the client sent, whichever header carried it.

        OpenAI sends ``Authorization: Bearer``, Azure ``api-key``; Anthropic's SDK sent
        ``x-api-key`` before 2.x and ``Authorization: Bearer`` since.
        """
        for name in ("x-api-key", "api-key"):
            if name in self.headers:
                return self.headers[name]
        scheme, _, token = self.headers.get("authorization", "").partition(" ")
        return token if scheme.lower() == "bearer" else None


@dataclass(frozen=True)
class Behaviour:
    """How the server answers one request (see ``FakeLLMServer.enqueue``)."""

    text: str = "ok"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    delay_s: float = 0.0
    reset: bool = False
    input_tokens: int | None = None
    output_tokens: int | None = None
    model: str | None = None
    respond: Callable[[str], str] | None = None
    """Computes the answer's text from the prompt (system and messages), instead of ``text``."""


_CANARY = re.compile(r"^canary: ([0-9a-f]+)$", re.MULTILINE)


def canary_of(prompt: str) -> str | None:
    """The value of the prompt's ``canary: <hex>`` line, as a judge would read it."""
    match = _CANARY.search(prompt)
    return match.group(1) if match else None


def judge_answer(score: float, **fields: Any) -> Callable[[str], str]:
    """A judge's JSON answer with ``score``, echoing the prompt's canary (when it has one)."""

    def respond(prompt: str) -> str:
        body = {"score": score, "confidence": 0.9, "reasoning": "judged", **fields}
        canary = canary_of(prompt)
        return json.dumps(body if canary is None else {"canary": canary, **body})

    return respond


def obedient_judge(*triggers: str, honest: float = 0.2) -> Callable[[str], str]:
    """A judge that does what the text it reads says: 1.0 when any trigger occurs in the
    prompt (the injected order), else its ``honest`` score; it echoes the canary either way."""

    def respond(prompt: str) -> str:
        folded = prompt.casefold()
        obeyed = any(trigger.casefold() in folded for trigger in triggers)
        return judge_answer(1.0 if obeyed else honest, confidence=1.0)(prompt)

    return respond


def prompt_text(body: Any) -> str:
    """Everything a model would read in an OpenAI or Anthropic request body."""
    if not isinstance(body, dict):
        return ""
    parts = [str(body.get("system", ""))]
    parts += [str(m.get("content", "")) for m in body.get("messages", []) if isinstance(m, dict)]
    return "\n\n".join(parts)


class FakeLLMServer(LocalServer):
    """A threaded HTTP server with a queue of behaviours; subclasses give the protocol."""

    protocol = ""
    endpoint_suffix = ""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self._queue: collections.deque[Behaviour] = collections.deque()
        self._lock = threading.Lock()
        super().__init__(_make_handler(self))

    @property
    def base_url(self) -> str:
        """What to put in an agent's ``base_url`` for this protocol."""
        return self.root_url

    def enqueue(
        self,
        text: str = "ok",
        *,
        status: int = 200,
        headers: dict[str, str] | None = None,
        body: Any = None,
        delay_s: float = 0.0,
        reset: bool = False,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        model: str | None = None,
        respond: Callable[[str], str] | None = None,
        times: int = 1,
    ) -> None:
        """Queue how the next request(s) are answered.

        ``status`` other than 200 sends the protocol's error body (or ``body``: a dict is
        sent as JSON, a str as is); ``delay_s`` waits before answering; ``reset`` closes
        the connection without a reply. Tokens default to word counts; ``model`` to the
        requested one. ``respond(prompt)`` computes the text from what the client sent.
        ``times`` queues the same behaviour that many times.
        """
        behaviour = Behaviour(
            text=text,
            status=status,
            headers=dict(headers or {}),
            body=body,
            delay_s=delay_s,
            reset=reset,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            model=model,
            respond=respond,
        )
        with self._lock:
            self._queue.extend([behaviour] * times)

    # -- what subclasses provide -------------------------------------------------------

    def answer(self, request: RecordedRequest, behaviour: Behaviour) -> dict[str, Any]:
        raise NotImplementedError

    def error(self, status: int, message: str) -> dict[str, Any]:
        raise NotImplementedError

    # -- used by the handler -----------------------------------------------------------

    def _next(self, request: RecordedRequest) -> Behaviour | None:
        with self._lock:
            self.requests.append(request)
            return self._queue.popleft() if self._queue else None


class FakeOpenAIServer(FakeLLMServer):
    """``POST .../chat/completions`` (``/v1/...`` and Azure's deployment paths)."""

    protocol = "openai"
    endpoint_suffix = "/chat/completions"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, as the OpenAI SDK expects."""
        return f"{self.root_url}/v1"

    def answer(self, request: RecordedRequest, behaviour: Behaviour) -> dict[str, Any]:
        prompt = " ".join(str(m.get("content", "")) for m in request.body.get("messages", []))
        prompt_tokens = _count(behaviour.input_tokens, prompt)
        completion_tokens = _count(behaviour.output_tokens, behaviour.text)
        return {
            "id": f"chatcmpl-fake-{len(self.requests)}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": behaviour.model or request.body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": behaviour.text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def error(self, status: int, message: str) -> dict[str, Any]:
        return {"error": {"message": message, "type": "fake_error", "code": str(status)}}


class FakeAnthropicServer(FakeLLMServer):
    """``POST /v1/messages``, the Anthropic Messages API."""

    protocol = "anthropic"
    endpoint_suffix = "/v1/messages"

    def answer(self, request: RecordedRequest, behaviour: Behaviour) -> dict[str, Any]:
        parts = [str(request.body.get("system", ""))]
        parts += [str(m.get("content", "")) for m in request.body.get("messages", [])]
        return {
            "id": f"msg_fake_{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": behaviour.model or request.body.get("model", "fake"),
            "content": [{"type": "text", "text": behaviour.text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": _count(behaviour.input_tokens, " ".join(parts)),
                "output_tokens": _count(behaviour.output_tokens, behaviour.text),
            },
        }

    def error(self, status: int, message: str) -> dict[str, Any]:
        kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}


def _count(given: int | None, text: str) -> int:
    return given if given is not None else len(text.split())


def _make_handler(fake: FakeLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            request = self._record()
            if not request.path.endswith(fake.endpoint_suffix):
                self._send(404, fake.error(404, f"fake {fake.protocol} server: no {request.path}"))
                return
            behaviour = fake._next(request)
            if behaviour is None:
                message = f"fake {fake.protocol} server: no reply queued (call enqueue)"
                self._send(400, fake.error(400, message))
                return
            if behaviour.delay_s:
                fake._wait(behaviour.delay_s)
            if behaviour.reset:
                self._reset()
                return
            if behaviour.respond is not None:
                text = behaviour.respond(prompt_text(request.body))
                behaviour = dataclasses.replace(behaviour, text=text, respond=None)
            if behaviour.body is not None:
                payload = behaviour.body
            elif behaviour.status == 200:
                payload = fake.answer(request, behaviour)
            else:
                payload = fake.error(behaviour.status, f"fake HTTP {behaviour.status}")
            self._send(behaviour.status, payload, behaviour.headers)

        def _record(self) -> RecordedRequest:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            url = urlsplit(self.path)
            return RecordedRequest(
                method=self.command,
                path=url.path,
                query=dict(parse_qsl(url.query)),
                headers={name.lower(): value for name, value in self.headers.items()},
                body=body,
            )

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _reset(self) -> None:
            # Linger 0: closing sends RST, as a crashed proxy or a dropped connection does.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()

    return Handler
