"""Simulation: how often each speed warning fires on steady, drifting and too-noisy benchmarks.

Simulated benchmarks (:func:`sim.latency.simulate_model_rounds` (``benchmarks/sim/latency.py``): log-normal calls
σ = 0.10 with 1 % spikes, 20 calls per block, models in Williams orders, two scenarios) judged by
the rules of :mod:`headtohead.stats.speed_family` (vectorised in ``benchmarks/audit/speed.py``;
α = 0.05, limit ±10 %), every model identical unless said otherwise. Machines:

* steady — the level varies 2 % from round to round around a steady level;
* wandering — a random walk of 5 % per round shared by every model (the A/A machine of
  ``benchmarks/speed_aa.py``);
* throttling — wandering, and every call 2 % slower each round;
* warming — steady, but the first model gets 1 % slower each round relative to the others;
* too noisy — steady, calls σ = 0.30 and 8 calls per block.

Columns: each rule's share of benchmarks with at least one warning of it, any of the new
warnings, and the repeat-noise warning used before (IQR/median of repeated calls > 10 %).

Run: ``PYTHONPATH=src .venv/bin/python benchmarks/speed_warnings.py`` (about a minute;
``--quick`` for fewer benchmarks). Seeded: the same command prints the same table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from audit.speed import _seed, simulate, warning_rules  # noqa: E402

MACHINES = {
    "steady": ({"round_drift": 0.0, "round_sigma": 0.02}, {}),
    "wandering": ({"round_drift": 0.05}, {}),
    "throttling": ({"round_drift": 0.05, "trend": 0.02}, {}),
    "warming": ({"round_drift": 0.0, "round_sigma": 0.02}, {"warming": 0.01}),
    "too noisy": ({"round_drift": 0.0, "round_sigma": 0.02, "call_sigma": 0.30}, {"calls": 8}),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer benchmarks (seconds)")
    args = parser.parse_args()
    n_sims = 500 if args.quick else 4000
    print(f"{n_sims:,} simulated benchmarks per line, 2 scenarios each\n")
    print(
        "| machine | models | rounds | undecided, CI wider than ±10 % | ratio drift | machine drift | any warning "
        "| before: repeat noise > 10 % |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for m, (name, (machine, extra)) in enumerate(MACHINES.items()):
        for k in (2, 5):
            for rounds in (5, 10, 20):
                trends = [extra["warming"]] + [0.0] * (k - 1) if "warming" in extra else None
                sims = simulate(
                    k,
                    rounds,
                    2,
                    n_sims,
                    machine,
                    seed=_seed(7, m, k, rounds),
                    calls=extra.get("calls", 20),
                    model_trends=trends,
                )
                rules = warning_rules(sims)
                cells = [rules[r].mean() for r in ("too_wide", "ratio_drift", "level_drift", "any", "old")]
                print(
                    f"| {name} | {k} | {rounds} | " + " | ".join(f"{100 * c:.1f} %" for c in cells) + " |", flush=True
                )


if __name__ == "__main__":
    main()
