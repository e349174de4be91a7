"""Audit of models run several times (``repeats:``): the comparison over every run (``stats.repeats``).

Two stochastic models of equal mean accuracy and opposite per-example strengths — right on example
``i`` with probability ``0.75 ± 0.2`` (A plus, B minus, the sign drawn per example), drawn afresh on
every run — each run k times; "run noise" shifts a whole run's probabilities by ``N(0, σ)``.
"After" is the two-level test (:func:`headtohead.stats.repeat_pool.two_level_gap`: the per-example
gaps of mean correctness, plus the variance of whole runs); "before" pools the k·n rows as if they
were independent examples (a paired t over every run's rows), which counts one example's k runs as
k pieces of evidence. With the noise floor (issue 41, item 4), a gap within the larger of the two models'
mean floors (``t_{0.975, k−1}·√2·s/√k`` of each model's runs' accuracies: how far two means of k runs
differ) is never called 'better': "before" is the two-level test alone. Both floors are checked as the
prediction bounds they are: two new runs of A, on the same examples, differ by no more than A's
single-run floor from its k runs, and two new means of k runs of A by no more than its mean floor.
The last row (full grid only) runs the same through :func:`headtohead.compare` with ``repeats=5``:
issue 41's done-when, ≤ 8 % "better".
"""

from __future__ import annotations

import logging
import warnings

import numpy as np
from scipy import stats

from audit.common import Row, grid_seed, row
from headtohead.stats.repeat_pool import _means_differ, _two_runs_differ, pair_floor, two_level_gap

__all__ = ["repeat_rows", "simulate", "compare_rate"]

#: (examples, runs per model, whole-run SD)
_GRID = ((200, 5, 0.0), (200, 5, 0.05), (200, 2, 0.05), (100, 10, 0.1), (1000, 3, 0.02))
_QUICK = ((200, 5, 0.0), (200, 5, 0.05))


def _pair(
    rng: np.random.Generator, n: int, k: int, run_sd: float, gap: float, extra: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """k runs of A (and ``extra`` more, new runs of the same model on the same examples) and k runs of B."""
    s = rng.choice([-0.2, 0.2], n)
    pa = 0.75 + s + gap / 2 + rng.normal(0.0, run_sd, (k + extra, 1))
    pb = 0.75 - s - gap / 2 + rng.normal(0.0, run_sd, (k, 1))
    return rng.random((k + extra, n)) < pa, rng.random((k, n)) < pb


def simulate(n: int, k: int, run_sd: float, runs: int, seed: int) -> dict[str, np.ndarray]:
    """Per simulated comparison at no true gap: the two-level test's 'better', its coverage, the pooled test's;
    'better' with the noise-floor rule (never within the larger mean floor); whether two new runs of A fall
    within A's single-run floor, and two new means of k runs of A within its mean floor."""
    rng = np.random.default_rng(grid_seed(41, n, k, int(run_sd * 1000), seed))
    called, covers, pooled = np.zeros(runs, bool), np.zeros(runs, bool), np.zeros(runs, bool)
    floored, floor_covers, mean_covers = np.zeros(runs, bool), np.zeros(runs, bool), np.zeros(runs, bool)
    for r in range(runs):
        a_all, b = _pair(rng, n, k, run_sd, 0.0, extra=2 * k)
        a, new = a_all[:k], a_all[k:].mean(axis=1)
        found = two_level_gap(a, b)
        called[r], covers[r] = found.p_value <= 0.05, found.low <= 0.0 <= found.high
        pooled[r] = stats.ttest_1samp((a.astype(float) - b).ravel(), 0.0).pvalue <= 0.05
        mean_a, mean_b = _means_differ(a.mean(axis=1)), _means_differ(b.mean(axis=1))
        floor, _ = pair_floor({m: f for m, f in (("a", mean_a), ("b", mean_b)) if f is not None})
        floored[r] = called[r] and not (floor is not None and abs(found.estimate) <= floor)
        single = _two_runs_differ(a.mean(axis=1))
        floor_covers[r] = single is not None and abs(new[0] - new[1]) <= single
        mean_covers[r] = mean_a is not None and abs(new[:k].mean() - new[k:].mean()) <= mean_a
    return {
        "called": called,
        "covers": covers,
        "pooled": pooled,
        "floored": floored,
        "floor_covers": floor_covers,
        "mean_covers": mean_covers,
    }


def compare_rate(runs: int, seed: int, n: int = 200, k: int = 5, run_sd: float = 0.03) -> float:
    """The share of ``runs`` seeded runs through :func:`headtohead.compare` (``repeats=k``) that call one 'better'."""
    import pandas as pd

    import headtohead

    logging.getLogger("headtohead").setLevel(logging.ERROR)
    better = 0
    for r in range(runs):
        rng = np.random.default_rng(grid_seed(4141, seed, r))
        labels = rng.choice(["neg", "pos"], n)
        y = (labels == "pos").astype(int)
        frame = pd.DataFrame({"text": [str(i) for i in range(n)], "label": labels})
        strength = rng.choice([-0.2, 0.2], n)

        def model(p: np.ndarray, y: np.ndarray = y):
            def predict(texts):
                rows = np.array([int(t) for t in texts])
                right = np.random.random(len(rows)) < p[rows] + np.random.normal(0.0, run_sd)  # noqa: NPY002
                return np.eye(2)[np.where(right, y[rows], 1 - y[rows])]

            return predict

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run = headtohead.compare(
                {"a": model(0.75 + strength), "b": model(0.75 - strength)},
                frame,
                outputs={"a": "probabilities", "b": "probabilities"},
                repeats=k,
                stats={"n_resamples": 100},
                seed=r,
            )
        better += bool(run.result.stats.repeats.pools[0].significant)
    return better / runs


def repeat_rows(*, quick: bool = False, seed: int = 0) -> list[Row]:
    """The two-level test's false 'better' rate and its interval's coverage over the grid (and through compare)."""
    runs = 400 if quick else 4000
    rows = []
    for n, k, run_sd in _QUICK if quick else _GRID:
        found = simulate(n, k, run_sd, runs, seed)
        setting = f"n = {n}, {k} runs each, opposite strengths 0.75 ± 0.2, whole-run SD {run_sd * 100:g} pp"
        rows.append(
            row(
                "repeats",
                "'better' at no gap, α = 0.05 (over every run; before: runs pooled as examples)",
                setting,
                "error",
                0.05,
                found["called"],
                runs,
                before=float(found["pooled"].mean()),
                n=n,
            )
        )
        rows.append(
            row("repeats", "gap over runs: 95 % interval covers", setting, "coverage", 0.95, found["covers"], runs, n=n)
        )
        rows.append(
            row(
                "repeats",
                "'better' at no gap, α = 0.05, never within the mean floor (before: the two-level test alone)",
                setting,
                "error",
                0.05,
                found["floored"],
                runs,
                before=float(found["called"].mean()),
                n=n,
            )
        )
        rows.append(
            row(
                "repeats",
                "single-run floor: two new runs of the model differ by no more than it (95 % prediction bound)",
                setting,
                "coverage",
                0.95,
                found["floor_covers"],
                runs,
                n=n,
            )
        )
        rows.append(
            row(
                "repeats",
                "mean floor: two new means of k runs each differ by no more than it (95 % prediction bound)",
                setting,
                "coverage",
                0.95,
                found["mean_covers"],
                runs,
                n=n,
            )
        )
    if not quick:
        through = 200
        rows.append(
            row(
                "repeats",
                "'better' at no gap through headtohead.compare(repeats=5), α = 0.05 (issue 41: ≤ 8 %)",
                "n = 200, 5 runs each, opposite strengths 0.75 ± 0.2, whole-run SD 3 pp",
                "error",
                0.05,
                compare_rate(through, seed),
                through,
                n=200,
            )
        )
    return rows


#: (examples, runs per model, whole-run SD, true gap) of the noise floor's price in power (docs/statistics.md, 15)
PRICE_GRID = ((200, 5, 0.0, 0.08), (200, 5, 0.05, 0.08), (1000, 3, 0.02, 0.04), (2000, 5, 0.0, 0.03))


def floor_price(runs: int = 1000, seed: int = 1) -> list[tuple[int, int, float, float, float, float, float]]:
    """The power the noise-floor rule costs: per setting of :data:`PRICE_GRID`, the share of ``runs`` seeded runs at
    the true gap that the two-level test alone calls 'better', the share it does with the rule (the gap held
    against the larger mean floor, :func:`headtohead.stats.repeat_pool._means_differ`), and the share with the
    rule as first built (the gap of means held against the larger single-run floor, ``_two_runs_differ``).

    ``PYTHONPATH=src:benchmarks .venv/bin/python -c "from audit.repeats import floor_price; print(floor_price())"``
    """
    found = []
    for n, k, run_sd, gap in PRICE_GRID:
        rng = np.random.default_rng(seed)
        alone = with_mean = with_single = 0
        for _ in range(runs):
            a, b = _pair(rng, n, k, run_sd, gap)
            result = two_level_gap(a, b)
            called = result.p_value <= 0.05
            alone += called
            for bound in (_means_differ, _two_runs_differ):
                floors = {m: bound(x.mean(axis=1)) for m, x in (("a", a), ("b", b))}
                floor, _ = pair_floor({m: f for m, f in floors.items() if f is not None})
                kept = called and not (floor is not None and abs(result.estimate) <= floor)
                if bound is _means_differ:
                    with_mean += kept
                else:
                    with_single += kept
        found.append((n, k, run_sd, gap, alone / runs, with_mean / runs, with_single / runs))
    return found
