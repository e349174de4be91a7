"""The speed engine's passes besides the timed rounds: pipeline stages, time window, memory and cold start.

* :func:`pipeline_pass` — end-to-end steps round-robin, preprocess / transfer / forward timed apart;
* :func:`time_window` — samples processed end to end in a fixed time;
* :func:`memory_pass` — each model's own memory and cold start in a fresh process
  (:mod:`headtohead.engines.isolated`) when the caller says how to load it again, else the
  inference growth in this process (:func:`headtohead.engines.memory.measure_memory`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from headtohead.engines.isolated import FreshProcessError, ModelRecipe, measure_isolated
from headtohead.engines.memory import measure_memory
from headtohead.engines.speed_model import StagedModel
from headtohead.engines.timing import Clock, time_stages
from headtohead.results.speed import ColdStart, MemoryStats, PipelineTiming, TimeWindowResult

__all__ = ["pipeline_pass", "time_window", "memory_pass"]


def pipeline_pass(
    models: list[StagedModel], batches: list[Any], iterations: int, clock: Clock
) -> dict[str, PipelineTiming]:
    """Round-robin end-to-end steps, timing preprocess / transfer / forward apart."""
    parts: dict[str, list[list[int]]] = {m.name: [] for m in models}
    for i in range(iterations):
        for m in models[i % len(models) :] + models[: i % len(models)]:
            stages = (m.prepare, m.adapter.to_device, m.adapter.forward)
            parts[m.name].append(time_stages(stages, batches[i % len(batches)], device=m.device, clock=clock))
    return {
        name: PipelineTiming(
            batch_size=len(batches[0]),
            preprocess_ns=[p[0] for p in steps],
            transfer_ns=[p[1] for p in steps],
            forward_ns=[p[2] for p in steps],
            end_to_end_ns=[sum(p) for p in steps],
        )
        for name, steps in parts.items()
    }


def time_window(model: StagedModel, batches: list[Any], seconds: float, clock: Clock) -> TimeWindowResult:
    """Run end-to-end steps until ``seconds`` have passed; count the samples processed."""
    window_ns = seconds * 1e9
    began = clock()
    done = samples = 0
    while clock() - began < window_ns:
        examples = batches[done % len(batches)]
        model.step(examples)
        done += 1
        samples += len(examples)
    return TimeWindowResult(
        window_s=seconds, elapsed_s=(clock() - began) / 1e9, batch_size=len(batches[0]), batches=done, samples=samples
    )


def memory_pass(
    models: Sequence[StagedModel],
    raw: Mapping[str, list[Any]],
    scenarios: Sequence[str],
    *,
    iterations: int,
    recipes: Mapping[str, ModelRecipe],
    threads: int | None,
) -> dict[str, tuple[MemoryStats, ColdStart | None]]:
    """Every model's memory (and cold start where it can be loaded again), one model at a time.

    Parameters
    ----------
    models : sequence of StagedModel
    raw : mapping of scenario to batches of raw examples
        The timed inputs (``offline`` always: the shared-process fallback runs those).
    scenarios : sequence of str
        The timed scenarios, single_stream first when timed: its first input is the cold start's.
    iterations : int
        ``speed.memory_iterations``.
    recipes : mapping of model name to ModelRecipe
        Models with a recipe are measured in a fresh process; the others here.
    threads : int or None
        torch intra-op threads of the timed rounds (the fresh process uses the same).

    Returns
    -------
    dict
        ``{name: (MemoryStats, ColdStart or None)}``.
    """
    out: dict[str, tuple[MemoryStats, ColdStart | None]] = {}
    for m in models:
        recipe = recipes.get(m.name)
        if recipe is not None:
            try:
                cold, memory = measure_isolated(
                    recipe,
                    {s: raw[s] for s in scenarios},
                    iterations=iterations,
                    sequence_length=m.seq_len,
                    threads=threads,
                )
                out[m.name] = (memory, cold)
                continue
            except FreshProcessError as exc:
                m.warnings.append(
                    f"model '{m.name}': memory and cold start could not be measured in a fresh "
                    f"process ({exc}); the memory shown was measured beside the other models"
                )
        out[m.name] = (
            measure_memory(
                functools.partial(_cycled_step, m, raw["offline"]),
                m.device,
                iterations=iterations,
                weights_bytes=m.adapter.parameter_bytes(),
            ),
            None,
        )
    return out


def _cycled_step(model: StagedModel, batches: Sequence[Any], i: int) -> None:
    """Step ``i`` of a memory pass: the batches in turn."""
    model.step(batches[i % len(batches)])
