"""The speed engine: fair, interleaved latency measurement of N models and their A/B speed ratios.

1. **Stage** — every model gets the *same* real batches (:func:`draw_batches`), preprocesses
   them once (the first call timed: cold preprocessing), moves them to its device and makes
   its first forward call (timed: the cold first-call cost).
2. **Rounds** per scenario (``offline`` at the batch size, ``single_stream`` at batch 1):
   warm-up, then rounds in which each model runs one block of forward calls (whole passes
   over the batches) in an order rotated or shuffled each round, so drift of the machine
   hits every model alike; optionally more rounds until every pairwise ratio CI is within
   a target or a budget runs out. GPU telemetry is sampled meanwhile.
3. **Pipeline** (preprocess / transfer / forward apart), **time window** (samples end to end
   in a fixed time) and **memory** (a separate pass: RSS sampler, CUDA peaks).

Statistics come from :mod:`headtohead.stats.speed`, records from :mod:`headtohead.results.speed`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from headtohead.adapters.base import ModelAdapter
from headtohead.config.speed import SpeedConfig
from headtohead.data.base import Dataset
from headtohead.runtime.devices import get_backend, is_cuda
from headtohead.engines.energy import EnergyLedger, model_cost
from headtohead.engines.evaluate import batch_examples
from headtohead.engines.memory import measure_memory
from headtohead.engines.server import run_server, server_wanted
from headtohead.engines.speed_inputs import draw_batches, fix_sequence_length
from headtohead.engines.telemetry import TelemetrySampler, host_load
from headtohead.engines.timing import Clock, HostTimer, make_timer, run_timed, time_stages, torch_threads
from headtohead.errors import ConfigError
from headtohead.results.speed import (
    MemoryStats,
    ModelSpeed,
    PipelineTiming,
    ScenarioRun,
    ScenarioTiming,
    SpeedComparison,
    SpeedSummary,
    TelemetryStats,
    TimeWindowResult,
)
from headtohead.stats.speed import SpeedRatio, round_medians, speed_ratio

__all__ = ["measure_speed", "SpeedProgress"]

#: ``progress(stage, done, total)``, e.g. ``("speed offline", 3, 10)``; ``total`` grows with adaptive rounds.
SpeedProgress = Callable[[str, int, int], None]

_TIMED = {"offline", "single_stream"}


@dataclass
class _Model:
    """One adapter and what the engine has staged and measured for it."""

    adapter: ModelAdapter
    seq_len: int | None
    warnings: list[str] = field(default_factory=list)
    staged: dict[str, list[Any]] = field(default_factory=dict)
    seq_len_applied: bool = False
    first_preprocess_ns: int = 0
    first_call_ns: int = 0
    timings: dict[str, ScenarioTiming] = field(default_factory=dict)
    intervals: list[tuple[int, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        limit = getattr(self.adapter, "max_length", None)
        if self.seq_len is not None and isinstance(limit, int) and self.seq_len > limit:
            raise ConfigError(f"speed.fixed_shape.sequence_length is {self.seq_len} but model '{self.name}' reads at "
                              f"most {limit} tokens (its max_length); lower sequence_length or raise max_length")

    @property
    def name(self) -> str:
        return self.adapter.name

    @property
    def device(self) -> str:
        return str(self.adapter.device)

    def prepare(self, examples: Any) -> Any:
        """Preprocess on the CPU, then pad/truncate to the fixed sequence length if one is set."""
        inputs = self.adapter.preprocess(examples)
        if self.seq_len is None:
            return inputs
        pad_id = getattr(getattr(self.adapter, "tokenizer", None), "pad_token_id", None)
        inputs, applied = fix_sequence_length(inputs, self.seq_len, pad_id=0 if pad_id is None else int(pad_id))
        self.seq_len_applied = applied
        return inputs

    def step(self, examples: Any) -> None:
        """One end-to-end inference step, synchronised."""
        self.adapter.forward(self.adapter.to_device(self.prepare(examples)))
        _sync(self.device)


def _sync(device: str) -> None:
    if device != "cpu":
        get_backend().synchronize(device)


def _stage(model: _Model, raw: Mapping[str, list[Any]], scenarios: Sequence[str], clock: Clock) -> None:
    """Preprocess every batch once and move it to the device; time the cold first calls."""
    first = True
    for scenario in scenarios:
        staged = []
        for examples in raw[scenario]:
            began = clock()
            inputs = model.prepare(examples)
            if first:
                model.first_preprocess_ns = clock() - began
            staged.append(model.adapter.to_device(inputs))
            if first:
                timer = HostTimer(model.device, clock=clock)
                token = timer.start()
                model.adapter.forward(staged[0])
                model.first_call_ns = timer.stop(token)
                first = False
        model.staged[scenario] = staged
    if model.seq_len is not None and not model.seq_len_applied:
        model.warnings.append(f"fixed_shape.sequence_length is ignored for model '{model.name}': its inputs "
                              f"are not token ids (only the batch size is fixed)")


def _round_order(models: list[_Model], index: int, how: str, rng: np.random.Generator) -> list[_Model]:
    if how == "random":
        return [models[i] for i in rng.permutation(len(models))]
    shift = index % len(models)
    return models[shift:] + models[:shift]


def _compare(models: list[_Model], rounds: Mapping[str, list[list[int]]], scenario: str, config: SpeedConfig,
             seed: int) -> list[tuple[SpeedRatio, SpeedComparison]]:
    out = []
    medians = {m.name: round_medians(rounds[m.name]) for m in models}
    for i, a in enumerate(models):
        for j in range(i + 1, len(models)):
            b = models[j]
            ratio = speed_ratio(medians[a.name], medians[b.name], confidence=config.confidence,
                                n_resamples=config.n_resamples, seed=seed + 1000 * i + j)
            faster = {"a": a.name, "b": b.name, None: None}[ratio.faster]
            out.append((ratio, SpeedComparison(
                scenario=scenario, model_a=a.name, model_b=b.name, ratio=ratio.ratio, ci_low=ratio.low,
                ci_high=ratio.high, confidence=ratio.confidence, n_rounds=ratio.n_rounds, faster=faster)))
    return out


def _run_scenario(models: list[_Model], scenario: str, batch_size: int, config: SpeedConfig, *, clock: Clock,
                  rng: np.random.Generator, seed: int, progress: SpeedProgress | None,
                  warnings: list[str], ledger: EnergyLedger) -> ScenarioRun:
    """Warm up, then time interleaved rounds of forward calls; fill ``model.timings[scenario]``."""
    pool = len(models[0].staged[scenario])
    per_block = max(1, math.ceil(config.min_iterations / config.rounds))
    block_ns = config.min_seconds * 1e9 / config.rounds
    timers = {m.name: make_timer(m.device, clock=clock, sync_each=scenario == "single_stream") for m in models}
    warmup: dict[str, tuple[int, float]] = {}
    for m in models:
        began = clock()
        done = 0
        if config.warmup_iterations or config.warmup_seconds:
            done = len(run_timed(timers[m.name], m.adapter.forward, m.staged[scenario],
                                 min_iterations=config.warmup_iterations, min_ns=config.warmup_seconds * 1e9,
                                 clock=clock))
        warmup[m.name] = (done, (clock() - began) / 1e9)
    rounds: dict[str, list[list[int]]] = {m.name: [] for m in models}
    orders: list[list[str]] = []
    comparisons: list[tuple[SpeedRatio, SpeedComparison]] = []
    started = clock()
    while True:
        order = _round_order(models, len(orders), config.order, rng)
        for m in order:
            began, energy = clock(), ledger.begin(m.device)
            rounds[m.name].append(run_timed(timers[m.name], m.adapter.forward, m.staged[scenario],
                                            min_iterations=per_block, min_ns=block_ns, multiple_of=pool,
                                            clock=clock))
            ledger.end(energy, m.device, m.name, scenario, len(rounds[m.name][-1]) * batch_size)
            m.intervals.append((began, clock()))
        orders.append([m.name for m in order])
        if progress is not None:
            progress(f"speed {scenario}", len(orders), max(config.rounds, len(orders)))
        if len(orders) < config.rounds:
            continue
        if len(models) > 1:
            comparisons = _compare(models, rounds, scenario, config, seed)
        if config.target_ci_halfwidth is None or not comparisons:
            stop_reason = "minimums_met"
            break
        if all(r.halfwidth <= config.target_ci_halfwidth for r, _ in comparisons):
            stop_reason = "target_ci_reached"
            break
        if clock() - started >= config.max_seconds * 1e9:
            widest = max(r.halfwidth for r, _ in comparisons)
            warnings.append(f"{scenario}: the time budget (max_seconds={config.max_seconds:g}) ran out before every "
                            f"ratio CI was within ±{config.target_ci_halfwidth:.1%} (widest ±{widest:.1%}); "
                            f"raise max_seconds or loosen target_ci_halfwidth")
            stop_reason = "time_budget"
            break
    elapsed_s = (clock() - started) / 1e9
    for m in models:
        m.timings[scenario] = ScenarioTiming(
            scenario=scenario, batch_size=batch_size, sequence_length=m.seq_len if m.seq_len_applied else None,
            timer=timers[m.name].name, warmup_iterations=warmup[m.name][0], warmup_s=warmup[m.name][1],
            rounds_ns=rounds[m.name])
    return ScenarioRun(scenario=scenario, batch_size=batch_size, rounds=len(orders),
                       iterations_per_block=math.ceil(per_block / pool) * pool, stop_reason=stop_reason,
                       elapsed_s=elapsed_s, round_orders=orders, comparisons=[c for _, c in comparisons])


def _pipeline_pass(models: list[_Model], batches: list[Any], iterations: int,
                   clock: Clock) -> dict[str, PipelineTiming]:
    """Round-robin end-to-end steps, timing preprocess / transfer / forward apart."""
    parts: dict[str, list[list[int]]] = {m.name: [] for m in models}
    for i in range(iterations):
        for m in models[i % len(models):] + models[:i % len(models)]:
            stages = (m.prepare, m.adapter.to_device, m.adapter.forward)
            parts[m.name].append(time_stages(stages, batches[i % len(batches)], device=m.device, clock=clock))
    return {name: PipelineTiming(batch_size=len(batches[0]), preprocess_ns=[p[0] for p in steps],
                                 transfer_ns=[p[1] for p in steps], forward_ns=[p[2] for p in steps],
                                 end_to_end_ns=[sum(p) for p in steps]) for name, steps in parts.items()}


def _time_window(model: _Model, batches: list[Any], seconds: float, clock: Clock) -> TimeWindowResult:
    """Run end-to-end steps until ``seconds`` have passed; count the samples processed."""
    window_ns = seconds * 1e9
    began = clock()
    done = samples = 0
    while clock() - began < window_ns:
        examples = batches[done % len(batches)]
        model.step(examples)
        done += 1
        samples += len(examples)
    return TimeWindowResult(window_s=seconds, elapsed_s=(clock() - began) / 1e9, batch_size=len(batches[0]),
                            batches=done, samples=samples)


def _record(m: _Model, config: SpeedConfig, sampler: TelemetrySampler | None, load_times: Mapping[str, float],
            pipelines: Mapping[str, PipelineTiming], windows: Mapping[str, TimeWindowResult],
            memories: Mapping[str, MemoryStats]) -> ModelSpeed:
    telemetry = None
    if config.telemetry:  # all-null without a GPU: "not measurable here", unlike None for "not asked"
        telemetry = sampler.summarise(m.intervals) if sampler is not None else TelemetryStats()
    return ModelSpeed(
        name=m.name, device=m.device, num_parameters=m.adapter.num_parameters(),
        parameter_bytes=m.adapter.parameter_bytes(), load_time_s=load_times.get(m.name),
        first_preprocess_s=m.first_preprocess_ns / 1e9, first_call_s=m.first_call_ns / 1e9,
        offline=m.timings.get("offline"), single_stream=m.timings.get("single_stream"),
        pipeline=pipelines.get(m.name), time_window=windows.get(m.name), memory=memories.get(m.name),
        telemetry=telemetry, warnings=m.warnings)


def _reference(m: _Model) -> tuple[float | None, float | None]:
    """headtohead's own single_stream p90 and offline throughput, shown beside LoadGen's cross-check."""
    single, offline = m.timings.get("single_stream"), m.timings.get("offline")
    return (single.per_batch.p90_s if single else None, offline.throughput_per_s if offline else None)


def measure_speed(adapters: Sequence[ModelAdapter], dataset: Dataset, config: SpeedConfig, *, batch_size: int,
                  seed: int = 0, load_times: Mapping[str, float] | None = None,
                  progress: SpeedProgress | None = None, clock: Clock | None = None,
                  log_dir: Path | None = None) -> SpeedSummary:
    """Measure the speed and memory of ``adapters`` on real batches of ``dataset``, fairly.

    The caller decides whether to measure at all (``config.enabled``); this always does.
    Run it before anything else calls the models if ``first_call_s`` should be the cold cost.

    Parameters
    ----------
    adapters : sequence of ModelAdapter
        Loaded models (unique names). Pairs are compared in this order: A is the earlier.
    dataset : Dataset
        Where the batches come from.
    config : SpeedConfig
        The ``speed:`` section.
    batch_size : int
        Offline batch size (``eval.batch_size``), unless ``config.fixed_shape`` sets one.
    seed : int
        Seeds shuffled round orders and the bootstrap.
    load_times : mapping of str to float, optional
        Seconds each model took to load, recorded as its cold load cost.
    progress : callable, optional
        ``progress(stage, done, total)`` after every round.
    clock : callable, optional
        Host nanosecond clock (``time.perf_counter_ns``); tests pass a fake one.
    log_dir : Path, optional
        Where MLPerf LoadGen's logs of the ``server`` scenario are kept (``<out>/loadgen``).

    Returns
    -------
    SpeedSummary

    Examples
    --------
    >>> summary = measure_speed([bert, distil], dataset, SpeedConfig(), batch_size=32)  # doctest: +SKIP
    >>> print("\\n".join(speed_verdict_lines(summary)))  # doctest: +SKIP
    offline (batch 32, 10 rounds; minimum rounds, iterations and seconds reached):
      distil is 1.93× faster than bert (95 % CI 1.88–1.98)
    """
    names = [a.name for a in adapters]
    if not names or len(set(names)) != len(names):
        raise ValueError(f"measure_speed needs models with unique names, got {names}")
    server_wanted(config)  # LoadGen missing: fail before anything is measured
    clock = clock or time.perf_counter_ns
    ledger = EnergyLedger(enabled=config.energy)
    load_times = load_times or {}
    rng = np.random.default_rng(seed)
    began = clock()
    warnings: list[str] = []
    before = host_load()
    offline_bs = config.fixed_shape.batch_size if config.fixed_shape else batch_size
    seq_len = config.fixed_shape.sequence_length if config.fixed_shape else None
    sizes = {"offline": offline_bs, "single_stream": 1}
    timed = [s for s in config.scenarios if s in _TIMED]
    raw = {s: [batch_examples(dataset, idx) for idx in draw_batches(dataset, sizes[s], config.num_batches)]
           for s in {"offline", *timed}}
    models = [_Model(a, seq_len) for a in adapters]
    runs: list[ScenarioRun] = []
    with torch_threads(config.num_threads) as (threads, interop_threads):
        for m in models:
            _stage(m, raw, timed or ["offline"], clock)
        samplers = {d: TelemetrySampler(d, clock=clock) for d in {m.device for m in models}
                    if config.telemetry and is_cuda(d)}
        for sampler in samplers.values():
            sampler.start()
        try:
            for scenario in timed:
                runs.append(_run_scenario(models, scenario, sizes[scenario], config, clock=clock, rng=rng, seed=seed,
                                          progress=progress, warnings=warnings, ledger=ledger))
        finally:
            for sampler in samplers.values():
                sampler.stop()
        pipelines = _pipeline_pass(models, raw["offline"], config.pipeline_iterations, clock) \
            if config.pipeline_iterations else {}
        windows = {m.name: _time_window(m, raw["offline"], config.time_window_seconds, clock)
                   for m in [models[i] for i in rng.permutation(len(models))]} \
            if "time_window" in config.scenarios else {}
        memories = {m.name: measure_memory(lambda i, m=m: m.step(raw["offline"][i % len(raw["offline"])]), m.device,
                                           iterations=config.memory_iterations) for m in models} \
            if config.memory else {}
        loadgen = run_server(adapters, dataset, config, seed=seed, log_dir=log_dir, ledger=ledger,
                             offline_batch=offline_bs, reference={m.name: _reference(m) for m in models},
                             progress=progress) if server_wanted(config) else None
    after = host_load()
    records = [_record(m, config, samplers.get(m.device), load_times, pipelines, windows, memories) for m in models]
    records = [r.model_copy(update={"cost": model_cost(ledger, r, loadgen, config.price_per_hour)}) for r in records]
    return SpeedSummary(
        settings=config.model_dump(mode="json"), batch_size=offline_bs, seed=seed, torch_threads=threads,
        torch_interop_threads=interop_threads, host_before=before, host_after=after,
        elapsed_s=(clock() - began) / 1e9, scenarios=runs, models=records, loadgen=loadgen,
        warnings=warnings + (loadgen.warnings if loadgen else []))
