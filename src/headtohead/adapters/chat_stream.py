"""Streamed chat requests sent at scheduled times: one capacity probe of an endpoint (asyncio + httpx).

Each request is sent at its scheduled offset with ``stream: true``; its time to the first content
token, its end, the content chunks it streamed and its text are kept, every time measured from its
*scheduled* arrival (as MLPerf LoadGen does), so a client that sends late never makes a server look
faster. When ``max_in_flight`` requests are waiting the queue is growing without bound: the probe
stops sending, cancels what is in flight (closing the connections, so a server drops the work) and
says so. See ``docs/speed.md``, "Capacity at a latency SLO".
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

__all__ = ["StreamedRequest", "ProbeRun", "LoadTarget", "stream_probe"]


@dataclass
class StreamedRequest:
    """One request of a probe; times in seconds from its scheduled arrival (``None``: never came)."""

    scheduled_s: float
    first_token_s: float | None = None
    end_s: float | None = None
    chunks: int = 0
    text: str = ""
    error: str | None = None
    #: The connection was refused or reset before anything was sent: no server is listening.
    unreachable: bool = False

    @property
    def tpot_s(self) -> float | None:
        """Time per output token after the first (``None`` with fewer than two tokens)."""
        if self.error is not None or self.first_token_s is None or self.end_s is None or self.chunks < 2:
            return None
        return (self.end_s - self.first_token_s) / (self.chunks - 1)


@dataclass
class ProbeRun:
    """What one probe's requests did, in the order they were scheduled (sent ones only)."""

    requests: list[StreamedRequest]
    stopped_early: bool = False
    elapsed_s: float = 0.0


#: ``send(payloads, offsets_s, max_in_flight) -> ProbeRun``: one probe against one deployment.
Sender = Callable[[Sequence[dict[str, Any]], Sequence[float], int], ProbeRun]


@dataclass
class LoadTarget:
    """A model probed under load: its requests (the run's own examples) and how its answers are read.

    ``payloads[i]`` asks example ``gold``'s ``i``-th entry; ``read(text)`` is the label index an answer
    reads as (``None``: unparseable).
    """

    name: str
    payloads: list[dict[str, Any]]
    gold: list[int]
    read: Callable[[str], int | None]
    send: Sender = field(repr=False)


def stream_probe(
    base_url: str,
    headers: dict[str, str],
    payloads: Sequence[dict[str, Any]],
    offsets_s: Sequence[float],
    max_in_flight: int,
    *,
    timeout_s: float = 60.0,
    path: str = "chat/completions",
) -> ProbeRun:
    """Send ``payloads[i]`` streamed at ``offsets_s[i]`` seconds from now; see the module docstring."""
    return asyncio.run(_probe(base_url, headers, payloads, offsets_s, max_in_flight, timeout_s, path))


async def _probe(
    base_url: str,
    headers: dict[str, str],
    payloads: Sequence[dict[str, Any]],
    offsets_s: Sequence[float],
    max_in_flight: int,
    timeout_s: float,
    path: str,
) -> ProbeRun:
    limits = httpx.Limits(max_connections=max_in_flight, max_keepalive_connections=max_in_flight)
    url = f"{base_url.rstrip('/')}/{path}"
    records: list[StreamedRequest] = []
    tasks: list[asyncio.Task[None]] = []
    stopped = False
    async with httpx.AsyncClient(limits=limits, timeout=timeout_s, headers=headers) as client:
        start = time.perf_counter()
        for payload, offset in zip(payloads, offsets_s, strict=True):
            wait = start + offset - time.perf_counter()
            if wait > 0:
                await asyncio.sleep(wait)
            if sum(not t.done() for t in tasks) >= max_in_flight:
                stopped = True  # the queue grows without bound: over-saturated
                break
            record = StreamedRequest(scheduled_s=offset)
            records.append(record)
            tasks.append(asyncio.create_task(_one(client, url, {**payload, "stream": True}, record, start + offset)))
        if stopped:
            for task in tasks:
                task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        elapsed = time.perf_counter() - start
    for record in records:
        if record.end_s is None and record.error is None:
            record.error = "cancelled"  # in flight when the probe stopped
    return ProbeRun(records, stopped_early=stopped, elapsed_s=elapsed)


async def _one(
    client: httpx.AsyncClient, url: str, payload: dict[str, Any], record: StreamedRequest, at: float
) -> None:
    """Send one request and fill ``record`` as its stream arrives (``at``: its scheduled time)."""
    parts: list[str] = []
    try:
        async with client.stream("POST", url, json=payload) as response:
            if response.status_code >= 400:
                await response.aread()
                record.error = f"HTTP {response.status_code}"
                return
            if "text/event-stream" not in response.headers.get("content-type", ""):
                _whole_body(json.loads(await response.aread()), record, parts)  # a server that would not stream
            else:
                async for line in response.aiter_lines():
                    if not line.startswith("data:") or line[5:].strip() == "[DONE]":
                        continue
                    text = _delta(json.loads(line[5:]))
                    if text:
                        if record.first_token_s is None:
                            record.first_token_s = time.perf_counter() - at
                        record.chunks += 1
                        parts.append(text)
        record.end_s = time.perf_counter() - at
        if record.first_token_s is None:
            record.first_token_s = record.end_s  # nothing streamed: the first token is the end
        record.text = "".join(parts)
    except (httpx.ConnectError, httpx.RemoteProtocolError) as exc:
        record.error, record.unreachable = f"connection failed ({type(exc).__name__})", True
    except httpx.TimeoutException:
        record.error = "timed out"
    except (httpx.HTTPError, ValueError, KeyError) as exc:
        record.error = type(exc).__name__


def _delta(chunk: dict[str, Any]) -> str:
    """A streamed chunk's content (chat ``delta.content``, or a completion's ``text``)."""
    choices = chunk.get("choices") or []
    if not choices:
        return ""
    choice = choices[0]
    delta = choice.get("delta") or {}
    return str(delta.get("content") or choice.get("text") or "")


def _whole_body(body: dict[str, Any], record: StreamedRequest, parts: list[str]) -> None:
    choice = (body.get("choices") or [{}])[0]
    text = (choice.get("message") or {}).get("content") or choice.get("text") or ""
    parts.append(str(text))
    record.chunks = int((body.get("usage") or {}).get("completion_tokens") or len(str(text).split()))
