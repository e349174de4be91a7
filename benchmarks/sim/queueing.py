"""The Server scenario's queue, computed: what max_qps a model with a known service time must show.

A model that takes ``service_s`` per call of up to ``max_batch`` requests, behind the dynamic
batcher (a batch leaves when ``max_batch`` wait or the oldest has waited ``max_wait_s``, once the
server is free), fed Poisson arrivals, is a bulk-service queue (M/D^[b]/1 with a batching
timeout). Its latency percentiles have no handy closed form near saturation, so
:func:`batcher_latencies` computes every request's latency exactly for a given arrival
sequence (a recursion over batches), and :func:`expected_max_qps` finds the rate at which a
trial like LoadGen's (as many queries as ``max(min_queries, rate × trial_s)``) passes LoadGen's
test half the time: p99 under the bound with its early-stopping rule (fewer overlatency queries
than a 1 % rate would give with 99 % confidence, as ``loadgen/early_stopping.cc`` decides).
"""

from __future__ import annotations

import bisect

import numpy as np
from scipy import stats

__all__ = ["batcher_latencies", "loadgen_would_pass", "pass_rate", "expected_max_qps", "serial_sender"]


def batcher_latencies(arrivals: np.ndarray, service_s: float, max_batch: int, max_wait_s: float) -> np.ndarray:
    """Arrival-to-answer latency of every request (arrivals sorted, in seconds).

    Examples
    --------
    >>> batcher_latencies(np.array([0.0, 0.001, 0.1]), 0.01, 8, 0.002).round(4).tolist()
    [0.012, 0.011, 0.012]
    """
    n = len(arrivals)
    latency = np.empty(n)
    free, i = 0.0, 0
    while i < n:
        full = i + max_batch - 1
        ready = arrivals[i] + max_wait_s if full >= n else min(arrivals[i] + max_wait_s, arrivals[full])
        start = max(free, ready)
        j = min(int(np.searchsorted(arrivals, start, side="right")), i + max_batch)
        free = start + service_s
        latency[i:j] = free - arrivals[i:j]
        i = j
    return latency


def loadgen_would_pass(
    latency: np.ndarray, bound_s: float, *, percentile: float = 0.99, confidence: float = 0.99
) -> bool:
    """LoadGen's Server verdict: p99 under the bound and its early-stopping check passed.

    Early stopping passes when ``t`` overlatency queries of ``n`` would be unlikely (≤ 1 − confidence)
    were the true overlatency share 1 − percentile: ``binom.cdf(t, n, 1 − percentile) ≤ 1 − confidence``.
    """
    over = int(np.sum(latency > bound_s))
    early = stats.binom.cdf(over, len(latency), 1.0 - percentile) <= 1.0 - confidence
    return bool(early and np.quantile(latency, percentile) <= bound_s)


def pass_rate(
    rate: float,
    *,
    service_s: float,
    max_batch: int,
    max_wait_s: float,
    bound_s: float,
    trial_s: float,
    min_queries: int,
    reps: int = 200,
    seed: int = 0,
) -> float:
    """Share of simulated LoadGen trials at ``rate`` that pass."""
    rng = np.random.default_rng(seed)
    n = max(min_queries, int(np.ceil(rate * trial_s)))
    passed = 0
    for _ in range(reps):
        arrivals = np.cumsum(rng.exponential(1.0 / rate, size=n))
        passed += loadgen_would_pass(batcher_latencies(arrivals, service_s, max_batch, max_wait_s), bound_s)
    return passed / reps


def expected_max_qps(
    *,
    service_s: float,
    max_batch: int,
    max_wait_s: float,
    bound_s: float,
    trial_s: float,
    min_queries: int,
    reps: int = 200,
    seed: int = 0,
    tolerance: float = 0.005,
) -> float:
    """The rate where half the simulated trials pass (bisection on the pass rate, common random numbers).

    Examples
    --------
    >>> qps = expected_max_qps(service_s=0.01, max_batch=8, max_wait_s=0.002, bound_s=0.05, trial_s=1.0,
    ...                        min_queries=500, reps=40)
    >>> 600 < qps < 900   # below the 800/s a full batch every 10 ms gives, above it only by the trial's end
    True
    """
    low, high = 0.05 * max_batch / service_s, 2.0 * max_batch / service_s
    while high / low > 1.0 + tolerance:
        mid = float(np.sqrt(low * high))
        rate = pass_rate(
            mid,
            service_s=service_s,
            max_batch=max_batch,
            max_wait_s=max_wait_s,
            bound_s=bound_s,
            trial_s=trial_s,
            min_queries=min_queries,
            reps=reps,
            seed=seed,
        )
        low, high = (mid, high) if rate >= 0.5 else (low, mid)
    return float(np.sqrt(low * high))


def serial_sender(service_s: float, overhead_s: float = 0.0, text: str = "positive"):
    """A capacity probe's ``send`` against a server of one request at a time, ``service_s`` each, computed.

    Every request starts when it has arrived and the one before it has finished (Lindley's recursion,
    exact: no clock involved); its answer, one chunk, comes ``overhead_s`` (the network) after. A request
    arriving while ``max_in_flight`` wait stops the probe, as the real probe does.

    Examples
    --------
    >>> run = serial_sender(0.02)([{}] * 3, [0.0, 0.01, 0.1], 8)
    >>> [round(r.end_s, 3) for r in run.requests]
    [0.02, 0.03, 0.02]
    """
    from headtohead.adapters.chat_stream import ProbeRun, StreamedRequest

    def send(payloads, offsets_s, max_in_flight):
        records, ends, free, stopped = [], [], 0.0, False
        for offset in offsets_s:
            if len(ends) - bisect.bisect_right(ends, offset) >= max_in_flight:  # ends rise: one server
                stopped = True
                break
            free = max(free, offset) + service_s
            ends.append(free)
            latency = free - offset + overhead_s
            records.append(
                StreamedRequest(scheduled_s=offset, first_token_s=latency, end_s=latency, chunks=1, text=text)
            )
        return ProbeRun(records, stopped_early=stopped, elapsed_s=max(ends, default=0.0))

    return send
