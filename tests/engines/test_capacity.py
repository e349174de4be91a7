"""The capacity scenario's search and judgement on servers of known capacity, computed exactly (no clock).

A server of one request at a time, ``d`` seconds each, sustains ``1 / d`` requests per second; the
probes' latencies are Lindley's recursion over seeded arrivals (``sim.queueing.serial_sender``), so
these tests take milliseconds and no busy machine moves them. The same search over real HTTP is
``tests/pipeline/test_capacity_runs.py``.
"""

from __future__ import annotations

import re

import pytest
from sim.queueing import serial_sender

from headtohead.adapters.chat_stream import LoadTarget, ProbeRun, StreamedRequest
from headtohead.config.speed import SpeedConfig
from headtohead.engines.capacity import arrival_offsets, judge_probe, run_capacity
from headtohead.report.words.server import capacity_lines, with_capacity_sentences


def _target(name: str, send, n: int = 40) -> LoadTarget:
    # every answer is "positive"; the gold labels alternate, so half the answers under load are right
    return LoadTarget(name, [{}] * n, [i % 2 for i in range(n)], lambda text: 1 if text == "positive" else None, send)


def _config(**capacity) -> SpeedConfig:
    return SpeedConfig(scenarios=["capacity"], capacity={"slo": {"e2e_p99": "2s"}, **capacity})


def test_the_done_when_servers_at_20_and_40_ms_give_50_and_25_per_second_and_a_ratio_of_2():
    """The issue's check, exactly: e2e_p99 ≤ 2 s, one request at a time, 20 ms and 40 ms (50 and 25 /s)."""
    config = _config(repeats=3, start_rate=8)  # requests: the p99 bound at 95 %, 299 a probe
    capacity = with_capacity_sentences(
        run_capacity([_target("fast", serial_sender(0.02, 0.03)), _target("slow", serial_sender(0.04, 0.03))], config)
    )
    fast, slow = capacity.model("fast"), capacity.model("slow")
    assert fast.goodput == pytest.approx(50, rel=0.1) and slow.goodput == pytest.approx(25, rel=0.1)
    assert fast.ci_low < fast.goodput < fast.ci_high and len(fast.searches) == 3
    assert all(p.requests == 299 for p in fast.probes if not p.stopped_early)
    (pair,) = capacity.comparisons
    assert pair.model_a == "fast" and pair.more == "fast"
    assert pair.ci_low <= 0.5 <= pair.ci_high  # slow/fast: a ratio of 2 the other way round
    assert re.fullmatch(
        r"fast holds \d\.\d\d× the load of slow at p99 e2e ≤ 2 s \(95 % CI \d\.\d\d–\d\.\d\d, 3 seeded searches, p = .*\)",
        pair.verdict,
    )
    # ABBA: the pair's order flips every step
    assert capacity.order[:4] == [["fast", "slow"], ["slow", "fast"], ["fast", "slow"], ["slow", "fast"]]
    # the answers under load are scored: "positive" on alternating gold labels
    answered = sum(p.answered for p in fast.probes)
    assert answered > 0 and sum(p.correct for p in fast.probes) / answered == pytest.approx(0.5, abs=0.01)


def test_evenly_spaced_arrivals_find_the_known_capacity_within_5_percent():
    """Without Poisson noise the threshold is sharp (a queue 1 % behind its arrivals is growing): the bracket's
    midpoint is within the precision."""
    for d in (0.005, 0.02, 0.1):
        config = _config(arrivals="constant", requests=60, repeats=2, precision=0.05, start_rate=3, saturation=0.01)
        (model,) = run_capacity([_target("m", serial_sender(d))], config).models
        assert model.goodput == pytest.approx(1 / d, rel=0.05)
        assert all(p.held == (p.rate < 1 / d) for p in model.probes if abs(p.rate * d - 1) > 0.01)


def test_a_probe_is_judged_by_every_slo_and_by_a_growing_queue():
    slow_first = [StreamedRequest(i * 0.1, first_token_s=0.4, end_s=0.4 + 0.01 * 9, chunks=10) for i in range(50)]
    run = ProbeRun(slow_first + [StreamedRequest(5.0, error="HTTP 503")])
    slo = {"ttft_p99": 0.5, "tpot_p99": 0.005, "e2e_p99": 1.0, "error_rate": 0.05}
    judged = judge_probe(run, 0, slo, 0.05)
    assert judged["ttft_p99_s"] == 0.4 and judged["tpot_p99_s"] == pytest.approx(0.01)
    assert judged["errors"] == 1 and judged["requests"] == 51
    assert judged["missed"] == ["tpot_p99"] and not judged["held"] and not judged["saturated"]
    # a queue that grows: every request waits 20 ms longer than the one before
    growing = ProbeRun([StreamedRequest(i * 0.1, first_token_s=0.02 * i, end_s=0.02 * i) for i in range(50)])
    judged = judge_probe(growing, 0, {"e2e_p99": 2.0}, 0.05)
    assert judged["saturated"] and not judged["missed"] and not judged["held"]
    assert judged["achieved_rate"] == pytest.approx(49 / (4.9 + 0.98))
    # requests cancelled when an over-saturated probe stopped are not the deployment's errors
    stopped = ProbeRun([StreamedRequest(0.0, 0.1, 0.1), StreamedRequest(0.1, error="cancelled")], stopped_early=True)
    judged = judge_probe(stopped, 0, {"error_rate": 0.01}, 0.05)
    assert judged["errors"] == 0 and judged["saturated"] and not judged["held"]
    # the warm-up is left out
    assert judge_probe(growing, 45, {"e2e_p99": 2.0}, 0.05)["requests"] == 5


def test_no_rate_meeting_the_slo_is_said_with_the_lowest_rate_s_figures():
    """Each request takes 3 s even alone: no rate down to min_rate meets p99 e2e ≤ 2 s."""
    config = _config(requests=20, repeats=1, start_rate=2, min_rate=0.5)
    capacity = run_capacity([_target("m", serial_sender(3.0))], config)
    (model,) = capacity.models
    assert model.goodput is None and model.lowest_probe is not None and model.lowest_probe.rate < 2
    (line,) = capacity_lines(capacity)[1:]
    low = model.lowest_probe
    assert line == (
        f"  m: no rate met p99 e2e ≤ 2 s (lowest probed, {low.rate:.3g}/s: p99 TTFT {low.ttft_p99_s:.3g} s, "
        f"p99 e2e {low.e2e_p99_s:.3g} s, errors 0.0 % of 20, over-saturated)"
    )


def test_a_server_that_dies_mid_search_leaves_the_search_missing_never_a_capacity():
    alive, searches_done = serial_sender(0.02), []

    def dies_after_the_first_search(payloads, offsets, limit):
        if not searches_done:
            return alive(payloads, offsets, limit)
        return ProbeRun([StreamedRequest(t, error="connection failed", unreachable=True) for t in offsets])

    def progress(stage, done, total):
        if done:
            searches_done.append(done)

    config = _config(arrivals="constant", requests=40, repeats=3, start_rate=20)
    (model,) = run_capacity([_target("m", dies_after_the_first_search)], config, progress=progress).models
    assert model.missing_searches == 2 and [s.estimate_qps is None for s in model.searches] == [False, True, True]
    assert model.goodput == pytest.approx(50, rel=0.1) and model.ci_low is None  # one search: no interval
    dead = run_capacity(
        [_target("d", lambda p, o, k: ProbeRun([StreamedRequest(t, error="x", unreachable=True) for t in o]))], config
    )
    assert dead.models[0].goodput is None and dead.models[0].missing_searches == 3
    assert "missing — the server stopped answering in every search" in capacity_lines(dead)[1]


def test_cost_at_the_slo_is_the_price_per_hour_over_goodput():
    config = _config(arrivals="constant", requests=40, repeats=1, start_rate=20, price_per_hour={"m": 3.6})
    (model,) = run_capacity([_target("m", serial_sender(0.02))], config).models
    assert model.cost_per_million == pytest.approx(3.6 / (model.goodput * 3600) * 1e6)


def test_arrivals_are_seeded_and_poisson_at_the_rate():
    a = arrival_offsets(50.0, 4000, "poisson", [1, 2])
    assert a == arrival_offsets(50.0, 4000, "poisson", [1, 2]) and a != arrival_offsets(50.0, 4000, "poisson", [1, 3])
    assert (len(a) - 1) / a[-1] == pytest.approx(50, rel=0.05)
