"""Simulation: how often does the speed verdict call identical models different (A/A), and power at 1.10×?

Simulated benchmarks (:func:`sim.latency.simulate_round_medians` (``benchmarks/sim/latency.py``): log-normal
calls with 1 % spikes, a drift shared by both models that also moves within a round, a
small per-block offset, order alternating A,B / B,A), reduced to round medians as the
engine does, judged by :func:`headtohead.stats.speed.speed_ratio` at 95 %. For every number
of rounds the table gives the share of A/A benchmarks with a "faster" verdict (should be
≤ 5 %) and the share of benchmarks with a true 1.10× difference where the faster model is
named (power), for the t interval (the default) and the expanded-percentile bootstrap used
before. ``calls`` is the timed calls per model and round (the engine runs at least
``min_iterations / rounds`` and at least ``min_seconds / rounds`` of them).

Run: ``PYTHONPATH=src .venv/bin/python benchmarks/speed_aa.py`` (a few minutes; ``--quick``
for fewer samples). Seeded: the same command prints the same table.
"""

from __future__ import annotations

import argparse
import math

from sim.latency import simulate_round_medians

from headtohead.stats.speed import speed_ratio

ROUNDS = (5, 6, 8, 10, 20)


def rates(n_rounds: int, calls: int, ratio: float, n_sims: int, method: str, seed: int) -> float:
    """Share of simulated benchmarks whose verdict names a faster model (B when ``ratio > 1``)."""
    a, b = simulate_round_medians(n_rounds, n_sims=n_sims, calls_per_block=calls, ratio=ratio, seed=seed)
    verdicts = [speed_ratio(a[i], b[i], method=method, seed=i).faster for i in range(n_sims)]  # type: ignore[arg-type]
    if ratio == 1.0:
        return sum(v is not None for v in verdicts) / n_sims
    return sum(v == "b" for v in verdicts) / n_sims


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples (seconds)")
    args = parser.parse_args()
    n_t, n_boot = (2000, 300) if args.quick else (20000, 3000)
    print(
        f"A/A: t interval over {n_t:,} benchmarks (Monte-Carlo s.e. at 5 %: "
        f"{100 * math.sqrt(0.05 * 0.95 / n_t):.2f} pp), bootstrap over {n_boot:,} "
        f"({100 * math.sqrt(0.05 * 0.95 / n_boot):.2f} pp); power over a quarter as many\n"
    )
    print(
        "| calls per block | rounds | A/A 'faster', t | A/A 'faster', bootstrap | power at 1.10×, t "
        "| power at 1.10×, bootstrap |"
    )
    print("|---|---|---|---|---|---|")
    for calls in (20, 4):
        for n_rounds in ROUNDS:
            seed = 1000 * calls + n_rounds
            cells = [
                rates(n_rounds, calls, 1.0, n_t, "t", seed),
                rates(n_rounds, calls, 1.0, n_boot, "bootstrap", seed),
                rates(n_rounds, calls, 1.1, n_t // 4, "t", seed + 1),
                rates(n_rounds, calls, 1.1, n_boot // 4, "bootstrap", seed + 1),
            ]
            print(f"| {calls} | {n_rounds} | " + " | ".join(f"{100 * c:.1f} %" for c in cells) + " |", flush=True)


if __name__ == "__main__":
    main()
