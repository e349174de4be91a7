"""Simulation: does the calibration-error interval cover the true value?

Binary top-label models on ``n`` = 872 examples (SST-2 dev's size): confidence ``s`` drawn
from a fixed distribution, the prediction right with probability ``g(s)``. ``g(s) = s`` is
a perfectly calibrated model (true calibration error 0); ``g(s) = s − δ`` is uniformly
overconfident by δ (true error δ in ℓ1 and ℓ2, whatever the bins); temperature
``T`` (``logit g = logit(s) / T``) is over- (T > 1) or under-confident (T < 1), its true
error computed by quadrature over the population's bins.

For each model the table gives the mean of headtohead's two estimates over the samples and
how often their 95 % intervals contain the truth:

* plug-in ECE (ℓ1, 15 equal-width bins) with the BCa bootstrap interval the run reports as
  ``ModelStats.ece`` — against the true binned ℓ1 ECE;
* debiased ℓ2 error (15 equal-mass bins, ``Calibration.ece_l2_debiased``) — against the
  true binned ℓ2 error.

Run: ``PYTHONPATH=src .venv/bin/python benchmarks/calibration_coverage.py`` (a few minutes;
``--quick`` for fewer samples). Seeded: the same command prints the same table.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
from scipy import special, stats

from headtohead.stats.bootstrap import bootstrap_metrics
from headtohead.stats.calibration import ece_l2_debiased

N_EXAMPLES = 872
N_BINS = 15

#: name → inverse CDF of the confidence on (0.5, 1): spread out, and a high-accuracy shape
CONFIDENCE: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "uniform(0.5, 1)": lambda u: 0.5 + 0.5 * u,
    "0.5 + 0.5·Beta(6, 1)": lambda u: 0.5 + 0.5 * stats.beta.ppf(u, 6, 1),
}


def _temperature(t: float) -> Callable[[np.ndarray], np.ndarray]:
    return lambda s: special.expit(special.logit(s) / t)


#: name → P(correct | confidence s)
MODELS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "calibrated": lambda s: s,
    "overconfident by 0.02": lambda s: s - 0.02,
    "overconfident by 0.05": lambda s: s - 0.05,
    "overconfident, T = 1.6": _temperature(1.6),
    "underconfident, T = 0.7": _temperature(0.7),
}


def true_errors(
    quantile: Callable[[np.ndarray], np.ndarray], g: Callable[[np.ndarray], np.ndarray], grid: int = 1_000_000
) -> tuple[float, float]:
    """(binned ℓ1 ECE over equal-width bins, binned ℓ2 error over equal-mass bins) of the population."""
    s = quantile((np.arange(grid) + 0.5) / grid)  # equal-probability quadrature nodes, sorted
    gap = g(s) - s
    width_bin = np.clip(np.ceil(s * N_BINS) - 1, 0, N_BINS - 1).astype(int)
    l1 = sum(abs(gap[width_bin == b].sum()) for b in range(N_BINS)) / grid
    l2 = np.sqrt(np.mean([part.mean() ** 2 for part in np.array_split(gap, N_BINS)]))
    return float(l1), float(l2)


def simulate(
    quantile: Callable[[np.ndarray], np.ndarray],
    g: Callable[[np.ndarray], np.ndarray],
    *,
    n_sims: int,
    n_plugin_sims: int,
    seed: int,
) -> dict[str, float]:
    """Means and coverages of both estimators over seeded samples."""
    l1, l2 = true_errors(quantile, g)
    rng = np.random.default_rng(seed)
    debiased, debiased_hits, plugin, plugin_hits = [], 0, [], 0
    for i in range(n_sims):
        s = quantile(rng.random(N_EXAMPLES))
        correct = rng.random(N_EXAMPLES) < g(s)
        e = ece_l2_debiased(s, correct, N_BINS)
        debiased.append(e.value)
        debiased_hits += e.low <= l2 <= e.high
        if i < n_plugin_sims:
            # true class 1; the model predicts 1 when right, 0 when wrong, with probability s either way
            y = np.ones(N_EXAMPLES, dtype=np.int64)
            pred = np.where(correct, 1, 0)
            proba = np.where(pred[:, None] == 1, np.column_stack([1 - s, s]), np.column_stack([s, 1 - s]))
            ci = bootstrap_metrics(
                y, pred, proba, metrics=["ece"], n_bins=N_BINS, n_resamples=1000, method="bca", seed=rng
            )["ece"]
            plugin.append(ci.estimate)
            plugin_hits += ci.low <= l1 <= ci.high
    return {
        "true_l1": l1,
        "plugin_mean": float(np.mean(plugin)),
        "plugin_coverage": plugin_hits / n_plugin_sims,
        "true_l2": l2,
        "debiased_mean": float(np.mean(debiased)),
        "debiased_coverage": debiased_hits / n_sims,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples (a few seconds)")
    args = parser.parse_args()
    n_sims, n_plugin = (500, 100) if args.quick else (4000, 200)
    print(
        f"n = {N_EXAMPLES}, {N_BINS} bins, 95 % intervals; debiased: {n_sims} samples, plug-in bootstrap "
        f"(BCa, 1000 resamples): {n_plugin} samples\n"
    )
    print(
        "| confidence | model | true ECE (ℓ1) | plug-in ECE, mean | its CI covers | true ℓ2 error "
        "| debiased ℓ2, mean | its CI covers |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for c_index, (c_name, quantile) in enumerate(CONFIDENCE.items()):
        for m_index, (m_name, g) in enumerate(MODELS.items()):
            r = simulate(quantile, g, n_sims=n_sims, n_plugin_sims=n_plugin, seed=100 * c_index + m_index)
            print(
                f"| {c_name} | {m_name} | {r['true_l1']:.4f} | {r['plugin_mean']:.4f} | "
                f"{100 * r['plugin_coverage']:.1f} % | {r['true_l2']:.4f} | {r['debiased_mean']:.4f} | "
                f"{100 * r['debiased_coverage']:.1f} % |",
                flush=True,
            )


if __name__ == "__main__":
    main()
