"""Ask an OpenAI-compatible chat-completions endpoint many questions at once, and survive its faults.

See ``docs/llm.md``, "Concurrency, faults and the cache".
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import email.utils
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from headtohead.adapters.response_cache import ResponseCache

__all__ = [
    "Exchange",
    "PassStats",
    "RequestLog",
    "EndpointRefused",
    "ask_all",
    "chat_url",
    "endpoint_url",
    "retry_delay",
    "server_reason",
]

_RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
_FATAL_STATUSES = frozenset({401, 403, 404})
_BACKOFF_BASE_S = 0.5
_BACKOFF_CAP_S = 30.0
_RETRY_AFTER_CAP_S = 300.0
_PROGRESS_EVERY_S = 0.25


class EndpointRefused(Exception):
    """The endpoint answered in a way that will not change on retry (401, 403, 404)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(f"HTTP {status}: {reason}")
        self.status, self.reason = status, reason


@dataclass
class Exchange:
    """What became of one prompt.

    ``body`` is the trimmed answer (``content``, ``logprobs``, ``usage``) or ``None`` with
    ``error`` saying why; ``latency_s`` is the successful request's own time (for a cached
    answer, the time it took when it was first asked); ``tries`` the requests sent for it now.
    ``missing``: no answer because of the transport (timeouts, refused or reset connections,
    5xx and other retryable statuses, malformed bodies, after every retry; or never asked): it
    says nothing about the model, unlike a request the server refused for this example (4xx).
    """

    body: dict[str, Any] | None = None
    latency_s: float | None = None
    from_cache: bool = False
    tries: int = 0
    error: str | None = None
    missing: bool = False


@dataclass
class PassStats:
    """The requests of one :func:`ask_all` call."""

    requests: int = 0
    retries: int = 0
    wall_s: float = 0.0
    statuses: dict[str, int] = field(default_factory=dict)
    #: The most requests this pass had in flight at once (counted here, at the client).
    peak_in_flight: int = 0
    #: What the server that answered says it is (:func:`backend_name`); ``None``: it did not say.
    server: str | None = None


@dataclass(frozen=True)
class RequestLog:
    """The HTTP family's own part of its answers' log: where it asked and what its requests did."""

    #: The API root, without credentials or query (never a secret).
    base_url: str
    #: Each pass of requests (:func:`ask_all`'s).
    passes: Sequence[PassStats]
    #: Requests in flight at most (``max_concurrency``).
    concurrency: int
    #: Price per million tokens (``input_per_1m``, ``output_per_1m``), if given.
    price: Any = None


def backend_name(header: str | None, payload: Any) -> str | None:
    """What answered, as the server says: its ``Server`` header and the response's ``system_fingerprint``.

    The backend and its build move an LLM's scores (a vLLM or llama.cpp release, a provider's
    deployment); ``None`` when the server says neither.

    Examples
    --------
    >>> backend_name("uvicorn", {"system_fingerprint": "b4589-1a2b3c"})
    'uvicorn, b4589-1a2b3c'
    >>> backend_name(None, {}) is None
    True
    """
    fingerprint = payload.get("system_fingerprint") if isinstance(payload, dict) else None
    parts = [str(p).strip() for p in (header, fingerprint) if p is not None and str(p).strip()]
    return ", ".join(parts) or None


def chat_url(base_url: str) -> str:
    """``…/chat/completions`` under the API root."""
    return endpoint_url(base_url, "chat/completions")


def endpoint_url(base_url: str, path: str) -> str:
    """``path`` under the API root (``completions``, ``chat/completions``)."""
    return base_url.rstrip("/") + "/" + path


def retry_delay(attempt: int, retry_after: str | None, rng: random.Random) -> float:
    """Seconds to wait before try ``attempt + 1``: the server's ``Retry-After`` if it gave one, else backoff.

    Examples
    --------
    >>> retry_delay(3, "2", random.Random(0))
    2.0
    >>> 0 <= retry_delay(3, None, random.Random(0)) <= 4.0
    True
    """
    if retry_after:
        value = retry_after.strip()
        try:
            return min(_RETRY_AFTER_CAP_S, max(0.0, float(value)))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value) if value else None
            if when is not None:
                return min(_RETRY_AFTER_CAP_S, max(0.0, when.timestamp() - time.time()))
    return rng.uniform(0.0, min(_BACKOFF_CAP_S, _BACKOFF_BASE_S * 2**attempt))


def _trimmed(payload: Any) -> dict[str, Any]:
    """The parts of a chat-completions response kept: the answer, its logprobs, the usage (``ValueError`` if absent)."""
    choice = payload["choices"][0]
    if "message" not in choice:
        return _trimmed_text(payload)
    content = choice["message"].get("content")
    if content is None or not isinstance(content, str):
        raise ValueError("no message content")
    logprobs = (choice.get("logprobs") or {}).get("content") if isinstance(choice.get("logprobs"), dict) else None
    usage = payload.get("usage") or {}
    return {
        "content": content,
        "logprobs": logprobs,
        "usage": {"prompt_tokens": usage.get("prompt_tokens"), "completion_tokens": usage.get("completion_tokens")},
    }


def _trimmed_text(payload: Any) -> dict[str, Any]:
    """A (legacy) completions response: its text, its ``logprobs`` (``tokens``, ``token_logprobs``,
    ``text_offset``: of the prompt too when it was echoed) and the usage."""
    choice = payload["choices"][0]
    if not isinstance(choice.get("text"), str):
        raise ValueError("no completion text")
    usage = payload.get("usage") or {}
    return {
        "content": choice["text"],
        "logprobs": choice.get("logprobs") if isinstance(choice.get("logprobs"), dict) else None,
        "usage": {"prompt_tokens": usage.get("prompt_tokens"), "completion_tokens": usage.get("completion_tokens")},
    }


class _Asker:
    """The state one pass shares between its workers."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        url: str,
        payloads: Sequence[dict[str, Any]],
        keys: Sequence[str],
        cache: ResponseCache | None,
        *,
        max_retries: int,
        progress: Callable[..., None] | None,
        seed: int,
    ) -> None:
        self.client, self.url, self.payloads, self.keys, self.cache = client, url, payloads, keys, cache
        self.max_retries, self.progress = max_retries, progress
        self.rng = random.Random(seed)  # noqa: S311 - backoff jitter, not a secret
        self.stats = PassStats()
        self.results: list[Exchange | None] = [None] * len(payloads)
        self.done = self.tokens = self.in_flight = 0
        self.total = len(payloads)
        self.began = time.perf_counter()
        self.last_report = 0.0

    async def worker(self, queue: asyncio.Queue[int]) -> None:
        while True:
            try:
                position = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            exchange = await self.ask(position)
            self.results[position] = exchange
            self.done += 1
            if exchange.body is not None:
                usage = exchange.body["usage"]
                self.tokens += (usage.get("prompt_tokens") or 0) + (usage.get("completion_tokens") or 0)
                if self.cache is not None:
                    self.cache.put(self.keys[position], exchange.body, exchange.latency_s or 0.0)
            self.report()

    def report(self, final: bool = False) -> None:
        now = time.perf_counter()
        if self.progress is None or (not final and now - self.last_report < _PROGRESS_EVERY_S):
            return
        self.last_report = now
        elapsed = max(now - self.began, 1e-9)
        self.progress(self.done, self.total, rates={"req/s": self.done / elapsed, "tok/s": self.tokens / elapsed})

    async def ask(self, position: int) -> Exchange:
        exchange = Exchange()
        for attempt in range(self.max_retries + 1):
            exchange.tries += 1
            self.stats.requests += 1
            self.stats.retries += attempt > 0
            retry_after, why = await self._once(position, exchange)
            if exchange.body is not None:
                exchange.error = None
                return exchange
            exchange.error = why
            if retry_after is False or attempt == self.max_retries:
                break
            await asyncio.sleep(retry_delay(attempt, retry_after if isinstance(retry_after, str) else None, self.rng))
        if exchange.tries > 1 and exchange.error is not None:
            exchange.error += f" (after {exchange.tries} tries)"
        exchange.missing = retry_after is not False  # retries would have helped: the transport failed
        return exchange

    async def _once(self, position: int, exchange: Exchange) -> tuple[str | bool | None, str]:
        """One request. Returns (retry: a Retry-After value, None to back off, False to stop; why it failed)."""
        start = time.perf_counter()
        self.in_flight += 1
        self.stats.peak_in_flight = max(self.stats.peak_in_flight, self.in_flight)
        try:
            response = await self.client.post(self.url, json=self.payloads[position])
        except httpx.TimeoutException:
            self._count("timeout")
            return None, "timeout"
        except httpx.ConnectError:
            self._count("connection refused")
            return None, "connection refused"
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError):
            self._count("connection reset")
            return None, "connection reset"
        finally:
            self.in_flight -= 1
        self._count(str(response.status_code))
        if response.status_code in _FATAL_STATUSES:
            raise EndpointRefused(response.status_code, server_reason(response))
        if response.status_code in _RETRY_STATUSES:
            return response.headers.get("retry-after"), f"HTTP {response.status_code}"
        if response.status_code >= 400:
            return False, f"HTTP {response.status_code}: {server_reason(response)}"
        try:
            payload = response.json()
            exchange.body = _trimmed(payload)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            return None, "malformed response"
        exchange.latency_s = time.perf_counter() - start
        self.stats.server = self.stats.server or backend_name(response.headers.get("server"), payload)
        return None, ""

    def _count(self, what: str) -> None:
        self.stats.statuses[what] = self.stats.statuses.get(what, 0) + 1


def server_reason(response: httpx.Response) -> str:
    """The server's own words about a refused request, short (never the request's headers).

    Read from the OpenAI shape ``{"error": {"message": …}}``, FastAPI's ``{"detail": …}``
    (``transformers serve``), ``{"error": "…"}`` or ``{"message": …}``; else the body's text,
    whitespace collapsed and cut at 200 characters; an empty body gives the status's phrase.

    Examples
    --------
    >>> server_reason(httpx.Response(400, json={"detail": "Server is pinned to 'a'; requested 'b'."}))
    "Server is pinned to 'a'; requested 'b'."
    >>> server_reason(httpx.Response(400, json={"error": {"message": "model   not found"}}))
    'model not found'
    >>> server_reason(httpx.Response(400, text=""))
    'Bad Request'
    """
    try:
        payload = response.json()
        text = str(_message_of(payload))
    except ValueError:
        text = response.text
    text = " ".join(text.split())
    return text[:200] + ("…" if len(text) > 200 else "") if text else response.reason_phrase


def _message_of(payload: Any) -> Any:
    """The message in an error body, in whichever of the usual shapes it comes (else the body itself)."""
    if not isinstance(payload, dict):
        return payload
    for key in ("error", "detail", "message"):
        value = payload.get(key)
        if isinstance(value, dict):
            value = _message_of(value)
        if value is not None and not isinstance(value, dict):
            return value
    return payload


async def _ask(
    base_url: str,
    headers: dict[str, str],
    payloads: Sequence[dict[str, Any]],
    keys: Sequence[str],
    cache: ResponseCache | None,
    *,
    max_concurrency: int,
    timeout_s: float,
    max_retries: int,
    progress: Callable[..., None] | None,
    seed: int,
    path: str,
) -> tuple[list[Exchange | None], PassStats]:
    limits = httpx.Limits(max_connections=max_concurrency, max_keepalive_connections=max_concurrency)
    async with httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(timeout_s), limits=limits) as client:
        asker = _Asker(
            client,
            endpoint_url(base_url, path),
            payloads,
            keys,
            cache,
            max_retries=max_retries,
            progress=progress,
            seed=seed,
        )
        queue: asyncio.Queue[int] = asyncio.Queue()
        for position in range(len(payloads)):
            queue.put_nowait(position)
        workers = [asyncio.create_task(asker.worker(queue)) for _ in range(min(max_concurrency, len(payloads)))]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise
        finally:
            asker.stats.wall_s = time.perf_counter() - asker.began
        asker.report(final=True)
        return asker.results, asker.stats


def ask_all(
    base_url: str,
    headers: dict[str, str],
    payloads: Sequence[dict[str, Any]],
    keys: Sequence[str],
    *,
    cache: ResponseCache | None,
    fresh: bool = False,
    max_concurrency: int = 8,
    timeout_s: float = 60.0,
    max_retries: int = 5,
    progress: Callable[..., None] | None = None,
    seed: int = 0,
    path: str = "chat/completions",
) -> tuple[list[Exchange], PassStats]:
    """Answers to every payload, in order: from the cache, else asked (see the module docstring).

    Parameters
    ----------
    base_url : str
        The API root (``…/v1``).
    headers : dict
        Sent with every request (``Authorization`` when there is a key).
    payloads : sequence of dict
        Request bodies (model, messages, sampling parameters).
    keys : sequence of str
        The cache key of each payload.
    cache : ResponseCache or None
        Where answers are read (unless ``fresh``) and stored.
    fresh : bool
        Ask every payload again (``--no-cache``); the answers still go into the cache.
    max_concurrency, timeout_s, max_retries : int, float, int
        See :class:`~headtohead.config.models.openai.OpenAISettings`.
    progress : callable, optional
        ``progress(done, total, rates=…)``: rates of requests and tokens per second (``None``: all cached).
    seed : int
        Seeds the backoff jitter.
    path : str
        Under the API root: ``chat/completions``, or ``completions`` (a prompt of text, e.g. scored by ``echo``).

    Returns
    -------
    (list of Exchange, PassStats)

    Raises
    ------
    EndpointRefused
        401, 403 or 404: nothing would succeed.
    """
    exchanges = [Exchange() for _ in payloads]
    found = cache.get_many(list(keys)) if cache is not None and not fresh else {}
    todo = []
    for position, key in enumerate(keys):
        if key in found:
            body, latency = found[key]
            exchanges[position] = Exchange(body=body, latency_s=latency, from_cache=True)
        else:
            todo.append(position)
    stats = PassStats()
    if todo:
        coroutine = _ask(
            base_url,
            headers,
            [payloads[p] for p in todo],
            [keys[p] for p in todo],
            cache,
            max_concurrency=max_concurrency,
            timeout_s=timeout_s,
            max_retries=max_retries,
            progress=progress,
            seed=seed,
            path=path,
        )
        asked, stats = _run(coroutine)
        for position, exchange in zip(todo, asked, strict=True):
            exchanges[position] = (
                exchange if exchange is not None else Exchange(error="not asked (interrupted)", missing=True)
            )
    elif progress is not None:
        progress(len(payloads), len(payloads), rates=None)
    return exchanges, stats


def _run(coroutine: Any) -> Any:
    """Run ``coroutine`` to its end: here, or in a thread of its own when this thread already runs a loop (Jupyter)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
