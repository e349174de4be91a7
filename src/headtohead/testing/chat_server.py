"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for the faults a real one won't make on demand.

See ``docs/llm.md``, the section of this title.
"""

from __future__ import annotations

import json
import math
import re
import select
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ScriptedChatServer", "Script", "Reply", "last_prompt_text"]


@dataclass(frozen=True)
class Reply:
    """What the server does with one request.

    ``kind``: ``answer`` (200 with ``text``), ``status`` (``status`` with ``retry_after``),
    ``malformed`` (200 with a body that is not JSON), ``reset`` (the connection closed with no
    answer), ``hang`` (no answer for ``delay_s``, then the connection closed). ``delay_s``
    delays an answer too. ``logprobs``: ``{label: probability}`` for the first token's alternatives.
    ``message``: a ``status`` reply's reason, in its body as ``{"error": {"message": …}}`` (the
    OpenAI shape; default ``scripted <status>``).
    """

    kind: str = "answer"
    text: str = ""
    status: int = 200
    retry_after: str | None = None
    delay_s: float = 0.0
    logprobs: dict[str, float] | None = None
    message: str | None = None


#: ``script(request_number, payload) -> Reply``; ``request_number`` counts from 1 over the server's life.
Script = Callable[[int, dict[str, Any]], Reply]


def last_prompt_text(payload: dict[str, Any]) -> str:
    """The content of the request's last user message."""
    users = [m for m in payload.get("messages", []) if m.get("role") == "user"]
    return str(users[-1]["content"]) if users else ""


@dataclass
class _Counts:
    requests: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    #: Chat completions answered and written whole to the socket (not the /models check, not a failed write).
    answered: int = 0
    authorization: list[str] = field(default_factory=list)
    #: The client ports with a chat completion in flight now (a test maps them to client processes).
    ports_in_flight: list[int] = field(default_factory=list)


class ScriptedChatServer:
    """Start with ``with ScriptedChatServer(script) as server:``; ``server.base_url`` is its ``…/v1``.

    Parameters
    ----------
    script : Script
        Decides each reply.
    model : str
        The model name ``/v1/models`` lists.
    port : int
        The port to listen on (0: any free one); a server started again on a stopped one's port has
        the same ``base_url``, as a real server restarted.
    models : Reply, optional
        How ``/v1/models`` answers: ``None``, the list of ``model``; a ``status`` reply (a 500, say) or
        a ``malformed`` one, for a server whose list cannot be read.
    service_s : float, optional
        A server of known capacity: chat completions are served one at a time, each holding the server
        for ``service_s`` before its answer (``1 / service_s`` requests per second at most, whatever the
        client's machine is doing); a request whose client left while it waited is dropped unserved, as a
        real server aborts it. A request with ``stream: true`` gets its answer as server-sent events,
        a word per chunk.
    """

    def __init__(
        self,
        script: Script,
        model: str = "scripted",
        port: int = 0,
        models: Reply | None = None,
        service_s: float | None = None,
    ) -> None:
        self.script, self.model, self.models, self.service_s = script, model, models, service_s
        self._turns = threading.Condition()  # service_s: requests served in arrival order, one at a time
        self._tickets = self._serving = 0
        self._free_at = 0.0
        self.counts = _Counts()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="scripted-chat", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ScriptedChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def stop(self) -> None:
        """Stop listening (new connections are refused); safe to call from a script's thread, and twice."""
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()

    def reset_counts(self) -> None:
        with self._lock:
            self.counts = _Counts()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                if self.path.rstrip("/").endswith("/models") and server.models is not None:
                    self._reply(server.models, {})
                elif self.path.rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": server.model, "object": "model"}]})
                else:
                    self._json(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                payload = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.counts.requests += 1
                    number = server.counts.requests
                    server.counts.in_flight += 1
                    server.counts.max_in_flight = max(server.counts.max_in_flight, server.counts.in_flight)
                    server.counts.authorization.append(self.headers.get("authorization") or "")
                    server.counts.ports_in_flight.append(self.client_address[1])
                try:
                    if server.service_s is not None and not _served(server, self.connection):
                        self._drop()
                        return
                    self._reply(server.script(number, payload), payload)
                finally:
                    with server._lock:
                        server.counts.in_flight -= 1
                        if self.client_address[1] in server.counts.ports_in_flight:  # not after reset_counts
                            server.counts.ports_in_flight.remove(self.client_address[1])

            def _reply(self, reply: Reply, payload: dict[str, Any]) -> None:
                if reply.delay_s and reply.kind != "hang":
                    time.sleep(reply.delay_s)
                if reply.kind == "hang":
                    time.sleep(reply.delay_s or 3600)
                    self._drop()
                elif reply.kind == "reset":
                    self._drop()
                elif reply.kind == "malformed":
                    self._raw(200, b'{"choices": [ {"message": ', "application/json")
                elif reply.kind == "status":
                    headers = {"Retry-After": reply.retry_after} if reply.retry_after is not None else {}
                    message = reply.message if reply.message is not None else f"scripted {reply.status}"
                    self._json(reply.status, {"error": {"message": message}}, headers)
                else:
                    if payload.get("stream"):
                        _stream(self, server, reply, payload)
                    else:
                        self._json(200, server.completion(reply, payload))
                    with server._lock:
                        server.counts.answered += 1

            def _drop(self) -> None:
                # RST instead of FIN: the client sees a reset connection
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
                self.connection.close()

            def _json(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                self._raw(status, json.dumps(body).encode(), "application/json", headers)

            def _raw(self, status: int, data: bytes, kind: str, headers: dict[str, str] | None = None) -> None:
                with server._lock:
                    server.counts.statuses[status] = server.counts.statuses.get(status, 0) + 1
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler

    def text_completion(self, reply: Reply, payload: dict[str, Any]) -> dict[str, Any]:
        """A (legacy) text_completion body: ``reply.text`` after the prompt; with ``echo`` and ``logprobs``, the
        log-probabilities of the prompt's tokens too — each whitespace-led word a token, its probability
        ``reply.logprobs[word]`` (0.5 for a word not scripted; the first token has none, as OpenAI's)."""
        prompt = str(payload["prompt"])
        words = [(m.group(), m.start()) for m in re.finditer(r"\s*\S+", prompt)]
        generated = [(reply.text, len(prompt))] if reply.text else []
        with self._lock:
            self.counts.prompt_tokens += len(words)
            self.counts.completion_tokens += len(generated)
        choice: dict[str, Any] = {"index": 0, "finish_reason": "length", "text": reply.text}
        if payload.get("logprobs") is not None:
            shown = (words if payload.get("echo") else []) + generated
            scripted = reply.logprobs or {}
            logprobs: list[float | None] = [math.log(scripted.get(token.strip(), 0.5)) for token, _ in shown]
            if payload.get("echo") and words:
                logprobs[0] = None  # nothing before the first token
            choice["logprobs"] = {
                "tokens": [token for token, _ in shown],
                "token_logprobs": logprobs,
                "text_offset": [offset for _, offset in shown],
            }
        if payload.get("echo"):
            choice["text"] = prompt + reply.text
        return {
            "id": f"cmpl-{self.counts.requests}",
            "object": "text_completion",
            "created": int(time.time()),
            "model": payload.get("model", self.model),
            "choices": [choice],
            "usage": {
                "prompt_tokens": len(words),
                "completion_tokens": len(generated),
                "total_tokens": len(words) + len(generated),
            },
        }

    def completion(self, reply: Reply, payload: dict[str, Any]) -> dict[str, Any]:
        """A chat.completion body with ``usage`` (words as tokens) and, when asked and scripted, logprobs."""
        if "prompt" in payload:
            return self.text_completion(reply, payload)
        prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in payload.get("messages", []))
        completion_tokens = len(reply.text.split())
        with self._lock:
            self.counts.prompt_tokens += prompt_tokens
            self.counts.completion_tokens += completion_tokens
        choice: dict[str, Any] = {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": reply.text},
        }
        if payload.get("logprobs") and reply.logprobs:
            top = [{"token": token, "logprob": math.log(p)} for token, p in reply.logprobs.items()]
            first = reply.text.split()[0] if reply.text.split() else reply.text
            generated = next((t for t in top if t["token"] == first), top[0])
            choice["logprobs"] = {"content": [{**generated, "top_logprobs": top[: payload.get("top_logprobs", 20)]}]}
        return {
            "id": f"chatcmpl-{self.counts.requests}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": payload.get("model", self.model),
            "choices": [choice],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


def _served(server: ScriptedChatServer, connection: socket.socket) -> bool:
    """Wait for this request's turn (first come, first served), then hold the server until ``service_s`` after
    the later of its arrival and the previous request's end — an end computed, not slept after a hand-over,
    so the capacity is exactly ``1 / service_s`` however slowly this machine wakes threads. False: the client
    left before its turn (nothing served)."""
    arrived = time.perf_counter()
    with server._turns:
        ticket = server._tickets
        server._tickets += 1
        server._turns.wait_for(lambda: server._serving == ticket)
    left = _client_left(connection)
    end = max(arrived, server._free_at) + (server.service_s or 0.0)
    if not left:
        time.sleep(max(0.0, end - time.perf_counter()))
    with server._turns:
        server._free_at = server._free_at if left else end
        server._serving += 1
        server._turns.notify_all()
    return not left


def _client_left(connection: socket.socket) -> bool:
    ready, _, _ = select.select([connection], [], [], 0)
    if not ready:
        return False
    try:
        return connection.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def _stream(handler: BaseHTTPRequestHandler, server: ScriptedChatServer, reply: Reply, payload: dict[str, Any]) -> None:
    """The answer as server-sent events, a word per chunk, then ``[DONE]`` (chunked: the connection stays open)."""
    body = server.completion(reply, payload)
    with server._lock:
        server.counts.statuses[200] = server.counts.statuses.get(200, 0) + 1
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    events = []
    for word in re.findall(r"\s*\S+", reply.text):
        chunk = {"id": body["id"], "object": "chat.completion.chunk", "model": body["model"]}
        chunk["choices"] = [{"index": 0, "delta": {"content": word}, "finish_reason": None}]
        events.append(f"data: {json.dumps(chunk)}\n\n".encode())
    events.append(b"data: [DONE]\n\n")
    for event in events:
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
    handler.wfile.write(b"0\r\n\r\n")
    handler.wfile.flush()
