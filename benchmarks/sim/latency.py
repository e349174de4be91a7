"""Simulated speed benchmarks: per-round median latencies of two models with realistic noise.

What the speed engine measures, drawn from a model whose answer is known, for A/A and A/B
checks of :func:`headtohead.stats.speed.speed_ratio` (tests and ``benchmarks/speed_aa.py``):

* each call's latency is log-normal around the model's level, and a small share of calls
  are *spikes* (an interrupt, a page fault) 1.5–3× slower;
* the machine *drifts*: a random walk from round to round that both models share
  (throttling, a background job), which goes on *within* a round, so the model that runs
  second sees a little more of it; the order alternates A, B / B, A as the engine's
  rotation does for two models;
* each block has its own small offset (cache and allocator state).

The engine reduces a block to its median (:func:`~headtohead.stats.speed.round_medians`);
so does this. :func:`simulate_model_rounds` does the same for any number of models run in
the engine's balanced (Williams) orders, with an optional *trend* of the machine (throttling)
or of one model (a warm-up that had not finished), for the checks of "faster" over a run's
family of comparisons and of the speed warnings; :func:`speed_summary_from_rounds` turns one
simulated benchmark into the records a run stores, so those checks run the real code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np

__all__ = ["simulate_round_medians", "simulate_model_rounds", "SimulatedRounds", "speed_summary_from_rounds"]


def simulate_round_medians(
    n_rounds: int,
    *,
    n_sims: int = 1,
    calls_per_block: int = 20,
    ratio: float = 1.0,
    call_sigma: float = 0.10,
    spike_rate: float = 0.01,
    round_drift: float = 0.05,
    within_round_drift: float = 0.02,
    block_sigma: float = 0.01,
    base_ms: float = 5.0,
    seed: int | np.random.Generator = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-round median latencies of models A and B over ``n_sims`` simulated benchmarks.

    Parameters
    ----------
    n_rounds : int
        Interleaved rounds per benchmark.
    n_sims : int
        Independent benchmarks.
    calls_per_block : int
        Timed calls per model and round.
    ratio : float
        True time ratio A / B (1.0: identical models, an A/A comparison).
    call_sigma : float
        Log-scale standard deviation of one call.
    spike_rate : float
        Share of calls made 1.5–3× slower.
    round_drift, within_round_drift : float
        Log-scale standard deviations of the shared drift's step between rounds and
        between the two blocks of a round.
    block_sigma : float
        Log-scale standard deviation of a block's own offset.
    base_ms : float
        Model B's typical latency.
    seed : int or Generator

    Returns
    -------
    time_a, time_b : ndarray of shape (n_sims, n_rounds)
        Median latency (ms) of each block.

    Examples
    --------
    >>> a, b = simulate_round_medians(5, n_sims=3, ratio=2.0)
    >>> a.shape, bool(np.all(a > b))
    ((3, 5), True)
    """
    rng = np.random.default_rng(seed)
    shape = (n_sims, n_rounds)
    level = np.cumsum(rng.normal(0.0, round_drift, shape), axis=1)
    a_first = (np.arange(n_rounds) % 2 == 0)[None, :]  # A, B in even rounds; B, A in odd ones
    later = rng.normal(0.0, within_round_drift, shape)  # drift between a round's first and second block
    log_a = np.log(base_ms * ratio) + level + np.where(a_first, 0.0, later) + rng.normal(0.0, block_sigma, shape)
    log_b = np.log(base_ms) + level + np.where(a_first, later, 0.0) + rng.normal(0.0, block_sigma, shape)
    return _block_medians(rng, log_a, calls_per_block, call_sigma, spike_rate), _block_medians(
        rng, log_b, calls_per_block, call_sigma, spike_rate
    )


def _block_medians(
    rng: np.random.Generator, block_log: np.ndarray, calls: int, call_sigma: float, spike_rate: float
) -> np.ndarray:
    times = np.exp(block_log[..., None] + rng.normal(0.0, call_sigma, block_log.shape + (calls,)))
    spikes = rng.random(times.shape) < spike_rate
    times[spikes] *= rng.uniform(1.5, 3.0, int(spikes.sum()))
    return np.median(times, axis=-1)


@dataclass(frozen=True)
class SimulatedRounds:
    """Simulated benchmarks of several models in one scenario.

    Attributes
    ----------
    medians : ndarray of shape (n_sims, n_models, n_rounds)
        Median latency (ms) of each block.
    orders : list of list of int
        The order the models ran in, per round (the same in every simulated benchmark).
    repeat_noise : ndarray of shape (n_sims, n_models)
        IQR / median of each model's calls over all rounds (what
        :func:`headtohead.results.latency.repeat_noise` measures on repeated calls of one input).
    """

    medians: np.ndarray
    orders: list[list[int]]
    repeat_noise: np.ndarray


def simulate_model_rounds(
    n_models: int,
    n_rounds: int,
    *,
    n_sims: int = 1,
    calls_per_block: int = 20,
    factors: Sequence[float] | None = None,
    call_sigma: float = 0.10,
    spike_rate: float = 0.01,
    round_drift: float = 0.05,
    round_sigma: float = 0.0,
    within_round_drift: float = 0.02,
    block_sigma: float = 0.01,
    trend: float = 0.0,
    model_trends: Sequence[float] | None = None,
    base_ms: float = 5.0,
    seed: int | np.random.Generator = 0,
) -> SimulatedRounds:
    """Round medians of ``n_models`` models run in balanced orders on a simulated machine.

    The noise is :func:`simulate_round_medians`'s: log-normal calls with spikes, a random walk of
    the machine's level shared by every model (``round_drift`` per round) that goes on within a
    round (``within_round_drift`` per block), a small offset per block. Rounds run the models in
    the engine's Williams orders (:func:`headtohead.stats.design.round_order`), so a model's
    position in its round, and the drift it sees there, changes from round to round.

    Parameters
    ----------
    n_models, n_rounds : int
    n_sims : int
        Independent benchmarks.
    calls_per_block : int
    factors : sequence of float, optional
        Each model's true time relative to ``base_ms`` (default: all 1, identical models).
    call_sigma, spike_rate, round_drift, within_round_drift, block_sigma
        As in :func:`simulate_round_medians` (``round_drift``: the step of a random walk, which
        wanders further the longer the benchmark runs).
    round_sigma : float
        A shared offset of each round's level that does not carry over to the next round (log
        scale): a machine whose speed varies from round to round around a steady level.
    trend : float
        A steady change of the machine's level per round on the log scale (``0.02``: every call
        2 % slower each round, throttling), shared by every model; it goes on within a round.
    model_trends : sequence of float, optional
        A change per round of each model alone (log scale): its ratio to the others drifts.
    base_ms : float
    seed : int or Generator

    Returns
    -------
    SimulatedRounds

    Examples
    --------
    >>> sim = simulate_model_rounds(3, 6, n_sims=2, factors=[1.0, 2.0, 1.0])
    >>> sim.medians.shape, sim.orders[0], bool(np.all(sim.medians[:, 1] > sim.medians[:, 0]))
    ((2, 3, 6), [0, 1, 2], True)
    """
    from headtohead.stats.design import round_order

    rng = np.random.default_rng(seed)
    k = n_models
    factor = np.ones(k) if factors is None else np.asarray(factors, dtype=np.float64)
    own_trend = np.zeros(k) if model_trends is None else np.asarray(model_trends, dtype=np.float64)
    orders = [round_order(k, r) for r in range(n_rounds)]
    position = np.empty((k, n_rounds), dtype=np.int64)  # position[m, r]: where model m ran in round r
    for r, order in enumerate(orders):
        position[order, r] = np.arange(k)
    rounds = np.arange(n_rounds)
    level = np.cumsum(rng.normal(0.0, round_drift, (n_sims, 1, n_rounds)), axis=2) + rng.normal(
        0.0, round_sigma, (n_sims, 1, n_rounds)
    )
    steps = rng.normal(0.0, within_round_drift, (n_sims, n_rounds, k))
    steps[:, :, 0] = 0.0  # the first block of a round starts where the round starts
    within = np.cumsum(steps, axis=2)  # (sims, rounds, position)
    within_seen = np.take_along_axis(within, position.T[None, :, :], axis=2).transpose(0, 2, 1)  # (sims, k, rounds)
    clock = rounds[None, :] + position / k  # rounds elapsed when each block ran
    block_log = (
        np.log(base_ms * factor)[None, :, None]
        + level
        + within_seen
        + trend * clock[None]
        + own_trend[None, :, None] * clock[None]
        + rng.normal(0.0, block_sigma, (n_sims, k, n_rounds))
    )
    calls = np.exp(rng.normal(0.0, call_sigma, block_log.shape + (calls_per_block,)))
    spikes = rng.random(calls.shape) < spike_rate
    calls[spikes] *= rng.uniform(1.5, 3.0, int(spikes.sum()))
    times = np.exp(block_log)[..., None] * calls
    medians = np.median(times, axis=-1)
    flat = times.reshape(n_sims, k, -1)
    q1, q2, q3 = np.percentile(flat, [25, 50, 75], axis=-1)
    return SimulatedRounds(medians, [list(map(int, o)) for o in orders], (q3 - q1) / q2)


def speed_summary_from_rounds(
    scenarios: dict[str, np.ndarray],
    orders: list[list[int]],
    *,
    names: Sequence[str] | None = None,
    confidence: float = 0.95,
    target_ci_halfwidth: float | None = None,
):  # noqa: ANN201 - SpeedSummary
    """The speed records of one simulated benchmark, as :func:`~headtohead.engines.speed.measure_speed` makes them.

    Each round holds one call, the block's median (what the statistics read); comparisons are
    :func:`~headtohead.stats.speed.speed_ratio` per pair, adjusted together by
    :func:`~headtohead.stats.speed_family.adjust_speed_family`, as the engine does.

    Parameters
    ----------
    scenarios : dict of str to ndarray of shape (n_models, n_rounds)
        Block medians (ms) per scenario (``offline``, ``single_stream``).
    orders : list of list of int
        The models' order per round.
    names : sequence of str, optional
        Model names (default ``m0``, ``m1`` …).
    confidence : float
    target_ci_halfwidth : float, optional
        Recorded in the settings, as ``speed.target_ci_halfwidth``.

    Returns
    -------
    SpeedSummary
    """
    from headtohead.results.speed import (
        HostLoad,
        ModelSpeed,
        ScenarioRun,
        ScenarioTiming,
        SpeedComparison,
        SpeedSummary,
    )
    from headtohead.stats.speed import speed_ratio
    from headtohead.stats.speed_family import adjust_speed_family

    first = next(iter(scenarios.values()))
    k, n_rounds = first.shape
    names = list(names) if names is not None else [f"m{i}" for i in range(k)]
    runs: list[ScenarioRun] = []
    timings: dict[str, dict[str, Any]] = {name: {} for name in names}
    for name_of_scenario, medians in scenarios.items():
        scenario = cast(Literal["offline", "single_stream"], name_of_scenario)
        comparisons = []
        for i in range(k):
            timings[names[i]][scenario] = ScenarioTiming(
                scenario=scenario,
                batch_size=8 if scenario == "offline" else 1,
                timer="perf_counter_ns",
                warmup_iterations=0,
                warmup_s=0.0,
                rounds_ns=[[int(round(m * 1e6))] for m in medians[i]],
            )
            for j in range(i + 1, k):
                r = speed_ratio(medians[i], medians[j], confidence=confidence)
                faster = {"a": names[i], "b": names[j], None: None}[r.faster]
                comparisons.append(
                    SpeedComparison(
                        scenario=scenario,
                        model_a=names[i],
                        model_b=names[j],
                        ratio=r.ratio,
                        ci_low=r.low,
                        ci_high=r.high,
                        confidence=confidence,
                        n_rounds=n_rounds,
                        faster=faster,
                        p_value=r.p_value,
                    )
                )
        runs.append(
            ScenarioRun(
                scenario=scenario,
                batch_size=8 if scenario == "offline" else 1,
                rounds=n_rounds,
                iterations_per_block=1,
                stop_reason="minimums_met",
                elapsed_s=1.0,
                round_orders=[[names[m] for m in order] for order in orders[:n_rounds]],
                comparisons=comparisons,
            )
        )
    runs, _ = adjust_speed_family(runs)
    quiet = HostLoad(cpu_count=2, load_average=[0.0, 0.0, 0.0], other_cpu_percent=0.0)
    models = [
        ModelSpeed(
            name=name,
            device="cpu",
            num_parameters=1,
            parameter_bytes=4,
            first_preprocess_s=0.0,
            first_call_s=0.0,
            **timings[name],
        )
        for name in names
    ]
    return SpeedSummary(
        settings={"confidence": confidence, "target_ci_halfwidth": target_ci_halfwidth},
        batch_size=8,
        seed=0,
        torch_threads=1,
        torch_interop_threads=1,
        host_before=quiet,
        host_after=quiet,
        elapsed_s=1.0,
        scenarios=runs,
        models=models,
    )
