"""Benchmark: headtohead's paired bootstrap against ``scipy.stats.bootstrap(paired=True)``.

10,000 resamples of 100,000 examples, the difference in accuracy and in macro-F1 between two
models (3 classes). Run with ``.venv/bin/python benchmarks/bench_bootstrap.py``; not part of
the test suite (the tests check that both give the same intervals on small cases).

SciPy materialises every resample and, for BCa, 100,000 jackknife samples of 99,999 rows,
which would take a very long time here. So SciPy's percentile interval is timed on fewer
resamples and scaled linearly to 10,000 (its cost is linear in the resamples), and BCa is
compared on a smaller problem both libraries finish. The output says which numbers are scaled.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from headtohead.stats.bootstrap import paired_bootstrap

K = 3


def make_data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """True labels and two models' predictions (about 80 % and 75 % accurate)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    a = np.where(rng.random(n) < 0.8, y, rng.integers(0, K, n))
    b = np.where(rng.random(n) < 0.75, y, rng.integers(0, K, n))
    return y, a, b


def accuracy_diff(y: np.ndarray, a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    """Vectorised statistic for SciPy: accuracy(a) − accuracy(b) along ``axis``."""
    return (a == y).mean(axis=axis) - (b == y).mean(axis=axis)


def macro_f1_diff(y: np.ndarray, a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    """Vectorised statistic for SciPy: macro-F1(a) − macro-F1(b) (scikit-learn's definition)."""

    def f1(pred: np.ndarray) -> np.ndarray:
        scores = []
        for k in range(K):
            tp = ((y == k) & (pred == k)).sum(axis=axis)
            den = (y == k).sum(axis=axis) + (pred == k).sum(axis=axis)
            scores.append(np.where(den > 0, 2 * tp / np.maximum(den, 1), 0.0))
        return np.mean(scores, axis=0)

    return f1(a) - f1(b)


def timed(fn):  # noqa: ANN001, ANN201
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--scipy-resamples", type=int, default=200, help="SciPy runs this many, scaled up")
    args = parser.parse_args()
    y, a, b = make_data(args.n)
    print(
        f"paired bootstrap, {args.resamples:,} resamples x {args.n:,} examples, {K} classes, "
        f"difference in accuracy and macro-F1"
    )

    rows = []
    for method in ("percentile", "bca"):
        res, t = timed(
            lambda: paired_bootstrap(
                y, a, b, metrics=["accuracy", "f1_macro"], n_resamples=args.resamples, method=method, seed=0
            )
        )
        rows.append((f"headtohead {method} (auto sampler)", t, res))
    res, t = timed(
        lambda: paired_bootstrap(
            y,
            a,
            b,
            metrics=["accuracy", "f1_macro"],
            n_resamples=args.resamples,
            method="percentile",
            seed=0,
            sampler="index",
        )
    )
    rows.append(("headtohead percentile (index sampler, forced)", t, res))
    for label, t, res in rows:
        print(
            f"  {label:48s} {t:8.2f} s   accuracy CI [{res['accuracy'].low:+.5f}, {res['accuracy'].high:+.5f}]"
            f"   macro-F1 CI [{res['f1_macro'].low:+.5f}, {res['f1_macro'].high:+.5f}]"
        )

    scipy_total = 0.0
    for name, fn in (("accuracy", accuracy_diff), ("macro-F1", macro_f1_diff)):
        ref, t = timed(
            lambda: stats.bootstrap(
                (y, a, b),
                fn,
                paired=True,
                vectorized=True,
                n_resamples=args.scipy_resamples,
                batch=50,
                method="percentile",
                rng=np.random.default_rng(1),
            )
        )
        scaled = t * args.resamples / args.scipy_resamples
        scipy_total += scaled
        ci = ref.confidence_interval
        print(
            f"  scipy percentile, {name:9s} ({args.scipy_resamples} resamples: {t:6.2f} s) "
            f"scaled to {args.resamples:,}: {scaled:8.1f} s   CI [{ci.low:+.5f}, {ci.high:+.5f}]"
        )
    ours = rows[0][1]
    print(
        f"  ratio, percentile, both metrics: scipy {scipy_total:.1f} s (scaled) / headtohead {ours:.2f} s "
        f"= {scipy_total / ours:,.0f}x faster"
    )

    small_n, small_b = 3_000, 2_000
    ys, as_, bs = make_data(small_n, seed=1)
    _, t_ours = timed(
        lambda: paired_bootstrap(
            ys, as_, bs, metrics=["accuracy", "f1_macro"], n_resamples=small_b, method="bca", seed=0
        )
    )
    t_scipy = 0.0
    for fn in (accuracy_diff, macro_f1_diff):
        _, t = timed(
            lambda: stats.bootstrap(
                (ys, as_, bs),
                fn,
                paired=True,
                vectorized=True,
                n_resamples=small_b,
                batch=200,
                method="BCa",
                rng=np.random.default_rng(1),
            )
        )
        t_scipy += t
    print(
        f"BCa on a smaller problem ({small_b:,} resamples x {small_n:,} examples, both metrics, not scaled): "
        f"scipy {t_scipy:.2f} s, headtohead {t_ours:.3f} s = {t_scipy / t_ours:,.0f}x faster"
    )


if __name__ == "__main__":
    main()
