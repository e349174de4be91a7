"""Simulation: one prompt against a pool of prompts — how often is an LLM called better than an equal model?

A model asked with five prompts whose accuracies differ by known amounts (−8, −4, 0, +4, +8 pp
around its mean) is compared with a model of the same mean accuracy (75 %) on 500 examples of
shared difficulty (``benchmarks/sim/prompts.py``). Per run:

* **pooled** — the comparison over all five prompts (``headtohead.stats.prompt_pool.pooled_gap``, the
  statistic behind ``stats.prompts`` of a run): "better" when its interval excludes 0;
* **one prompt** — the run's paired test (McNemar's score test, ``PairedCorrectness``) on one prompt
  drawn at random, as a run with a single prompt would do;
* **best prompt** — the paired test on the prompt that scored best in this run (chosen after seeing it).

Scenarios: ``fixed`` (the five offsets above, the done-criterion of issue 31), ``random`` (each run
draws five offsets from N(0, 4 pp): prompts a random sample, the encoder equal to their population
mean; "examples only" is the pooled test without the prompts' term), ``power`` (the LLM's mean +6 pp).

Run: ``PYTHONPATH=src .venv/bin/python benchmarks/prompt_noise.py`` (2,000 runs per scenario, a few
minutes; ``--runs 500`` for fewer). Seeded: the same command prints the same table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim.prompts import FIXED_OFFSETS, prompt_correctness  # noqa: E402

from headtohead.stats.paired import PairedCorrectness  # noqa: E402
from headtohead.stats.prompt_pool import pooled_gap  # noqa: E402

ALPHA = 0.05
N_EXAMPLES = 500


def _examples_only(a: np.ndarray, b: np.ndarray) -> bool:
    """The pooled rows clustered by example, without the prompts' term: treats the five prompts as fixed."""
    n = a.shape[1]
    paired = PairedCorrectness.of(a.ravel(), np.tile(b, (len(a), 1)).ravel(), groups=np.tile(np.arange(n), len(a)))
    return bool(paired.p_value < ALPHA)


def simulate(scenario: str, runs: int, seed: int = 0) -> dict[str, float]:
    """Shares of runs that declare a winner, per method, and the pooled interval's coverage of the true gap."""
    rng = np.random.default_rng([seed, {"fixed": 0, "random": 1, "power": 2}[scenario]])
    hits = {"pooled": 0, "one prompt": 0, "best prompt": 0, "examples only": 0, "covers": 0}
    for _ in range(runs):
        offsets = rng.normal(0.0, 0.04, 5) if scenario == "random" else np.array(FIXED_OFFSETS)
        gap = 0.06 if scenario == "power" else 0.0
        a, b = prompt_correctness(rng, N_EXAMPLES, offsets, gap=gap)
        pooled = pooled_gap(a, b, confidence=1 - ALPHA)
        truth = gap + (0.0 if scenario == "random" else float(np.mean(offsets)))
        hits["pooled"] += pooled.p_value < ALPHA
        hits["covers"] += pooled.low <= truth <= pooled.high
        hits["one prompt"] += PairedCorrectness.of(a[rng.integers(len(a))], b[0]).p_value < ALPHA
        hits["best prompt"] += PairedCorrectness.of(a[int(np.argmax(a.mean(axis=1)))], b[0]).p_value < ALPHA
        hits["examples only"] += _examples_only(a, b)
    return {k: v / runs for k, v in hits.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"{N_EXAMPLES} examples, 5 prompts, α = {ALPHA}, {args.runs} runs per scenario, seed {args.seed}")
    print("| scenario | 'better': pooled | one prompt | best prompt | examples only | pooled interval covers |")
    print("|---|---|---|---|---|---|")
    for scenario in ("fixed", "random", "power"):
        r = simulate(scenario, args.runs, args.seed)
        se = np.sqrt(r["pooled"] * (1 - r["pooled"]) / args.runs)
        print(
            f"| {scenario} | {r['pooled']:.1%} (± {se:.1%}) | {r['one prompt']:.1%} | {r['best prompt']:.1%} | "
            f"{r['examples only']:.1%} | {r['covers']:.1%} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
