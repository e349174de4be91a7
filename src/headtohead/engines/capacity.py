"""The capacity scenario: the highest request rate each endpoint model sustains within its SLOs.

A *probe* sends a model ``warmup_requests`` then ``requests`` streamed requests (the run's own
examples) at one rate — Poisson arrivals, seeded, or evenly spaced — and is judged: every SLO met
(p99 time to first token, p99 time per output token, p99 end to end, error rate) and not
over-saturated (its completions kept up with its arrivals, and it never had ``max_in_flight``
requests waiting). The search of each model is the Server scenario's
(:class:`~headtohead.engines.server_search.RateSearch`: bracket by ``growth``, bisect to
``precision``), from a seeded random start, repeated ``repeats`` times; the models' probes are
interleaved step by step in ABBA order, so a drift of the machine or the network hits both. The
goodput and each pair's ratio are the Server scenario's figures over the searches
(:func:`~headtohead.stats.server.capacity_interval`, :func:`compare_searches`). A server that stops
answering leaves its search missing, never a capacity. See ``docs/speed.md``, "Capacity at a latency SLO".
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from headtohead.adapters.chat_stream import LoadTarget, ProbeRun, StreamedRequest
from headtohead.config.speed import SpeedConfig
from headtohead.engines.server_search import RateSearch, start_rate
from headtohead.results.capacity import CapacityModelResult, CapacityProbe, CapacitySummary
from headtohead.results.server import ServerComparison, ServerSearch
from headtohead.stats.multiple import holm_adjust
from headtohead.stats.server import capacity_interval, compare_searches, requests_for_percentile, resolution_factor

__all__ = ["run_capacity", "judge_probe", "arrival_offsets", "probe_requests"]

_P50 = {"ttft_p99": "ttft_p50_s", "e2e_p99": "e2e_p50_s"}


def probe_requests(config: SpeedConfig) -> int:
    """Measured requests per probe: ``capacity.requests``, else the fewest a p99 needs at ``speed.confidence``."""
    return config.capacity.requests or requests_for_percentile(0.99, config.confidence)


def arrival_offsets(rate: float, count: int, arrivals: str, seed: Sequence[int]) -> list[float]:
    """``count`` arrival times (seconds from the start) at ``rate``: Poisson (seeded) or evenly spaced.

    Examples
    --------
    >>> arrival_offsets(10.0, 3, "constant", [0])
    [0.0, 0.1, 0.2]
    """
    if arrivals == "constant":
        return [i / rate for i in range(count)]
    gaps = np.random.default_rng(list(seed)).exponential(1.0 / rate, count)
    return [float(t) for t in np.concatenate([[0.0], np.cumsum(gaps[:-1])])]


def _p(values: Sequence[float], q: float) -> float | None:
    # the order statistic at or above the quantile: LoadGen's reading of a percentile
    return float(np.quantile(np.asarray(values), q, method="higher")) if values else None


def judge_probe(
    run: ProbeRun,
    warmup: int,
    slo: dict[str, float],
    saturation: float,
    *,
    gold: Sequence[int] | None = None,
    read: Callable[[str], int | None] | None = None,
) -> dict[str, object]:
    """A probe's figures and judgement (the fields of :class:`CapacityProbe` but its place in the search).

    Percentiles are over the measured requests that succeeded; a failed one counts against
    ``error_rate`` only (one cancelled because the probe stopped early is neither). Over-saturated: stopped early, or the measured completions' rate fell below
    ``1 − saturation`` of their arrivals' rate (a queue that grew through the probe). ``gold[i]``:
    the label of the ``i``-th request sent, read through ``read``.
    """
    sent = run.requests
    measured = sent[warmup:]
    ok = [r for r in measured if r.error is None and r.end_s is not None]
    ttft = [r.first_token_s for r in ok if r.first_token_s is not None]
    e2e = [r.end_s for r in ok if r.end_s is not None]
    tpot = [t for r in ok if (t := r.tpot_s) is not None]
    figures: dict[str, float | None] = {
        "ttft_p50_s": _p(ttft, 0.5),
        "ttft_p99_s": _p(ttft, 0.99),
        "tpot_p99_s": _p(tpot, 0.99),
        "e2e_p50_s": _p(e2e, 0.5),
        "e2e_p99_s": _p(e2e, 0.99),
    }
    achieved, offered = _rates(measured, ok)
    saturated = run.stopped_early or (
        achieved is not None and offered is not None and achieved < (1 - saturation) * offered
    )
    # a request cancelled when an over-saturated probe stopped is the probe's, not a failure of the deployment
    errors = sum(r.error is not None and r.error != "cancelled" for r in measured)
    missed = [
        name
        for name, bound in slo.items()
        if (name == "error_rate" and (not measured or errors / len(measured) > bound))
        or (name != "error_rate" and ((value := figures[f"{name}_s"]) is None or value > bound))
    ]
    answered = correct = 0
    if gold is not None and read is not None:
        for i, r in enumerate(measured, start=warmup):
            label = read(r.text) if r.error is None else None
            answered += label is not None
            correct += label is not None and label == gold[i]
    down = bool(sent) and all(r.unreachable for r in sent)
    return {
        **figures,
        "requests": len(measured),
        "errors": errors,
        "achieved_rate": achieved,
        "saturated": saturated,
        "stopped_early": run.stopped_early,
        "missed": missed,
        "held": not missed and not saturated and not down and bool(measured),
        "answered": answered,
        "correct": correct,
        "server_down": down,
    }


def _rates(measured: Sequence[StreamedRequest], ok: Sequence[StreamedRequest]) -> tuple[float | None, float | None]:
    """(completions per second, arrivals per second) over the measured requests."""
    if len(ok) < 2 or len(measured) < 2:
        return None, None
    arrived = measured[-1].scheduled_s - measured[0].scheduled_s
    done = sorted(r.scheduled_s + (r.end_s or 0.0) for r in ok)
    took = done[-1] - done[0]
    if arrived <= 0 or took <= 0:
        return None, None
    return (len(ok) - 1) / took, (len(measured) - 1) / arrived


class _Searches:
    """Runs every model's probes, interleaved in ABBA order, and keeps their records."""

    def __init__(
        self, targets: Sequence[LoadTarget], config: SpeedConfig, seed: int, progress: Callable[..., None] | None
    ) -> None:
        self.targets, self.config, self.cap, self.seed, self.progress = targets, config, config.capacity, seed, progress
        assert self.cap.slo is not None, "SpeedConfig refuses scenario capacity without an SLO"
        self.slo = self.cap.slo.bounds()
        self.probes: dict[str, list[CapacityProbe]] = {t.name: [] for t in targets}
        self.searches: dict[str, list[RateSearch]] = {t.name: [] for t in targets}
        self.missing: dict[str, set[int]] = {t.name: set() for t in targets}
        self.order: list[list[str]] = []
        self.sent: dict[str, int] = {t.name: 0 for t in targets}

    def probe(self, target: LoadTarget, search: RateSearch, k: int, step: int) -> None:
        assert search.next_qps is not None, "a finished search runs no more probes"
        rate, cap = float(search.next_qps), self.cap
        count = cap.warmup_requests + probe_requests(self.config)
        offsets = arrival_offsets(rate, count, cap.arrivals, [self.seed, k, step])
        first = self.sent[target.name]  # the examples go round the model's list, a new stretch each probe
        chosen = [(first + i) % len(target.payloads) for i in range(count)]
        self.sent[target.name] += count
        run = target.send([target.payloads[i] for i in chosen], offsets, cap.max_in_flight)
        gold = [target.gold[i] for i in chosen]
        judged = judge_probe(run, cap.warmup_requests, self.slo, cap.saturation, gold=gold, read=target.read)
        record = CapacityProbe(search=k, step=step, phase=search.phase, rate=rate, **judged)  # type: ignore[arg-type]
        self.probes[target.name].append(record)
        if record.server_down:
            self.missing[target.name].add(k)
            search.next_qps = None  # the search is missing: nothing it saw is a capacity
            return
        light = not record.saturated and any(
            (value := getattr(record, field)) is not None and value > self.slo[name]
            for name, field in _P50.items()
            if name in self.slo
        )
        search.record(rate, record.held, light_load_miss=light)

    def search(self, k: int) -> None:
        """Search ``k``: every model from the same seeded start, probes interleaved ABBA."""
        cap = self.cap
        u = float(np.random.default_rng([self.seed, k]).random())
        states = {
            t.name: RateSearch(
                start_rate(cap.start_rate, cap.growth, u), cap.growth, cap.precision, cap.min_rate, cap.max_rate
            )
            for t in self.targets
        }
        for name, state in states.items():
            self.searches[name].append(state)
        step = 0
        while active := [t for t in self.targets if not states[t.name].done]:
            order = active if (step + k) % 2 == 0 else active[::-1]  # A B, B A, A B …: ABBA blocks
            self.order.append([t.name for t in order])
            for target in order:
                self.probe(target, states[target.name], k, step)
            step += 1
            if self.progress is not None:
                finished = k * len(self.targets) + sum(states[t.name].done for t in self.targets)
                self.progress("speed capacity", finished, cap.repeats * len(self.targets))


def _model_result(target: LoadTarget, runs: _Searches, confidence: float, price: float | None) -> CapacityModelResult:
    name = target.name
    states = [s for k, s in enumerate(runs.searches[name]) if k not in runs.missing[name]]
    estimates = [e for s in states if (e := s.estimate) is not None]
    resolution = float(np.mean([resolution_factor(s.held, s.failed) for s in states])) if states else 1.0
    interval = capacity_interval(estimates, confidence, resolution=resolution) if estimates else None
    held = [h for s in states if (h := s.held) is not None]
    probes = runs.probes[name]
    live = [p for p in probes if not p.server_down]
    return CapacityModelResult(
        name=name,
        goodput=interval.mean if interval else None,
        ci_low=interval.low if interval else None,
        ci_high=interval.high if interval else None,
        confidence=confidence,
        held_rate=min(held) if held and len(held) == len(states) else None,
        at_cap=any(s.at_cap for s in states),
        lowest_probe=None if estimates or not live else min(live, key=lambda p: p.rate),
        missing_searches=len(runs.missing[name]),
        searches=[
            ServerSearch(
                search=k,
                held_qps=None if k in runs.missing[name] else s.held,
                failed_qps=None if k in runs.missing[name] else s.failed,
                estimate_qps=None if k in runs.missing[name] else s.estimate,
            )
            for k, s in enumerate(runs.searches[name])
        ],
        probes=probes,
        price_per_hour=price,
        cost_per_million=price / (interval.mean * 3600.0) * 1e6 if price is not None and interval else None,
    )


def run_capacity(
    targets: Sequence[LoadTarget],
    config: SpeedConfig,
    *,
    seed: int = 0,
    progress: Callable[..., None] | None = None,
) -> CapacitySummary:
    """Search every model's goodput at ``config.capacity.slo`` and compare each pair.

    Parameters
    ----------
    targets : sequence of LoadTarget
        The endpoint models, with unique names; pairs are compared in this order.
    config : SpeedConfig
        ``capacity`` (SLOs, probes, search), ``confidence``, ``price_per_hour`` (one price for every
        model without its own ``capacity.price_per_hour``).
    seed : int
        Fixes the arrivals (the same for every model at a rate) and the searches' starts.
    progress : callable, optional
        ``progress(stage, done, total)`` after every interleaved step.

    Returns
    -------
    CapacitySummary
        ``comparisons``: each pair's ratio of goodputs over the searches both finished, "more" decided
        after Holm over the run's capacity comparisons.
    """
    began = time.perf_counter()
    cap = config.capacity
    assert cap.slo is not None, "SpeedConfig refuses scenario capacity without an SLO"
    runs = _Searches(targets, config, seed, progress)
    for k in range(cap.repeats):
        runs.search(k)
    models = [
        _model_result(t, runs, config.confidence, cap.price_per_hour.get(t.name, config.price_per_hour))
        for t in targets
    ]
    comparisons = _holm(compare_searches([(m.name, m.searches) for m in models], config.confidence), config.confidence)
    return CapacitySummary(
        slo=cap.slo.bounds(),
        settings=cap.model_dump(mode="json"),
        seed=seed,
        order=runs.order,
        models=models,
        comparisons=comparisons,
        elapsed_s=time.perf_counter() - began,
    )


def _holm(comparisons: list[ServerComparison], confidence: float) -> list[ServerComparison]:
    """``more`` kept only where Holm's adjustment over the capacity comparisons keeps it significant."""
    tested = [(i, p) for i, c in enumerate(comparisons) if (p := c.p_value) is not None]
    if not tested:
        return comparisons
    adjusted = holm_adjust([p for _, p in tested])
    out = list(comparisons)
    for (i, _), p in zip(tested, adjusted, strict=True):
        c = out[i]
        more = c.more if float(p) <= 1 - confidence else None
        out[i] = c.model_copy(update={"p_adjusted": float(p), "n_speed_tests": len(tested), "more": more})
    return out
