"""The Server scenario: the highest Poisson arrival rate each model holds with p99 under a bound.

See ``docs/performance.md``, "What runs".
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from headtohead.adapters.base import ModelAdapter
from headtohead.config.speed import SpeedConfig
from headtohead.data.base import Dataset
from headtohead.engines.energy import EnergyLedger
from headtohead.engines.evaluate import batch_examples
from headtohead.engines.loadgen import LoadGenTest, ServedModel, loadgen_version, require_loadgen, run_loadgen
from headtohead.engines.server_search import RateSearch, start_rate
from headtohead.errors import ConfigError
from headtohead.results.server import (
    LoadGenCrosscheck,
    LoadGenSummary,
    ServerModelResult,
    ServerSearch,
    ServerTrial,
)
from headtohead.stats.server import capacity_interval, compare_searches, resolution_factor

__all__ = ["run_server", "server_wanted", "capacity_estimate", "TrialRunner"]

#: ``runner(model, test, batcher=(max_batch, max_wait_s), log_dir=...) -> (LoadGenRun, batcher)``;
#: :func:`~headtohead.engines.loadgen.run_loadgen`, or a fake in tests.
TrialRunner = Callable[..., tuple[Any, ...]]

_LIGHT_LOAD = 0.5  # a trial whose batcher was busy less than half the time was lightly loaded


def server_wanted(config: SpeedConfig) -> bool:
    """Whether the speed section asks for LoadGen (server scenario or cross-check); raises if it is missing."""
    wanted = "server" in config.scenarios or config.loadgen_crosscheck
    if wanted:
        require_loadgen()
    return wanted


def capacity_estimate(
    model: ServedModel, batch: int, *, calls: int = 5, warmup: int = 2, clock: Callable[[], float] = time.perf_counter
) -> float:
    """Median seconds of one served call of ``batch`` requests (warm), the batcher's service time."""
    indices = [i % len(model.examples) for i in range(batch)]
    for _ in range(warmup):
        model.infer(indices)
    times = []
    for _ in range(calls):
        began = clock()
        model.infer(indices)
        times.append(clock() - began)
    return statistics.median(times)


def _library(dataset: Dataset, size: int, seed: int) -> list[Any]:
    count = min(size, len(dataset))
    indices = np.sort(np.random.default_rng(seed).permutation(len(dataset))[:count])
    return list(batch_examples(dataset, indices))


def _seeds(seed: int, search: int) -> tuple[int, int, int]:
    """LoadGen's (qsl, sample index, schedule) seeds: the same for every model; the schedule per search."""
    return seed, seed + 1, 1_000_003 * (seed + 1) + search


class _Searcher:
    """Runs the trials of every model, interleaved, and keeps their records."""

    def __init__(
        self,
        models: Sequence[ServedModel],
        config: SpeedConfig,
        *,
        seed: int,
        log_dir: Path | None,
        ledger: EnergyLedger | None,
        runner: TrialRunner,
        progress: Callable[[str, int, int], None] | None,
    ) -> None:
        self.models, self.config, self.server = models, config, config.server
        self.seed, self.log_dir, self.ledger, self.runner, self.progress = seed, log_dir, ledger, runner, progress
        self.trials: dict[str, list[ServerTrial]] = {m.name: [] for m in models}
        self.searches: dict[str, list[RateSearch]] = {m.name: [] for m in models}
        self.order: list[list[str]] = []

    def trial(self, model: ServedModel, search: RateSearch, k: int, step: int) -> ServerTrial:
        assert search.next_qps is not None, "a finished search runs no more trials"
        rate = float(search.next_qps)
        cfg, bound = self.server, self.config.latency_bound_ms
        test = LoadGenTest(
            "Server",
            cfg.trial_seconds,
            cfg.min_queries,
            _seeds(self.seed, k),
            target_qps=rate,
            latency_bound_ms=bound,
            keep_trace=cfg.keep_trace,
        )
        folder = self.log_dir / model.name / f"server-{k}-{step:02d}-{rate:.5g}qps" if self.log_dir else None
        token = self.ledger.begin(model.device) if self.ledger is not None else None
        began = time.perf_counter()
        run, queue = self.runner(model, test, batcher=(cfg.max_batch, cfg.max_wait_ms / 1e3), log_dir=folder)
        wall = time.perf_counter() - began
        energy = (
            self.ledger.end(token, model.device, model.name, "server", run.query_count)
            if self.ledger is not None
            else None
        )
        p50, p99 = run.percentile_s("50.00"), run.percentile_s("99.00")
        record = ServerTrial(
            search=k,
            step=step,
            phase=search.phase,
            target_qps=rate,
            schedule_seed=test.seeds[2],
            held=run.valid,
            p50_s=p50,
            p99_s=p99,
            batches=queue.batches,
            mean_batch=queue.requests / queue.batches if queue.batches else None,
            utilization=min(1.0, queue.busy_s / wall) if wall > 0 else None,
            energy_j=energy,
            loadgen=run,
        )
        light = record.utilization is not None and record.utilization < _LIGHT_LOAD
        search.record(rate, run.valid, light_load_miss=light and p50 is not None and p50 * 1e3 > bound)
        self.trials[model.name].append(record)
        return record

    def search(self, k: int, base_qps: float) -> None:
        """Search ``k``: every model from the same random start, trials interleaved."""
        cfg = self.server
        u = float(np.random.default_rng([self.seed, k]).random())
        states = {
            m.name: RateSearch(start_rate(base_qps, cfg.growth, u), cfg.growth, cfg.precision, cfg.min_qps, cfg.max_qps)
            for m in self.models
        }
        for name, state in states.items():
            self.searches[name].append(state)
        step = 0
        while active := [m for m in self.models if not states[m.name].done]:
            shift = (step + k) % len(active)
            order = active[shift:] + active[:shift]
            self.order.append([m.name for m in order])
            for model in order:
                self.trial(model, states[model.name], k, step)
            step += 1
            if self.progress is not None:  # (model, search) pairs finished, of all there will be
                finished = k * len(self.models) + sum(states[m.name].done for m in self.models)
                self.progress("speed server", finished, self.server.repeats * len(self.models))


def _unreachable(searcher: _Searcher, bound_ms: float) -> ConfigError:
    lowest = min((t for trials in searcher.trials.values() for t in trials), key=lambda t: t.target_qps)
    name = next(n for n, trials in searcher.trials.items() if lowest in trials)
    p99 = f"{lowest.p99_s * 1e3:.1f} ms" if lowest.p99_s is not None else "not reported"
    if lowest.p99_s is not None and lowest.p99_s * 1e3 <= bound_ms:
        # p99 was within the bound: LoadGen refused the trial for another reason (too few queries
        # for its early-stopping estimate of the percentile, a run too short): say that reason
        reason = (lowest.loadgen.invalid_reason or "no reason given").strip().rstrip(".")
        return ConfigError(
            f"speed.server: at the lowest rate tried, {lowest.target_qps:.3g} QPS, {name}'s p99 was "
            f"{p99}, within speed.latency_bound_ms = {bound_ms:g}, but LoadGen judged the trial "
            f"INVALID ({reason}); raise speed.server.min_queries or speed.server.trial_seconds"
        )
    return ConfigError(
        f"speed.latency_bound_ms = {bound_ms:g} cannot be met by any model: at the lowest rate tried, "
        f"{lowest.target_qps:.3g} QPS, {name}'s p99 was {p99} (LoadGen: INVALID); raise "
        f"speed.latency_bound_ms, or lower speed.server.max_wait_ms / max_batch"
    )


def _model_result(model: ServedModel, capacity: float, searcher: _Searcher, confidence: float) -> ServerModelResult:
    states = searcher.searches[model.name]
    trials = searcher.trials[model.name]
    estimates = [s.estimate for s in states if s.estimate is not None]
    resolution = float(np.mean([resolution_factor(s.held, s.failed) for s in states]))
    interval = capacity_interval(estimates, confidence, resolution=resolution) if estimates else None
    held = [h for s in states if (h := s.held) is not None]
    energies = [e for t in trials if (e := t.energy_j) is not None]
    counter = searcher.ledger.probe(model.device).counter if searcher.ledger is not None else None
    return ServerModelResult(
        name=model.name,
        device=model.device,
        capacity_estimate_qps=capacity,
        max_qps=interval.mean if interval else None,
        ci_low=interval.low if interval else None,
        ci_high=interval.high if interval else None,
        confidence=confidence,
        held_qps=min(held) if held and len(held) == len(states) else None,
        at_cap=any(s.at_cap for s in states),
        lowest_tried=None if estimates else min(trials, key=lambda t: t.target_qps),
        searches=[
            ServerSearch(search=k, held_qps=s.held, failed_qps=s.failed, estimate_qps=s.estimate)
            for k, s in enumerate(states)
        ],
        trials=trials,
        preprocessed_ahead=model.preprocessed_ahead,
        energy_j=sum(energies) if energies and len(energies) == len(trials) else None,
        energy_source=counter.source if counter is not None else None,
        predictions=sum(t.loadgen.query_count for t in trials),
    )


def _crosscheck(
    model: ServedModel,
    config: SpeedConfig,
    *,
    seed: int,
    log_dir: Path | None,
    offline_batch: int,
    reference: tuple[float | None, float | None],
    runner: TrialRunner,
) -> LoadGenCrosscheck:
    """LoadGen's SingleStream (batch 1, one query at a time) and Offline (every sample at once) runs."""
    cfg = config.server
    one = capacity_estimate(model, 1)
    full = offline_batch / capacity_estimate(model, offline_batch)
    folder = (lambda name: log_dir / model.name / name) if log_dir is not None else (lambda name: None)
    single, _ = runner(
        model,
        LoadGenTest("SingleStream", cfg.trial_seconds, cfg.min_queries, _seeds(seed, 0), expected_latency_s=one),
        batcher=(1, 0.0),
        log_dir=folder("single_stream"),
    )
    # Offline issues expected_qps × min_duration samples at once; aim high so the run lasts min_duration.
    expected = 1.5 * max(full, reference[1] or 0.0)
    offline, _ = runner(
        model,
        LoadGenTest("Offline", cfg.trial_seconds, cfg.min_queries, _seeds(seed, 0), expected_qps=expected),
        batcher=(offline_batch, 0.0),
        log_dir=folder("offline"),
    )
    return LoadGenCrosscheck(
        name=model.name,
        single_stream=single,
        offline=offline,
        h2h_single_stream_p90_s=reference[0],
        h2h_offline_samples_per_s=reference[1],
    )


def run_server(
    adapters: Sequence[ModelAdapter],
    dataset: Dataset,
    config: SpeedConfig,
    *,
    seed: int = 0,
    log_dir: Path | None = None,
    ledger: EnergyLedger | None = None,
    offline_batch: int = 32,
    reference: Mapping[str, tuple[float | None, float | None]] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    runner: TrialRunner = run_loadgen,
) -> LoadGenSummary:
    """Run the Server scenario (``"server"`` in ``config.scenarios``) and/or LoadGen's cross-check.

    Parameters
    ----------
    adapters : sequence of ModelAdapter
        Loaded models with unique names; pairs are compared in this order.
    dataset : Dataset
        The evaluation set the query sample library is drawn from.
    config : SpeedConfig
        ``latency_bound_ms``, ``server`` (batcher and search), ``loadgen_crosscheck``, ``confidence``.
    seed : int
        Fixes LoadGen's seeds (the same for every model) and the searches' start points.
    log_dir : Path, optional
        LoadGen's logs go to ``log_dir/<model>/<trial>/``; ``None``: not kept.
    ledger : EnergyLedger, optional
        Energy counters read around every trial (scenario ``"server"``).
    offline_batch : int
        Batch size of the Offline cross-check (headtohead's offline batch size).
    reference : mapping, optional
        Per model, headtohead's own (single_stream p90 s, offline samples/s), shown beside LoadGen's.
    progress : callable, optional
        ``progress(stage, done, total)`` after every interleaved step.
    runner : callable
        Runs one LoadGen test (tests pass a fake).

    Returns
    -------
    LoadGenSummary

    Raises
    ------
    ConfigError
        LoadGen is not installed, or no model holds any rate down to ``server.min_qps``.
    """
    if runner is run_loadgen:
        require_loadgen()
    began = time.perf_counter()
    cfg = config.server
    models = [ServedModel(a, _library(dataset, cfg.samples, seed)) for a in adapters]
    for model in models:
        model.load(range(len(model.examples)))
    summary = LoadGenSummary(
        loadgen_version=loadgen_version(),
        latency_bound_ms=config.latency_bound_ms,
        settings=cfg.model_dump(mode="json"),
        log_dir=str(log_dir) if log_dir else None,
        seed=seed,
    )
    results: list[ServerModelResult] = []
    if "server" in config.scenarios:
        capacity = {m.name: cfg.max_batch / capacity_estimate(m, cfg.max_batch) for m in models}
        base = cfg.start_qps or 0.5 * min(capacity.values())
        searcher = _Searcher(
            models, config, seed=seed, log_dir=log_dir, ledger=ledger, runner=runner, progress=progress
        )
        for k in range(cfg.repeats):
            searcher.search(k, base)
            if k == 0 and all(s[0].held is None for s in searcher.searches.values()):
                raise _unreachable(searcher, config.latency_bound_ms)
        results = [_model_result(m, capacity[m.name], searcher, config.confidence) for m in models]
        summary = summary.model_copy(
            update={
                "models": results,
                "order": searcher.order,
                "comparisons": compare_searches([(r.name, r.searches) for r in results], config.confidence),
            }
        )
    if config.loadgen_crosscheck:
        reference = reference or {}
        checks = [
            _crosscheck(
                m,
                config,
                seed=seed,
                log_dir=log_dir,
                offline_batch=offline_batch,
                reference=reference.get(m.name, (None, None)),
                runner=runner,
            )
            for m in models
        ]
        summary = summary.model_copy(update={"crosschecks": checks})
    warnings = [
        f"server: model '{r.name}' held no rate down to {r.lowest_tried.target_qps:.3g} QPS under "
        f"p99 ≤ {config.latency_bound_ms:g} ms"
        for r in results
        if r.max_qps is None and r.lowest_tried
    ]
    warnings += [
        f"server: model '{r.name}' held server.max_qps ({cfg.max_qps:g} QPS): its max_qps is a lower bound; "
        f"raise server.max_qps"
        for r in results
        if r.at_cap
    ]
    return summary.model_copy(update={"elapsed_s": time.perf_counter() - began, "warnings": warnings})
