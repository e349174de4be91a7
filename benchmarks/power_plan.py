"""Simulation: does ``h2h plan``'s sample size give the power it promises?

For several plans, the large-sample formula's ``n`` (Connor 1987, what ``h2h plan`` used to
print) and the exact-power ``n`` it prints now, each with the exact power of headtohead's
McNemar rule (:func:`headtohead.stats.power.mcnemar_power`) and the power simulated by
running that rule on seeded random tables (:func:`headtohead.stats.power.simulated_power`).
With more than two models the power is at Holm's first step, α / (k(k−1)/2). Then the
minimum detectable effect the verdict quotes for 872 examples.

Run: ``PYTHONPATH=src .venv/bin/python benchmarks/power_plan.py`` (seconds).
"""

from __future__ import annotations

import math

from headtohead.stats.power import (
    mcnemar_power,
    minimum_detectable_effect,
    normal_approx_power,
    plan_sample_size,
    simulated_power,
)

N_SIMS = 40_000
#: (baseline accuracy, gap, discordance or None for independent errors, models)
PLANS = [
    (0.90, 0.05, 0.10, 2),
    (0.90, 0.02, 0.06, 2),
    (0.95, 0.02, 0.03, 2),
    (0.90, 0.005, 0.06, 2),
    (0.85, 0.03, None, 2),
    (0.90, 0.05, 0.10, 3),
    (0.90, 0.05, 0.10, 5),
]


def main() -> None:
    print(
        f"Simulated power: {N_SIMS:,} tables per cell, Monte-Carlo s.e. ≈ "
        f"{100 * math.sqrt(0.8 * 0.2 / N_SIMS):.2f} pp\n"
    )
    print(
        "| accuracy | gap | discordance | models | formula n | its exact power | its simulated power "
        "| plan n | exact power | simulated power |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for i, (accuracy, delta, discordance, models) in enumerate(PLANS):
        plan = plan_sample_size(accuracy, delta, discordance, n_models=models)
        psi, level, old = plan.discordance, plan.test_alpha, plan.normal_approx_n
        cells = [
            f"{old:,}",
            f"{mcnemar_power(old, delta, psi, level):.3f}",
            f"{simulated_power(old, delta, psi, alpha=level, n_sims=N_SIMS, seed=2 * i):.3f}",
            f"{plan.n:,}",
            f"{plan.power:.3f}",
            f"{simulated_power(plan.n, delta, psi, alpha=level, n_sims=N_SIMS, seed=2 * i + 1):.3f}",
        ]
        shown = f"{psi:.3f}" + (" (independent)" if plan.discordance_assumed else "")
        print(f"| {accuracy:g} | {delta:g} | {shown} | {models} | " + " | ".join(cells) + " |")

    print("\nMinimum detectable effect at 80 % power, 872 examples (SST-2 dev):\n")
    print("| observed discordance | models | formula (old) | exact, Holm's first step (now) |")
    print("|---|---|---|---|")
    for psi in (0.04, 0.08, 0.15):
        for models in (2, 3, 5):
            pairs = models * (models - 1) // 2
            old = _formula_mde(872, psi)
            new = minimum_detectable_effect(872, psi, n_comparisons=pairs)
            print(f"| {psi:g} | {models} | {100 * old:.2f} pp | {100 * new:.2f} pp |")  # type: ignore[operator]


def _formula_mde(n: int, psi: float) -> float:
    """The old verdict's figure: the gap at which the large-sample power reaches 0.8 (α = 0.05, no Holm)."""
    from scipy import optimize

    return float(optimize.brentq(lambda d: normal_approx_power(n, d, max(psi, d)) - 0.8, 1e-9, 1 - 1e-9))


if __name__ == "__main__":
    main()
