"""Cascades (``kind: cascade``): Learn-then-Test's guarantee, measured.

The promise (``docs/statistics.md``, "Cascades"): with probability at least ``1 − δ`` over the
calibration draw, the cascade's accuracy loss against the expensive model, ``R(t̂)``, is at most the
margin. Each simulated run draws ``n`` calibration examples from a population whose loss curve is
known in closed form, lets :func:`headtohead.stats.cascade.choose_threshold` choose ``t̂`` and records
whether the population's loss at ``t̂`` exceeds the margin. Target: that share ≤ δ + 1 pp.

The population. The cheap model's top probability ``s`` is uniform on [0.5, 1] and calibrated (right
with probability ``s``). ``nested``: the expensive model is right wherever the cheap one is and, where
the cheap one is wrong, with probability ``r`` — no wins for the cheap model, so the harm test is exact
and the guarantee is at its edge: ``R(t) = r (1 − max(t, ½))²``. ``independent``: the expensive model is
right with probability ``q`` whatever the cheap one does — the cheap model also wins, the test credits
none of it (conservative): ``R(t) = ∫_{max(t,½)}^1 2 (q − s) ds``.
"""

from __future__ import annotations

import numpy as np

from audit.common import Row, grid_seed, row
from headtohead.stats.cascade import choose_threshold

__all__ = ["cascade_rows"]

#: (population, its parameter, calibration examples, margin, delta)
_GRID = [
    ("nested", 0.8, 1000, 0.02, 0.05),
    ("nested", 0.8, 5000, 0.005, 0.05),
    ("nested", 0.5, 2000, 0.01, 0.10),
    ("independent", 0.9, 1000, 0.02, 0.05),
    ("independent", 0.95, 5000, 0.005, 0.05),
]
_QUICK = [("nested", 0.8, 1000, 0.02, 0.05)]


def _true_loss(population: str, param: float, t: float | None) -> float:
    """The population's accuracy loss against the expensive model at threshold ``t`` (``None``: all deferred)."""
    if t is None:
        return 0.0
    low = min(max(t, 0.5), 1.0)
    if population == "nested":
        return param * (1.0 - low) ** 2
    return 2.0 * (param * (1.0 - low) - (1.0 - low**2) / 2.0)


def _draw(population: str, param: float, n: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    s = rng.uniform(0.5, 1.0, n)
    cheap = rng.random(n) < s
    if population == "nested":
        expensive = cheap | (rng.random(n) < param)
    else:
        expensive = rng.random(n) < param
    return s, cheap, expensive


def cascade_rows(*, quick: bool = False, seed: int = 0) -> list[Row]:
    """One row per grid point: the share of runs whose chosen threshold loses more than the margin."""
    runs = 200 if quick else 2000
    rows = []
    for i, (population, param, n, margin, delta) in enumerate(_QUICK if quick else _GRID):
        rng = np.random.default_rng(grid_seed(seed, 71, i))
        broken, deferred, passed = 0, [], 0
        for _ in range(runs):
            s, cheap, expensive = _draw(population, param, n, rng)
            choice = choose_threshold(s, cheap, expensive, max_drop=margin, delta=delta)
            loss = _true_loss(population, param, choice.threshold)
            broken += loss > margin
            passed += choice.threshold is not None
            t = choice.threshold
            deferred.append(1.0 if t is None else min(max((t - 0.5) / 0.5, 0.0), 1.0))
        what = (
            f"expensive right where cheap is, else with p {param:g}"
            if population == "nested"
            else f"expensive right with p {param:g}, independently"
        )
        setting = (
            f"{what}; n = {n} calibration examples, margin {100 * margin:g} pp, δ = {delta:g} "
            f"({passed} of {runs} runs passed a threshold; mean deferral share {np.mean(deferred):.2f})"
        )
        rows.append(
            row(
                "cascade",
                "cascade's accuracy loss above its margin (population loss at the chosen threshold)",
                setting,
                "error",
                delta,
                broken / runs,
                runs,
                n=n,
            )
        )
    return rows
