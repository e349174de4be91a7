"""Simulation proof of the sequential comparison (:mod:`headtohead.stats.sequential`).

Prints Markdown tables (seeded, so the same command prints the same numbers):

(a) false "A better"/"B better" rate when both models are equally accurate, for several
    discordance rates, every chunk size offered and looking after *every* example, with
    1,000 (SST-2 dev's 872) and 5,000 examples available — all must be ≤ α;
(b) false "equivalent" rate when the true gap sits exactly on the margin — must be ≤ α;
(c) decisions and examples used at true gaps of 0, 2, 5 and 10 points, against the fixed-n
    McNemar test on all examples;
(d) with ``../shared/data/sst2`` present: two real models on SST-2 dev replayed in 200 random
    orders, against the full-data McNemar verdict.

Run: ``nice .venv/bin/python benchmarks/sim_sequential.py [--reps 20000] [--quick]``.
Not part of the test suite (tests/test_stats_sequential.py checks the same bounds on fewer runs).
"""

from __future__ import annotations

import argparse
import csv
import math
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from headtohead.stats.mcnemar import mcnemar_pvalues
from headtohead.stats.sequential import DECISIONS, first_decisions, log_e_values, path_e_values, replay

ALPHA = 0.05
CHUNKS = (25, 50, 100, 200)
MAX_NS = (872, 5000)
SST2 = Path(__file__).resolve().parents[2] / "shared" / "data" / "sst2"


def cumulative_counts(
    rng: np.random.Generator, reps: int, n: int, p_only_a: float, p_only_b: float, batch: int = 2000
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Batches of cumulative (b, c) after each of ``n`` i.i.d. paired examples, shape (batch, n)."""
    for start in range(0, reps, batch):
        u = rng.random((min(batch, reps - start), n), dtype=np.float32)
        yield (
            np.cumsum(u < p_only_a, axis=1, dtype=np.int32),
            np.cumsum((u >= p_only_a) & (u < p_only_a + p_only_b), axis=1, dtype=np.int32),
        )


def looks(chunk: int, max_n: int) -> np.ndarray:
    """Example counts at which a run with this chunk size looks (the last chunk may be short)."""
    return np.unique(np.r_[np.arange(chunk, max_n + 1, chunk), max_n])


def union_e_values(b: np.ndarray, c: np.ndarray, margin: float | None) -> tuple[np.ndarray, np.ndarray]:
    """Log e-values at every look of every rule (once), and the example counts of those looks."""
    at = np.unique(np.concatenate([looks(chunk, max_n) for chunk in CHUNKS for max_n in MAX_NS]))
    return at, path_e_values(b[:, at - 1], c[:, at - 1], np.broadcast_to(at, (len(b), at.size)), margin)


def better_boundary(limit: int) -> np.ndarray:
    """``boundary[c]`` = the least b for which "A better" is declared with c (ties do not matter at Δ = 0).

    The e-value against Δ = 0 increases in b and decreases in c, so the decision is
    ``b ≥ boundary[c]``; by symmetry "B better" is ``c ≥ boundary[b]``. Bisection over b for every c.
    """
    c = np.arange(limit + 1)
    lo, hi = np.full(c.shape, -1), np.full(c.shape, limit + 1)  # lo never decides, hi always (or beyond)
    threshold = math.log(2 / ALPHA)
    while np.any(hi - lo > 1):
        mid = (lo + hi) // 2
        active = hi - lo > 1
        up, _ = log_e_values(mid[active], c[active], mid[active] + c[active])
        decided = np.zeros(c.shape, dtype=bool)
        decided[active] = up >= threshold
        hi = np.where(active & decided, mid, hi)
        lo = np.where(active & ~decided, mid, lo)
    return hi


def table_null(reps: int, seed: int) -> None:
    print(f'\n### (a) False "better" rate under the null (equal accuracies), α = {ALPHA}, {reps:,} runs each\n')
    limit = max(MAX_NS)
    boundary = np.r_[better_boundary(limit), limit + 1]
    rules = [(chunk, max_n) for max_n in MAX_NS for chunk in (1, *CHUNKS)]
    header = " | ".join(
        f"n ≤ {max_n:,}, {'every example' if chunk == 1 else f'chunk {chunk}'}" for chunk, max_n in rules
    )
    print(f"| discordance | {header} | MC SE of the largest |")
    print("|---|" + "---|" * (len(rules) + 1))
    worst = 0.0
    for i, discordance in enumerate((0.05, 0.1, 0.2, 0.4)):
        rng = np.random.default_rng([seed, 1, i])
        false = np.zeros(len(rules))
        for k, (b, c) in enumerate(cumulative_counts(rng, reps, limit, discordance / 2, discordance / 2)):
            crossed = (b >= boundary[c]) | (c >= boundary[b])
            for r, (chunk, max_n) in enumerate(rules):
                false[r] += crossed[:, looks(chunk, max_n) - 1].any(axis=1).sum()
            if k == 0:  # the boundary shortcut must agree with the decision function itself
                at = looks(25, 872) - 1
                log_e = path_e_values(b[:300, at], c[:300, at], np.broadcast_to(at + 1, (300, at.size)))
                code, _ = first_decisions(log_e, alpha=ALPHA)
                assert np.array_equal(code != 0, crossed[:300, at].any(axis=1)), "boundary disagrees"
        rates = false / reps
        worst = max(worst, rates.max())
        se = math.sqrt(max(rates.max(), 1e-9) * (1 - rates.max()) / reps)
        print(f"| {discordance:g} | " + " | ".join(f"{x:.4f}" for x in rates) + f" | {se:.4f} |")
    print(f"\nLargest false-positive rate: {worst:.4f} (α = {ALPHA}).")


def table_equivalence(reps: int, seed: int) -> None:
    print(f'\n### (b) False "equivalent" rate with the true gap on the margin (Δ = +margin), {reps:,} runs each\n')
    print(
        "Decisions as run (stop at the first decision); the last column counts a crossing of the equivalence "
        'bounds at any 25-example look even after a "better" decision (the worst case).\n'
    )
    cols = [f"n ≤ {max_n:,}, chunk {chunk}" for max_n in MAX_NS for chunk in CHUNKS]
    print("| margin | discordance | " + " | ".join(cols) + " | n ≤ 5,000, chunk 25, ignoring stops |")
    print("|---|---|" + "---|" * (len(cols) + 1))
    worst = 0.0
    for i, (margin, discordance) in enumerate(
        [(0.02, 0.05), (0.02, 0.1), (0.02, 0.2), (0.02, 0.4), (0.05, 0.1), (0.05, 0.2), (0.05, 0.4)]
    ):
        rng = np.random.default_rng([seed, 2, i])
        counts = np.zeros(len(cols) + 1)
        for b, c in cumulative_counts(rng, reps, max(MAX_NS), (discordance + margin) / 2, (discordance - margin) / 2):
            at, log_e = union_e_values(b, c, margin)
            r = 0
            for max_n in MAX_NS:
                for chunk in CHUNKS:
                    code, _ = first_decisions(log_e[:, np.searchsorted(at, looks(chunk, max_n))], alpha=ALPHA)
                    counts[r] += np.sum(code == DECISIONS.index("equivalent"))
                    r += 1
            ever = log_e[:, np.searchsorted(at, looks(25, max(MAX_NS))), 2:] >= math.log(1 / ALPHA)
            counts[-1] += np.sum(ever.any(axis=1).all(axis=-1))
        rates = counts / reps
        worst = max(worst, rates.max())
        print(f"| {margin:g} | {discordance:g} | " + " | ".join(f"{x:.4f}" for x in rates) + " |")
    print(f"\nLargest false-equivalence rate: {worst:.4f} (α = {ALPHA}).")


def table_power(reps: int, seed: int, chunk: int = 50, margin: float = 0.03) -> None:
    print(f"\n### (c) Decisions and examples used, chunk {chunk}, margin {margin:g}, {reps:,} runs each\n")
    print(
        "| discordance | true gap | max n | A better | B better | equivalent | undecided | mean n used | "
        "median n | saved vs max n | McNemar at max n: A better |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for i, discordance in enumerate((0.1, 0.2)):
        for j, gap in enumerate((0.0, 0.02, 0.05, 0.10)):
            rng = np.random.default_rng([seed, 3, i, j])
            per_max = {max_n: {"code": [], "used": [], "mcnemar": []} for max_n in MAX_NS}
            for b, c in cumulative_counts(rng, reps, max(MAX_NS), (discordance + gap) / 2, (discordance - gap) / 2):
                at, log_e = union_e_values(b, c, margin)
                for max_n in MAX_NS:
                    rule = looks(chunk, max_n)
                    code, look = first_decisions(log_e[:, np.searchsorted(at, rule)], alpha=ALPHA)
                    per_max[max_n]["code"].append(code)
                    per_max[max_n]["used"].append(
                        np.where(look < rule.size, rule[np.minimum(look, rule.size - 1)], max_n)
                    )
                    _, p, _ = mcnemar_pvalues(b[:, max_n - 1], c[:, max_n - 1])
                    per_max[max_n]["mcnemar"].append((p <= ALPHA) & (b[:, max_n - 1] > c[:, max_n - 1]))
            for max_n, got in per_max.items():
                code, used = np.concatenate(got["code"]), np.concatenate(got["used"])
                shares = np.bincount(code, minlength=len(DECISIONS)) / reps
                print(
                    f"| {discordance:g} | {100 * gap:g} pp | {max_n:,} | {shares[1]:.3f} | {shares[2]:.3f} | "
                    f"{shares[3]:.3f} | {shares[0]:.3f} | {used.mean():.0f} | {np.median(used):.0f} | "
                    f"{1 - used.mean() / max_n:.0%} | {np.concatenate(got['mcnemar']).mean():.3f} |"
                )


def sst2_correctness() -> dict[str, np.ndarray]:
    """Per-example correctness on SST-2 dev of TF-IDF models trained on SST-2 train."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import ComplementNB
    from sklearn.pipeline import make_pipeline

    def read(name: str) -> tuple[list[str], np.ndarray]:
        with open(SST2 / name, newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
        return [r["text"] for r in rows], np.array([int(r["label"]) for r in rows])

    train_x, train_y = read("train.tsv")
    dev_x, dev_y = read("dev.tsv")
    models = {
        "logreg-20k": (LogisticRegression(max_iter=1000, C=4.0), 20_000),
        "naive-bayes-20k": (ComplementNB(), 20_000),
        "logreg-300": (LogisticRegression(max_iter=1000, C=4.0), 300),
    }
    correct = {}
    for name, (classifier, rows) in models.items():
        pipeline = make_pipeline(
            TfidfVectorizer(ngram_range=(1, 2), min_df=2 if rows > 1000 else 1, sublinear_tf=True), classifier
        )
        pipeline.fit(train_x[:rows], train_y[:rows])
        correct[name] = pipeline.predict(dev_x) == dev_y
    return correct


def table_real(seed: int, orders: int = 200, chunk: int = 50, margin: float = 0.03) -> None:
    if not SST2.is_dir():
        print(f"\n(d) skipped: {SST2} not found")
        return
    correct = sst2_correctness()
    print(f"\n### (d) SST-2 dev (872 sentences), {orders} seeded random orders, chunk {chunk}, margin {margin:g}\n")
    print(
        "| A vs B | accuracy A / B | full-data McNemar p | sequential decisions | examples used: median "
        "(min–max) | seed-0 order |"
    )
    print("|---|---|---|---|---|---|")
    for a_name, b_name in (("logreg-20k", "logreg-300"), ("logreg-20k", "naive-bayes-20k")):
        a, b = correct[a_name], correct[b_name]
        n_b, n_c = int(np.sum(a & ~b)), int(np.sum(~a & b))
        _, p, _ = mcnemar_pvalues(np.array(n_b), np.array(n_c))
        decisions, used = [], []
        for k in range(orders):
            order = np.random.default_rng([seed, 4, k]).permutation(a.size)
            final = replay(a[order], b[order], chunk, alpha=ALPHA, margin=margin)[-1]
            decisions.append(final.decision if final.decision != "continue" else "undecided")
            used.append(final.n)
        names, counts = np.unique(decisions, return_counts=True)
        first = f"{decisions[0]} after {used[0]}"
        print(
            f"| {a_name} vs {b_name} | {a.mean():.3f} / {b.mean():.3f} (b = {n_b}, c = {n_c}) | {float(p):.2g} | "
            + ", ".join(f"{name} {count}" for name, count in zip(names, counts, strict=True))
            + f" | {int(np.median(used))} ({min(used)}–{max(used)}) | {first} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20_000, help="simulated runs per null configuration")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="2,000 runs everywhere (a smoke run)")
    args = parser.parse_args()
    reps = 2000 if args.quick else args.reps
    start = time.perf_counter()
    table_null(reps, args.seed)
    table_equivalence(max(reps // 4, 2000), args.seed)
    table_power(max(reps // 5, 2000), args.seed)
    table_real(args.seed)
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
