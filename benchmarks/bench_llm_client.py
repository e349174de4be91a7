"""Does h2h's endpoint client keep a server busy? Requests/s against a bare asyncio + httpx client.

A local OpenAI-compatible server (uvicorn, in a process of its own) answers every
``POST /v1/chat/completions`` after a fixed ``--latency-ms`` (an ``asyncio.sleep``: the
server's own cost is that sleep and its HTTP handling). Against it, at the same concurrency,
with rounds alternating side by side in one run:

* **bare** — ``asyncio`` + one ``httpx.AsyncClient`` (a connection pool of the concurrency's
  size), a semaphore, ``gather`` over every request, ``response.json()``: the least a client does;
* **h2h** — :func:`headtohead.adapters.chat_client.ask_all` with no cache (retries, backoff,
  status counting, progress bookkeeping);
* **h2h + cache** — the same writing every answer to the SQLite response cache as it arrives
  (what ``h2h run`` does).

The ideal is ``concurrency / latency`` requests per second. The goal: h2h within 10 % of bare.

Usage::

    python benchmarks/bench_llm_client.py [--requests 400] [--concurrency 8] [--latency-ms 20] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from headtohead.adapters.chat_client import ask_all, chat_url
from headtohead.adapters.response_cache import ResponseCache

SERVER = r"""
import asyncio, json, sys
import uvicorn

LATENCY = float(sys.argv[2]) / 1e3
BODY = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                   "choices": [{"index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": "positive"}}],
                   "usage": {"prompt_tokens": 40, "completion_tokens": 1, "total_tokens": 41}}).encode()

async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    if scope["method"] == "POST":
        await asyncio.sleep(LATENCY)
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]})
    await send({"type": "http.response.body", "body": BODY})

uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
"""


def _payloads(n: int) -> list[dict]:
    return [
        {
            "model": "m",
            "messages": [{"role": "user", "content": f"Classify example {i}: a fine film."}],
            "temperature": 0.0,
            "max_tokens": 16,
        }
        for i in range(n)
    ]


async def _bare(base_url: str, payloads: list[dict], concurrency: int) -> int:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=60.0, limits=limits) as client:
        gate = asyncio.Semaphore(concurrency)
        url = chat_url(base_url)

        async def one(payload: dict) -> str:
            async with gate:
                response = await client.post(url, json=payload)
                return response.json()["choices"][0]["message"]["content"]

        answers = await asyncio.gather(*(one(p) for p in payloads))
    return sum(a == "positive" for a in answers)


def _h2h(base_url: str, payloads: list[dict], concurrency: int, cache: ResponseCache | None) -> int:
    keys = [f"{time.perf_counter_ns()}-{i}" for i in range(len(payloads))]
    exchanges, _ = ask_all(
        base_url,
        {},
        payloads,
        keys,
        cache=cache,
        fresh=True,
        max_concurrency=concurrency,
        timeout_s=60.0,
        max_retries=3,
        progress=lambda *a, **k: None,
    )
    return sum(e.body is not None and e.body["content"] == "positive" for e in exchanges)


def _wait_for(base_url: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(base_url + "/models", timeout=1.0)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError("the benchmark server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    from headtohead.testing.tiny_llm import free_port

    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port), str(args.latency_ms)])
    base_url = f"http://127.0.0.1:{port}/v1"
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, httpx {httpx.__version__}; load average {os.getloadavg()[0]:.2f}"
    )
    ideal = args.concurrency / (args.latency_ms / 1e3)
    print(
        f"{args.requests} requests per round, concurrency {args.concurrency}, server latency {args.latency_ms:g} ms "
        f"(ideal {ideal:,.0f} requests/s)"
    )
    try:
        _wait_for(base_url)
        payloads = _payloads(args.requests)
        with tempfile.TemporaryDirectory() as folder:
            cache = ResponseCache(Path(folder) / "responses.sqlite")
            contenders = {
                "bare": lambda: asyncio.run(_bare(base_url, payloads, args.concurrency)),
                "h2h": lambda: _h2h(base_url, payloads, args.concurrency, None),
                "h2h + cache": lambda: _h2h(base_url, payloads, args.concurrency, cache),
            }
            for run in contenders.values():  # warm-up: connections, imports, the cache file
                run()
            rates: dict[str, list[float]] = {name: [] for name in contenders}
            names = list(contenders)
            for r in range(args.rounds):
                order = names if r % 2 == 0 else names[::-1]  # alternate who goes first
                cells = []
                for name in order:
                    start = time.perf_counter()
                    answered = contenders[name]()
                    seconds = time.perf_counter() - start
                    assert answered == args.requests, f"{name}: {answered} of {args.requests} answered"
                    rates[name].append(args.requests / seconds)
                    cells.append(f"{name} {rates[name][-1]:,.0f}/s")
                print(f"round {r + 1}: " + ", ".join(cells))
            cache.close()
    finally:
        server.terminate()
        server.wait()
    bare = statistics.median(rates["bare"])
    print(f"\n{'':14}{'median req/s':>14}{'range':>16}{'vs bare':>9}{'vs ideal':>10}")
    for name, values in rates.items():
        median = statistics.median(values)
        print(
            f"{name:14}{median:14,.0f}{f'{min(values):,.0f}–{max(values):,.0f}':>16}{median / bare:9.3f}"
            f"{median / ideal:10.3f}"
        )
    print(
        json.dumps(
            {
                "ratio_h2h_vs_bare": statistics.median(rates["h2h"]) / bare,
                "ratio_h2h_cache_vs_bare": statistics.median(rates["h2h + cache"]) / bare,
            }
        )
    )


if __name__ == "__main__":
    main()
