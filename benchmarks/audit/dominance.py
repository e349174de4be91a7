"""Audit of one decision across quality, speed and cost (``stats.dominance``, issue 42).

* **"dominates" with one axis exactly at its margin** — the others clearly in A's favour: a true accuracy gap
  of exactly −margin, a true time ratio of exactly 1, or a true cost ratio of exactly 1 (per token over
  examples, or a throughput-priced cost against a per-token one). Each part is read on its 95 % interval, so
  one at its margin falls at most α/2 = 2.5 % of the time and the intersection–union test with it: target
  ≤ α + 1 pp (α = 5 %).
* **P(on the front) calibrated on known fronts** — four models of random true accuracies and latencies per
  simulated run, measured on examples and rounds; among the models given a P(on the front) in a bin, the
  share truly on the front (by their true values) should be that bin's mean P: target within 5 pp.
* **A model run several times** (``repeats:``) is decided on its mean over its runs: the same two rows with A
  run k times, each run's accuracy shifted as a whole (run-to-run SD 1–2 pp) — "dominates" with A's mean
  accuracy exactly the margin below B's, through :func:`headtohead.stats.dominance.decide` (the two-level
  interval); and P(on the front) with two of the four models run 3 times, truly on the front by their mean.
"""

from __future__ import annotations

import math

import numpy as np

from audit.common import Row, grid_seed, row
from headtohead.stats.dominance import Measured, decide, front_probabilities, pareto_mask, ratio_interval
from headtohead.stats.paired import PairedCorrectness

__all__ = ["dominance_rows", "margin_rate", "front_calibration", "repeated_margin_rate"]

ALPHA = 0.05
MARGIN = 0.01


def _correct(rng: np.random.Generator, n: int, acc_a: float, acc_b: float, discord: float) -> tuple:
    """Paired correctness with P(only A right) − P(only B right) = acc_a − acc_b and total discordance ``discord``."""
    gap = acc_a - acc_b
    only_a, only_b = (discord + gap) / 2, (discord - gap) / 2
    both = acc_b - only_b
    u = rng.random(n)
    a = u < both + only_a
    b = (u < both) | ((u >= both + only_a) & (u < both + only_a + only_b))
    return a, b


def _rounds(rng: np.random.Generator, ms: float, rounds: int, sd: float, drift: np.ndarray) -> Measured:
    calls = ms * 1e6 * np.exp(drift[:, None] + sd * rng.standard_normal((rounds, 5)))
    return Measured(rounds=tuple(tuple(r) for r in calls), per_call=1e9)


def _dominates(a_right, b_right, parts: dict[str, tuple[Measured, Measured]]) -> bool:
    low, _ = PairedCorrectness.of(a_right, b_right).interval(1.0 - ALPHA)
    if not float(low) > -MARGIN:
        return False
    return all(ratio_interval(x, y, confidence=1.0 - ALPHA).a_lower for x, y in parts.values())


def margin_rate(edge: str, n: int, rounds: int, runs: int, seed: int) -> np.ndarray:
    """Per simulated pair: whether "A dominates B" was declared with axis ``edge`` exactly at its margin."""
    rng = np.random.default_rng(grid_seed(42, hash_edge(edge), n, rounds, seed))
    called = np.zeros(runs, bool)
    for r in range(runs):
        acc_a = 0.90 - MARGIN if edge == "quality" else 0.93
        a_right, b_right = _correct(rng, n, acc_a, 0.90, 0.12)
        drift = 0.05 * rng.standard_normal(rounds)  # the machine's level, shared by both models in a round
        speed_b = 2.0 if edge != "latency" else 1.0
        parts = {"latency": (_rounds(rng, 1.0, rounds, 0.05, drift), _rounds(rng, speed_b, rounds, 0.05, drift))}
        if edge == "cost tokens":
            tokens = rng.gamma(4.0, 25.0, (2, n))  # per-example costs of equal mean
            parts["cost"] = (Measured(sample=tokens[0]), Measured(sample=tokens[1]))
        elif edge == "cost mixed":
            priced = _rounds(rng, 1.0, rounds, 0.05, drift)  # 1 ms a prediction at 3.6/h: 1.0 per million
            per = Measured(rounds=priced.rounds, per_call=1e9, scale=3.6 / 3600 * 1e6)
            parts["cost"] = (per, Measured(sample=rng.gamma(4.0, 0.25, n)))  # mean 1.0 per million
        called[r] = _dominates(a_right, b_right, parts)
    return called


def hash_edge(edge: str) -> int:
    """A stable number for an axis name (``hash`` of a str is not stable across processes)."""
    return sum(ord(ch) * 31**i for i, ch in enumerate(edge)) % 100_003


_EDGES = {
    "quality": "accuracy exactly 1 pp (the margin) worse, 2× faster",
    "latency": "3 pp more accurate, time ratio exactly 1",
    "cost tokens": "3 pp more accurate, 2× faster, per-token cost of equal mean (over examples)",
    "cost mixed": "3 pp more accurate, 2× faster, price per hour × throughput equal to a per-token cost",
}


def front_calibration(runs: int, seed: int, *, n: int = 500, rounds: int = 10, resamples: int = 200) -> tuple:
    """P(on the front) and whether truly on it, for 4 models of random true values per run."""
    rng = np.random.default_rng(grid_seed(4242, seed))
    p_all, truth_all = [], []
    for _ in range(runs):
        acc = rng.uniform(0.84, 0.90, 4)
        ms = np.exp(rng.uniform(0.0, math.log(1.5), 4))
        u = rng.random(n)  # errors nested through one uniform: paired, as models on one test set often are
        correct = {str(i): (u + 0.03 * rng.standard_normal(n)) < acc[i] for i in range(4)}
        drift = 0.05 * rng.standard_normal(rounds)
        lat = {str(i): _rounds(rng, ms[i], rounds, 0.08, drift) for i in range(4)}
        p = front_probabilities(correct, {"latency": lat}, resamples=resamples, seed=int(rng.integers(1 << 30)))
        truth = pareto_mask(np.stack([acc, -np.log(ms)], axis=1))  # P(u + 0.03 z < a) = a, u uniform
        p_all.extend(p[str(i)] for i in range(4))
        truth_all.extend(bool(t) for t in truth)
    return np.array(p_all), np.array(truth_all)


def _runs(rng: np.random.Generator, p: np.ndarray, k: int, run_sd: float) -> np.ndarray:
    """``k`` runs of a model right on example ``i`` with probability ``p[i]``, each run shifted as a whole."""
    shift = run_sd * rng.standard_normal(k)
    return rng.random((k, len(p))) < np.clip(p[None, :] + shift[:, None], 0.0, 1.0)


def repeated_margin_rate(n: int, k: int, run_sd: float, runs: int, seed: int, rounds: int = 10) -> np.ndarray:
    """Per simulated pair: "A dominates B" declared by ``decide``, A run ``k`` times with a mean accuracy exactly the
    margin below B's (run once), A 2× faster."""
    rng = np.random.default_rng(grid_seed(4343, n, k, int(run_sd * 1e4), seed))
    called = np.zeros(runs, bool)
    for r in range(runs):
        side = rng.choice([-1.0, 1.0], n)  # each example easy or hard for both: paired
        a = _runs(rng, 0.90 - MARGIN + 0.06 * side, k, run_sd)
        b = _runs(rng, 0.90 + 0.06 * side, 1, 0.0)[0]
        drift = 0.05 * rng.standard_normal(rounds)
        latency = {"A": _rounds(rng, 1.0, rounds, 0.05, drift), "B": _rounds(rng, 2.0, rounds, 0.05, drift)}
        found = decide({"A": a, "B": b}, {"latency": latency}, alpha=ALPHA, margin=MARGIN, resamples=20, seed=r)
        called[r] = next(p for p in found.pairs if (p.a, p.b) == ("A", "B")).dominates
    return called


def repeated_front_calibration(runs: int, seed: int, *, n: int = 500, rounds: int = 10, resamples: int = 200) -> tuple:
    """As :func:`front_calibration`, two of the four models run 3 times (run-to-run SD 1 pp), on the front by their
    true mean accuracy."""
    rng = np.random.default_rng(grid_seed(4444, seed))
    p_all, truth_all = [], []
    for _ in range(runs):
        acc = rng.uniform(0.84, 0.90, 4)
        ms = np.exp(rng.uniform(0.0, math.log(1.5), 4))
        u = rng.random(n)
        correct = {}
        for i in range(4):
            noise = 0.03 * rng.standard_normal(n)
            if i < 2:  # run 3 times: each run shifted as a whole, its mean truly acc[i]
                shift = 0.01 * rng.standard_normal(3)
                correct[str(i)] = (u[None, :] + noise[None, :] - shift[:, None]) < acc[i]
            else:
                correct[str(i)] = (u + noise) < acc[i]
        drift = 0.05 * rng.standard_normal(rounds)
        lat = {str(i): _rounds(rng, ms[i], rounds, 0.08, drift) for i in range(4)}
        p = front_probabilities(correct, {"latency": lat}, resamples=resamples, seed=int(rng.integers(1 << 30)))
        truth = pareto_mask(np.stack([acc, -np.log(ms)], axis=1))
        p_all.extend(p[str(i)] for i in range(4))
        truth_all.extend(bool(t) for t in truth)
    return np.array(p_all), np.array(truth_all)


_BINS = ((0.0, 0.1), (0.1, 0.5), (0.5, 0.9), (0.9, 1.0001))


def dominance_rows(*, quick: bool = False, seed: int = 0) -> list[Row]:
    """The false "dominates" rate at each axis's margin, and P(on the front)'s calibration in bins."""
    rows = []
    runs = 200 if quick else 4000
    grid = ((1000, 10),) if quick else ((200, 5), (1000, 10), (5000, 20))
    for edge, setting in _EDGES.items():
        for n, rounds in grid if edge != "cost mixed" or not quick else ():
            called = margin_rate(edge, n, rounds, runs, seed)
            rows.append(
                row(
                    "dominance",
                    f"'dominates' with {edge.split()[0]} exactly at its margin (intersection–union, each part at 95 %)",
                    f"{setting}; n = {n}, {rounds} rounds",
                    "error",
                    ALPHA,
                    called,
                    runs,
                    n=n,
                )
            )
    for n, k, run_sd in ((1000, 3, 0.01),) if quick else ((500, 3, 0.01), (2000, 3, 0.02), (2000, 5, 0.01)):
        called = repeated_margin_rate(n, k, run_sd, runs // 2 if quick else runs // 4, seed)
        rows.append(
            row(
                "dominance",
                "'dominates' with quality exactly at its margin, A run several times (two-level interval)",
                f"A run {k} times (run-to-run SD {100 * run_sd:.0f} pp), mean accuracy exactly 1 pp (the margin) "
                f"worse, 2× faster; n = {n}, 10 rounds",
                "error",
                ALPHA,
                called,
                len(called),
                n=n,
            )
        )
    known = "4 models, random true accuracy 84–90 % and latency 1–1.5 ms; n = 500, 10 rounds"
    p, truth = front_calibration(100 if quick else 2000, seed, resamples=100 if quick else 400)
    rows += _calibration_rows(p, truth, known, quick)
    p, truth = repeated_front_calibration(100 if quick else 2000, seed, resamples=100 if quick else 400)
    rows += _calibration_rows(p, truth, f"{known}; two of them run 3 times (run-to-run SD 1 pp)", quick)
    return rows


def _calibration_rows(p: np.ndarray, truth: np.ndarray, setting: str, quick: bool) -> list[Row]:
    rows = []
    for low, high in _BINS if not quick else _BINS[::3]:
        inside = (p >= low) & (p < high)
        if not inside.any():
            continue
        observed, predicted = float(truth[inside].mean()), float(p[inside].mean())
        rows.append(
            Row(
                "dominance",
                f"P(on the front) in [{low:.1f}, {min(high, 1.0):.1f}]: share truly on the front (known fronts)",
                f"{setting}; {int(inside.sum()):,} models in the bin",
                "calibration",
                predicted,
                observed,
                math.sqrt(max(observed * (1 - observed), 1e-12) / inside.sum()),
                int(inside.sum()),
            )
        )
    return rows
