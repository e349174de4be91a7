"""A model's own memory and its cold start, measured in a fresh process that holds only it.

See ``docs/speed.md``, "Each model's own memory and cold start: a fresh process per model".
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from headtohead.adapters import LoadContext, ModelAdapter, adapter_class, create_adapter
from headtohead.config.schema import ModelConfig
from headtohead.engines.fresh_process import (
    FreshProcessError,
    can_fork,
    import_ahead,
    imported_modules,
    run_in_fresh_process,
)
from headtohead.engines.memory import MIB, MemoryWindow, WindowPeaks
from headtohead.engines.seeding import seed_everything
from headtohead.engines.speed_inputs import prepare
from headtohead.engines.timing import Clock
from headtohead.results.memory import ColdStart, MemoryStats, ScenarioMemory
from headtohead.results.speed import TimedScenario
from headtohead.runtime.devices import get_backend

__all__ = [
    "ModelRecipe",
    "FreshProcessError",
    "measure_fresh",
    "measure_isolated",
    "imported_modules",
    "prepare_fresh_processes",
]


@dataclass(frozen=True)
class ModelRecipe:
    """How to load a model again in another process: its config and the run's load context (both picklable)."""

    config: ModelConfig
    context: LoadContext

    @property
    def name(self) -> str:
        return self.config.name

    def load(self) -> ModelAdapter:
        """Load the model as a run does: the run's random state reset first."""
        seed_everything(self.context.seed)
        return create_adapter(self.config, self.context)


def prepare_fresh_processes(configs: Sequence[ModelConfig], device: str) -> None:
    """Start importing, in the template of the fresh processes, what these models will load with.

    Called by a run before it loads its models, when their memory and cold start will be
    measured in fresh processes forked from the template (:func:`can_fork`; ``device``
    ``"auto"`` counts as a CPU until the run resolves it): the template's imports (torch, the
    model library, seconds) then overlap the run's setup and loading instead of adding to the
    speed phase. :func:`~headtohead.engines.fresh_process.await_imports` (before the first quality
    pass and the speed phase's rounds) waits for them.
    Each call also sends what this process has imported by then (a run calls it again once its
    setup has imported the data and metric libraries); the template skips what it holds.

    Parameters
    ----------
    configs : sequence of ModelConfig
        The models that will be measured in fresh processes.
    device : str
        ``eval.device`` as written (``"auto"``, ``"cpu"``, ``"cuda:0"`` …).
    """
    if not configs or not can_fork("cpu" if device == "auto" else device):
        return
    modules = [__name__, *imported_modules()]  # the fresh process's body lives here
    for config in configs:
        family = adapter_class(config.kind)
        modules += [family.__module__, *family.load_imports]
    import_ahead(list(dict.fromkeys(modules)))


def _sync(device: str) -> None:
    if device != "cpu":
        get_backend().synchronize(device)


def _own_rss(peaks: WindowPeaks, rss_base: int, library_paged: int) -> float:
    """The window's peak RSS above the baseline, less the library code paged in since it: MiB."""
    return max(0, peaks.rss_peak - rss_base - library_paged) / MIB


def _scenario_memory(
    scenario: str,
    batch_size: int,
    iterations: int,
    peaks: WindowPeaks,
    rss_base: int,
    library_paged: int,
    cuda_base: int | None,
) -> ScenarioMemory:
    cuda = None if peaks.cuda_peak is None else max(0, peaks.cuda_peak - (cuda_base or 0)) / MIB
    return ScenarioMemory(
        scenario=cast(TimedScenario, scenario),
        batch_size=batch_size,
        iterations=iterations,
        model_peak_mb=_own_rss(peaks, rss_base, library_paged),
        cuda_model_peak_mb=cuda,
    )


def measure_fresh(
    load: Callable[[], ModelAdapter],
    batches: Mapping[str, Sequence[Sequence[Any]]],
    *,
    device: str,
    iterations: int,
    sequence_length: int | None = None,
    clock: Clock | None = None,
) -> tuple[ColdStart, MemoryStats]:
    """Load a model, predict its first input cold, run every scenario's inputs; measure all of it.

    Meant for a process that holds no model (see the module docstring): the baseline is this
    process just before ``load``, after the device's context was created.

    Parameters
    ----------
    load : callable
        Returns the loaded model (``ModelRecipe.load``).
    batches : mapping of scenario to list of batches of raw examples
        The timed inputs per scenario, in timed order; the first scenario's first batch is
        the cold-start input.
    device : str
        Where the model runs (its context is created before the baseline).
    iterations : int
        Calls per scenario at least (every input at least once).
    sequence_length : int, optional
        ``speed.fixed_shape.sequence_length``.
    clock : callable, optional
        Nanosecond clock (tests pass a fake one).

    Returns
    -------
    (ColdStart, MemoryStats)
    """
    if not batches or not all(batches.values()):
        raise ValueError("measure_fresh needs at least one batch per scenario")
    clock = clock or time.perf_counter_ns
    warmup_s = None
    if device != "cpu":
        began = clock()
        get_backend().warm_up(device)
        warmup_s = (clock() - began) / 1e9
    gc.collect()
    window = MemoryWindow(device).open()  # the baseline: this process without the model
    began = clock()
    adapter = load()
    loaded = clock()
    first_scenario, first_batches = next(iter(batches.items()))
    inputs, _ = prepare(adapter, first_batches[0], sequence_length)
    prepared = clock()
    inputs = adapter.to_device(inputs)
    _sync(device)
    moved = clock()
    adapter.forward(inputs)
    _sync(device)
    answered = clock()
    load_peaks = window.close()
    cold = ColdStart(
        scenario=cast(TimedScenario, first_scenario),
        batch_size=len(first_batches[0]),
        device_warmup_s=warmup_s,
        load_s=(loaded - began) / 1e9,
        first_preprocess_s=(prepared - loaded) / 1e9,
        first_transfer_s=(moved - prepared) / 1e9,
        first_call_s=(answered - moved) / 1e9,
    )
    rss_base, cuda_base = load_peaks.rss_start, load_peaks.cuda_start
    windows, scenarios = [load_peaks], []
    for scenario, raw in batches.items():
        calls = max(iterations, len(raw))
        window = MemoryWindow(device).open()
        for i in range(calls):
            adapter.forward(adapter.to_device(prepare(adapter, raw[i % len(raw)], sequence_length)[0]))
        peaks = window.close()
        windows.append(peaks)
        paged = sum(w.library_growth for w in windows)
        scenarios.append(_scenario_memory(scenario, len(raw[0]), calls, peaks, rss_base, paged, cuda_base))
    return cold, _memory_stats(adapter, windows, scenarios)


def _memory_stats(adapter: ModelAdapter, windows: list[WindowPeaks], scenarios: list[ScenarioMemory]) -> MemoryStats:
    load_peaks, runs = windows[0], windows[1:]
    rss_base, cuda_base = load_peaks.rss_start, load_peaks.cuda_start
    cuda = load_peaks.cuda_peak is not None
    samples = sum(w.rss.samples for w in windows)
    paged = np.cumsum([w.library_growth for w in windows])  # library code paged in by the end of each window
    return MemoryStats(
        isolated=True,
        peak_method="high_water_mark" if all(w.exact for w in windows) else "sampled",
        weights_mb=None if (weights := adapter.parameter_bytes()) is None else weights / MIB,  # None: unknown
        model_peak_mb=max(_own_rss(w, rss_base, int(p)) for w, p in zip(windows, paged, strict=True)),
        cuda_model_peak_mb=max(0, max(w.cuda_peak or 0 for w in windows) - (cuda_base or 0)) / MIB if cuda else None,
        scenarios=scenarios,
        inference_rss_mb=max(_own_rss(w, w.rss_start, w.library_growth) for w in runs),
        cuda_inference_peak_mb=(
            max(max(0, (w.cuda_peak or 0) - (w.cuda_start or 0)) for w in runs) / MIB if cuda else None
        ),
        process_rss_baseline_mb=rss_base / MIB,
        process_rss_peak_mb=max(w.rss_peak for w in windows) / MIB,
        process_rss_mean_mb=sum(w.rss.mean * w.rss.samples for w in windows) / samples / MIB,
        process_rss_samples=samples,
        process_cuda_max_allocated_mb=max(w.cuda_peak or 0 for w in windows) / MIB if cuda else None,
        process_cuda_max_reserved_mb=max(w.cuda_reserved_peak or 0 for w in windows) / MIB if cuda else None,
    )


def _measure_in_child(
    recipe: ModelRecipe,
    batches: dict[str, list[list[Any]]],
    iterations: int,
    sequence_length: int | None,
    threads: int | None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fresh process's body: the records as plain data (the parent validates them again)."""
    if threads is not None and "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    cold, memory = measure_fresh(
        recipe.load, batches, device=recipe.context.device, iterations=iterations, sequence_length=sequence_length
    )
    return cold.model_dump(mode="json"), memory.model_dump(mode="json")


def measure_isolated(
    recipe: ModelRecipe,
    batches: Mapping[str, Sequence[Sequence[Any]]],
    *,
    iterations: int,
    sequence_length: int | None = None,
    threads: int | None = None,
    timeout_s: float = 900.0,
) -> tuple[ColdStart, MemoryStats]:
    """:func:`measure_fresh` of ``recipe``'s model in a fresh process that holds only it.

    The process is forked from a template that imported this process's modules (Linux, CPU)
    or spawned (GPU, other systems); see :mod:`headtohead.engines.fresh_process`.

    Parameters
    ----------
    recipe : ModelRecipe
        How to load the model there.
    batches : mapping of scenario to list of batches of raw examples
        The timed inputs (pickled to the process).
    iterations : int
        Calls per scenario at least.
    sequence_length : int, optional
    threads : int, optional
        torch's intra-op threads there (as in the timed rounds).
    timeout_s : float
        The process is killed after this long.

    Returns
    -------
    (ColdStart, MemoryStats)

    Raises
    ------
    FreshProcessError
        The load or a call failed there, the process died (e.g. killed for memory) or ran
        past ``timeout_s``.
    """
    plain = {scenario: [list(batch) for batch in raw] for scenario, raw in batches.items()}
    cold, memory = run_in_fresh_process(
        _measure_in_child,
        (recipe, plain, iterations, sequence_length, threads),
        fork=can_fork(recipe.context.device),
        timeout_s=timeout_s,
    )
    return ColdStart.model_validate(cold), MemoryStats.model_validate(memory)
