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
so does this.
"""

from __future__ import annotations

import numpy as np

__all__ = ["simulate_round_medians"]


def simulate_round_medians(n_rounds: int, *, n_sims: int = 1, calls_per_block: int = 20, ratio: float = 1.0,
                           call_sigma: float = 0.10, spike_rate: float = 0.01, round_drift: float = 0.05,
                           within_round_drift: float = 0.02, block_sigma: float = 0.01, base_ms: float = 5.0,
                           seed: int | np.random.Generator = 0) -> tuple[np.ndarray, np.ndarray]:
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
    return _block_medians(rng, log_a, calls_per_block, call_sigma, spike_rate), \
        _block_medians(rng, log_b, calls_per_block, call_sigma, spike_rate)


def _block_medians(rng: np.random.Generator, block_log: np.ndarray, calls: int, call_sigma: float,
                   spike_rate: float) -> np.ndarray:
    times = np.exp(block_log[..., None] + rng.normal(0.0, call_sigma, block_log.shape + (calls,)))
    spikes = rng.random(times.shape) < spike_rate
    times[spikes] *= rng.uniform(1.5, 3.0, int(spikes.sum()))
    return np.median(times, axis=-1)
