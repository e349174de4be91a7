"""The speed engine: fair, interleaved latency measurement of N models and their A/B speed ratios.

See ``docs/speed.md``, "How speed and memory are measured".
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import cast

import numpy as np

from headtohead.adapters.base import ModelAdapter
from headtohead.config.speed import SpeedConfig
from headtohead.data.base import Dataset
from headtohead.engines.energy import EnergyLedger, model_cost
from headtohead.engines.evaluate import batch_examples
from headtohead.engines.fresh_process import await_imports
from headtohead.engines.isolated import ModelRecipe
from headtohead.engines.server import run_server, server_wanted
from headtohead.engines.speed_inputs import TimedInputs, timed_inputs
from headtohead.engines.speed_model import StagedModel, stage
from headtohead.engines.speed_passes import memory_pass, pipeline_pass, time_window
from headtohead.engines.speed_rounds import SpeedProgress, run_scenario
from headtohead.engines.telemetry import host_load
from headtohead.engines.timing import Clock, torch_threads
from headtohead.results.speed import (
    ColdStart,
    MemoryStats,
    ModelSpeed,
    PipelineTiming,
    ScenarioRun,
    SpeedSummary,
    TimedScenario,
    TimeWindowResult,
)
from headtohead.stats.speed_family import adjust_speed_family, family_size

__all__ = ["measure_speed", "SpeedProgress", "ModelRecipe"]

_TIMED = ("offline", "single_stream")


def _inputs(
    dataset: Dataset, config: SpeedConfig, offline_bs: int, scenarios: Sequence[str], seed: int
) -> dict[str, TimedInputs]:
    """The timed inputs of each scenario (offline always: the pipeline, window and memory passes use them)."""
    wanted = {"offline": (offline_bs, config.num_batches), "single_stream": (1, config.single_stream_inputs)}
    return {s: timed_inputs(dataset, *wanted[s], seed=seed) for s in _TIMED if s == "offline" or s in scenarios}


def _record(
    m: StagedModel,
    load_times: Mapping[str, float],
    pipelines: Mapping[str, PipelineTiming],
    windows: Mapping[str, TimeWindowResult],
    memories: Mapping[str, tuple[MemoryStats, ColdStart | None]],
) -> ModelSpeed:
    memory, cold = memories.get(m.name, (None, None))
    return ModelSpeed(
        name=m.name,
        device=m.device,
        num_parameters=m.adapter.num_parameters(),
        parameter_bytes=m.adapter.parameter_bytes(),
        load_time_s=load_times.get(m.name),
        first_preprocess_s=m.first_preprocess_ns / 1e9,
        first_call_s=None if m.warm else m.first_call_ns / 1e9,
        cold_start=cold,
        offline=m.timings.get("offline"),
        single_stream=m.timings.get("single_stream"),
        pipeline=pipelines.get(m.name),
        time_window=windows.get(m.name),
        memory=memory,
        warnings=m.warnings,
    )


def _reference(m: StagedModel) -> tuple[float | None, float | None]:
    """headtohead's own single_stream p90 and offline throughput, shown beside LoadGen's cross-check."""
    single, offline = m.timings.get("single_stream"), m.timings.get("offline")
    return (single.per_batch.p90_s if single else None, offline.throughput_per_s if offline else None)


def measure_speed(
    adapters: Sequence[ModelAdapter],
    dataset: Dataset,
    config: SpeedConfig,
    *,
    batch_size: int,
    seed: int = 0,
    load_times: Mapping[str, float] | None = None,
    recipes: Mapping[str, ModelRecipe] | None = None,
    warm: Collection[str] = (),
    device_warmup_s: float | None = None,
    progress: SpeedProgress | None = None,
    clock: Clock | None = None,
    log_dir: Path | None = None,
    quality_s: float | None = None,
) -> SpeedSummary:
    """Measure the speed and memory of ``adapters`` on real batches of ``dataset``, fairly.

    The caller decides whether to measure at all (``config.enabled``); this always does.
    ``first_call_s`` is the first call of this pass (cold only if nothing ran the models
    before); the true cold start is measured in a fresh process for models with a recipe.

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
        Seeds the timed inputs and the round orders.
    load_times : mapping of str to float, optional
        Seconds each model took to load in this process (after the device context was created).
    recipes : mapping of str to ModelRecipe, optional
        How to load each model again: with ``config.memory``, models that have one get their
        memory and cold start measured in a fresh process holding only them; the others
        (sweep variants, test doubles) only the growth of their calls in this process.
    warm : collection of str, optional
        Models whose quality pass ran in this process: the pass's calls were their warm-up at the
        offline batch size, so neither that warm-up nor a first call is made again (their cold
        first call is the fresh process's, ``cold_start``; ``first_call_s`` is None).
    device_warmup_s : float, optional
        Seconds the caller spent creating the device context before any model loaded (recorded).
    progress : callable, optional
        ``progress(stage, done, total)`` after every round.
    clock : callable, optional
        Host nanosecond clock (``time.perf_counter_ns``); tests pass a fake one.
    log_dir : Path, optional
        Where MLPerf LoadGen's logs of the ``server`` scenario are kept (``<out>/loadgen``).
    quality_s : float, optional
        The quality pass's seconds (the models' eval times summed): the rounds' budget scales with
        it (``speed.budget``; :func:`headtohead.engines.speed_rounds.scenario_budget`). ``None``
        (no quality pass timed: ``h2h bench``): ``speed.max_seconds`` per scenario.

    Returns
    -------
    SpeedSummary

    Examples
    --------
    >>> summary = measure_speed([bert, distil], dataset, SpeedConfig(), batch_size=32)  # doctest: +SKIP
    >>> print("\\n".join(speed_verdict_lines(summary)))  # doctest: +SKIP
    offline (batch 32, 10 rounds; minimum rounds, iterations and seconds reached):
      distil is 1.93× faster than bert (95 % CI 1.88–1.98, p < 0.001, Holm p < 0.001 over 2 speed comparisons)
    """
    names = [a.name for a in adapters]
    if not names or len(set(names)) != len(names):
        raise ValueError(f"measure_speed needs models with unique names, got {names}")
    server_wanted(config)  # LoadGen missing: fail before anything is measured
    await_imports()  # the fresh processes' template imports on a core of its own: never beside a timed call
    clock = clock or time.perf_counter_ns
    ledger = EnergyLedger(enabled=config.energy)
    load_times = load_times or {}
    rng = np.random.default_rng(seed)
    began = clock()
    before = host_load()
    offline_bs = config.fixed_shape.batch_size if config.fixed_shape else batch_size
    seq_len = config.fixed_shape.sequence_length if config.fixed_shape else None
    timed = [cast(TimedScenario, s) for s in config.scenarios if s in _TIMED]
    inputs = _inputs(dataset, config, offline_bs, timed, seed)
    raw = {s: [batch_examples(dataset, idx) for idx in drawn.indices] for s, drawn in inputs.items()}
    models = [StagedModel(a, seq_len, warm=a.name in warm and config.fixed_shape is None) for a in adapters]
    runs: list[ScenarioRun] = []
    with torch_threads(config.num_threads) as (threads, interop_threads):
        for m in models:
            stage(m, raw, timed or ["offline"], clock)
        for scenario in timed:
            runs.append(
                run_scenario(
                    models,
                    scenario,
                    inputs[scenario].batch_size,
                    config,
                    clock=clock,
                    rng=rng,
                    seed=seed,
                    progress=progress,
                    ledger=ledger,
                    tests=family_size(len(models), config.scenarios),  # the family Holm adjusts the verdict over
                    quality_s=quality_s,
                    scenarios=len(timed),
                )
            )
        pipelines = (
            pipeline_pass(models, raw["offline"], config.pipeline_iterations, clock)
            if config.pipeline_iterations
            else {}
        )
        windows = (
            {
                m.name: time_window(m, raw["offline"], config.time_window_seconds, clock)
                for m in [models[i] for i in rng.permutation(len(models))]
            }
            if "time_window" in config.scenarios
            else {}
        )
        memories = (
            memory_pass(
                models,
                raw,
                sorted(timed or ["offline"], reverse=True),
                iterations=config.memory_iterations,
                recipes=recipes or {},
                threads=threads,
            )
            if config.memory
            else {}
        )
        loadgen = (
            run_server(
                adapters,
                dataset,
                config,
                seed=seed,
                log_dir=log_dir,
                ledger=ledger,
                offline_batch=offline_bs,
                reference={m.name: _reference(m) for m in models},
                progress=progress,
            )
            if server_wanted(config)
            else None
        )
    after = host_load()
    runs, loadgen = adjust_speed_family(runs, loadgen)  # "faster": Holm over pairs × scenarios (and Server)
    records = [_record(m, load_times, pipelines, windows, memories) for m in models]
    records = [r.model_copy(update={"cost": model_cost(ledger, r, loadgen, config.price_per_hour)}) for r in records]
    return SpeedSummary(
        settings=config.model_dump(mode="json"),
        batch_size=offline_bs,
        seed=seed,
        torch_threads=threads,
        torch_interop_threads=interop_threads,
        host_before=before,
        host_after=after,
        elapsed_s=(clock() - began) / 1e9,
        scenarios=runs,
        models=records,
        loadgen=loadgen,
        timed_indices={s: [b.tolist() for b in drawn.indices] for s, drawn in inputs.items()},
        timed_sizes={s: [b.tolist() for b in drawn.sizes] for s, drawn in inputs.items() if drawn.sizes is not None},
        size_unit=next(iter(inputs.values())).unit,
        device_warmup_s=device_warmup_s,
        warnings=list(loadgen.warnings) if loadgen else [],
    )
