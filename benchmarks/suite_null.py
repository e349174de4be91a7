"""Simulation: how often do the tests across data sets call equally good models different, and how often do they find
a real difference?

Each simulated suite has N data sets of different difficulty (a level drawn uniformly in
[0.6, 0.95]) and k models whose scores are the level plus N(shift_j, 0.02), rounded to three
decimals as real tables are (so ties happen). Under the null every shift is 0; under the
alternative the last model is better by ``shift``. Reported per (N, k): the share of suites in
which Iman–Davenport rejects at α = 0.05, in which the exact Wilcoxon signed-rank test rejects
for one fixed pair, in which Holm over all pairs rejects any pair (the family-wise error), and
under the alternative the share in which Holm names the better model against the first.

Run: ``PYTHONPATH=src .venv/bin/python benchmarks/suite_null.py`` (about two minutes; ``--quick`` for fewer
suites). Seeded: the same command prints the same table.
"""

from __future__ import annotations

import argparse
import itertools
import math

import numpy as np

from headtohead.stats.across_datasets import friedman_test, iman_davenport_test, omnibus_significant, signed_rank_test
from headtohead.stats.multiple import holm_rows

ALPHA = 0.05
CASES = ((6, 3), (10, 3), (14, 4), (20, 5), (30, 3))


def simulate(n: int, k: int, shift: float, n_sims: int, seed: int) -> tuple[float, float, float, float]:
    """(Iman–Davenport rejects, one pair rejects, Holm rejects any pair, Holm names the better model) as shares."""
    rng = np.random.default_rng(seed)
    pairs = list(itertools.combinations(range(k), 2))
    shifts = np.zeros(k)
    shifts[-1] = shift
    iman = 0
    p = np.empty((n_sims, len(pairs)))
    better = np.empty(n_sims, dtype=bool)  # the last model is ahead of the first in the last pair's test
    last = pairs.index((0, k - 1))
    for s in range(n_sims):
        level = rng.uniform(0.6, 0.95, size=(n, 1))
        scores = np.round(level + shifts + rng.normal(0, 0.02, size=(n, k)), 3)
        friedman = friedman_test(scores)
        iman += bool(omnibus_significant(friedman, iman_davenport_test(friedman, n, k), ALPHA))
        tests = [signed_rank_test(scores[:, i], scores[:, j]) for i, j in pairs]
        p[s] = [t.p_value for t in tests]
        better[s] = tests[last].w_minus > tests[last].w_plus
    adjusted = holm_rows(p)
    return (
        iman / n_sims,
        float(np.mean(p[:, 0] <= ALPHA)),
        float(np.mean(np.any(adjusted <= ALPHA, axis=1))),
        float(np.mean((adjusted[:, last] <= ALPHA) & better)),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="2,000 suites per row instead of 10,000")
    args = parser.parse_args()
    n_sims = 2000 if args.quick else 10_000
    se = math.sqrt(ALPHA * (1 - ALPHA) / n_sims)
    print(f"{n_sims:,} simulated suites per row; Monte-Carlo s.e. at 5 %: {100 * se:.2f} pp\n")
    print(
        "| data sets N | models k | Iman–Davenport rejects (null) | one pair's Wilcoxon rejects (null) | "
        "Holm: any pair rejected (null) | Holm names the better model, +2 pp (power) |"
    )
    print("|---|---|---|---|---|---|")
    for index, (n, k) in enumerate(CASES):
        iman, single, family, _ = simulate(n, k, 0.0, n_sims, seed=100 + index)
        *_, power = simulate(n, k, 0.02, n_sims // 2, seed=200 + index)
        print(f"| {n} | {k} | {100 * iman:.1f} % | {100 * single:.1f} % | {100 * family:.1f} % | {100 * power:.1f} % |")


if __name__ == "__main__":
    main()
