"""Benchmark: the statistics of a run (``stats.analyse``) over many examples, optionally against another checkout.

Two models' synthetic predictions on ``n`` examples (2 classes, probabilities from seeded
logits, about 60 % and 65 % accurate) go through :func:`headtohead.stats.analyse` with 2,000
BCa resamples, as ``h2h run`` does. Each timing runs in a fresh process (``analyse`` alone is
timed, not the imports). ``--also SRC`` times the same call with the package imported from
another checkout's ``src`` folder (a worktree of an earlier commit), alternating round by
round, and prints the ratio, so a change to the statistics is measured side by side.

Run with ``.venv/bin/python benchmarks/bench_analyse.py [--n 1000000] [--rounds 3] [--also SRC]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = """
import sys, time
import numpy as np
from headtohead.results.predictions import Predictions
from headtohead.stats import analyse

n = int(sys.argv[1])
rng = np.random.default_rng(0)
y = rng.integers(0, 2, n)
predictions = Predictions(np.arange(n), y, ("negative", "positive"))
for s in (1, 2):
    p = 1 / (1 + np.exp(-(rng.normal(0, 1.5, n) + (2 * y - 1) * 0.3 * s)))
    proba = np.stack([1 - p, p], 1).astype(np.float32)
    predictions.add(f"m{s}", proba.argmax(1), proba)
began = time.perf_counter()
analyse(predictions, n_resamples=2000)
print(time.perf_counter() - began)
"""


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--also", type=Path, metavar="SRC", help="another checkout's src/ folder to time beside this one"
    )
    return parser.parse_args()


def _seconds(n: int, src: Path | None) -> float:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src.resolve())
    done = subprocess.run([sys.executable, "-c", CHILD, str(n)], env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"analyse failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return float(done.stdout.split()[-1])


def main() -> int:
    args = _arguments()
    contenders: dict[str, Path | None] = {"this checkout": None}
    if args.also is not None:
        contenders[f"--also {args.also}"] = args.also
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; analyse of 2 models on {args.n:,} examples, 2,000 BCa resamples"
    )
    seconds: dict[str, list[float]] = {name: [] for name in contenders}
    names = list(contenders)
    for r in range(1, args.rounds + 1):
        for name in names if r % 2 else names[::-1]:
            seconds[name].append(_seconds(args.n, contenders[name]))
        print(f"round {r}: " + ", ".join(f"{n} {seconds[n][-1]:.2f} s" for n in names), flush=True)
    base = statistics.median(seconds[names[0]])
    for name in names:
        median = statistics.median(seconds[name])
        print(
            f"{name:40s} median {median:6.2f} s  ({min(seconds[name]):.2f}–{max(seconds[name]):.2f})  "
            f"{median / base:.2f}× this checkout's time"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
