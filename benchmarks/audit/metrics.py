"""Audit of one model's figures: the calibration error, Brier and NLL, and the class-count metrics over 2–20 classes.

Calibration: binary models on ``n`` examples with confidence ``0.5 + 0.5·Beta(6, 1)`` (the issue's
calibrated model) right with probability ``g(confidence)``; the truths by quadrature over the
population (``benchmarks/calibration_coverage.py``). "Before": the plug-in ECE with its BCa
bootstrap interval (version 3's ``ModelStats.ece``); "after": the debiased ℓ2 error with its
interval (the headline calibration figure now). Classes: ``k`` balanced classes, a model right
with probability 0.8 and otherwise uniformly wrong, so every class's recall and F1, the
balanced accuracy and the macro-F1 are 0.8 in the population.
"""

from __future__ import annotations

import numpy as np
from calibration_coverage import CONFIDENCE, MODELS, true_errors

from audit.common import Row, row
from headtohead.stats.analyse import MIN_EXAMPLES_PER_CLASS
from headtohead.stats.bootstrap import bootstrap_metrics, paired_bootstrap
from headtohead.stats.calibration import ece_l2_debiased
from headtohead.stats.delong import delong_paired
from headtohead.stats.paired import proportion_interval

__all__ = ["metric_rows"]

_SHAPE = "0.5 + 0.5·Beta(6, 1)"


def _population_losses(g) -> tuple[float, float]:  # noqa: ANN001 - P(correct | confidence)
    """Expected (halved binary) Brier score and NLL per example, by quadrature."""
    s = CONFIDENCE[_SHAPE]((np.arange(400_000) + 0.5) / 400_000)
    right = g(s)
    brier = right * (1 - s) ** 2 + (1 - right) * s**2
    nll = -(right * np.log(s) + (1 - right) * np.log1p(-s))
    return float(brier.mean()), float(nll.mean())


def _calibration_rows(rng: np.random.Generator, quick: bool) -> list[Row]:
    rows = []
    sizes = [872] if quick else [200, 872, 5000]
    models = ["calibrated", "overconfident, T = 1.6"] if quick else list(MODELS)
    runs, plug_in_runs, loss_runs = (200, 20, 40) if quick else (2000, 200, 600)
    quantile = CONFIDENCE[_SHAPE]
    for name in models:
        g = MODELS[name]
        l1, l2 = true_errors(quantile, g)
        brier, nll = _population_losses(g)
        for n in sizes:
            setting = f"{name}, n = {n:,} (true ℓ1 ECE {l1:.3f}, ℓ2 {l2:.3f})"
            covered, contains = 0, 0
            plug_covered, plug_excludes, loss_hits = 0, 0, {"brier": 0, "nll": 0}
            for i in range(max(runs, loss_runs)):
                s = quantile(rng.random(n))
                correct = rng.random(n) < g(s)
                if i < runs:
                    e = ece_l2_debiased(s, correct, 15)
                    covered += e.low <= l2 <= e.high
                    contains += e.low <= e.value <= e.high
                if i >= loss_runs:
                    continue
                y = np.ones(n, dtype=int)
                pred = np.where(correct, 1, 0)
                proba = np.where(pred[:, None] == 1, np.c_[1 - s, s], np.c_[s, 1 - s])
                ci = bootstrap_metrics(
                    y,
                    pred,
                    proba,
                    metrics=["ece", "brier", "nll"] if i < plug_in_runs else ["brier", "nll"],
                    n_resamples=1000,
                    seed=rng,
                )
                if i < plug_in_runs:
                    plug = ci["ece"]
                    plug_covered += plug.low is not None and plug.low <= l1 <= plug.high
                    plug_excludes += plug.low is None or not plug.low <= plug.estimate <= plug.high
                loss_hits["brier"] += ci["brier"].low <= brier <= ci["brier"].high
                loss_hits["nll"] += ci["nll"].low <= nll <= ci["nll"].high
            rows.append(
                row(
                    "calibration",
                    "headline calibration error: 95 % interval covers (debiased ℓ2; before: plug-in ECE, BCa)",
                    setting,
                    "coverage",
                    0.95,
                    covered / runs,
                    runs,
                    before=plug_covered / plug_in_runs,
                    n=n,
                )
            )
            rows.append(
                row(
                    "calibration",
                    "that interval excludes its own estimate (before: plug-in ECE, BCa; "
                    "its bound, not the estimate, shown since)",
                    setting,
                    "error",
                    0.0,
                    1 - contains / runs,
                    runs,
                    before=plug_excludes / plug_in_runs,
                    n=n,
                )
            )
            for loss, truth in (("brier", brier), ("nll", nll)):
                rows.append(
                    row(
                        "calibration",
                        f"{loss.upper() if loss == 'nll' else 'Brier'}: 95 % bootstrap interval covers",
                        f"{name}, n = {n:,}",
                        "coverage",
                        0.95,
                        loss_hits[loss] / loss_runs,
                        loss_runs,
                        n=n,
                    )
                )
    return rows


def _classes_rows(rng: np.random.Generator, quick: bool) -> list[Row]:
    """Class-averaged metrics (bootstrap, shown from MIN_EXAMPLES_PER_CLASS per class on) and a class's recall."""
    rows = []
    grid = [(5, 200)] if quick else [(k, n) for k in (2, 5, 20) for n in (50, 200, 1000)]
    runs = 40 if quick else 600
    truth = 0.8
    names = ("f1_macro", "balanced_accuracy", "f1_gap")
    for k, n in grid:
        hits, shown, recall_hits, recall_before = dict.fromkeys(names, 0), dict.fromkeys(names, 0), 0, 0
        labels = [str(i) for i in range(k)]
        for _ in range(runs):
            y = rng.integers(0, k, n)
            a = np.where(rng.random(n) < truth, y, (y + rng.integers(1, k, n)) % k)
            b = np.where(rng.random(n) < 0.75, y, (y + rng.integers(1, k, n)) % k)
            first = y == 0
            low, high = proportion_interval(int(np.sum(a[first] == 0)), int(first.sum())) if first.any() else (0, 1)
            recall_hits += low <= truth <= high
            old = bootstrap_metrics(y, a, metrics=["recall:0"], label_names=labels, n_resamples=1000, seed=rng)[
                "recall:0"
            ]  # version 3: a bootstrap (a point when degenerate)
            recall_before += old.low is not None and old.low <= truth <= old.high
            if n < MIN_EXAMPLES_PER_CLASS * len(np.unique(y)):  # the run shows no interval (analyse's rule)
                continue
            ci = bootstrap_metrics(
                y, a, metrics=["f1_macro", "balanced_accuracy"], label_names=labels, n_resamples=1000, seed=rng
            )
            ci["f1_gap"] = paired_bootstrap(
                y, a, b, metrics=["f1_macro"], label_names=labels, n_resamples=1000, seed=rng
            )["f1_macro"]
            for metric, target in (("f1_macro", truth), ("balanced_accuracy", truth), ("f1_gap", 0.05)):
                interval = ci[metric]
                shown[metric] += interval.low is not None
                hits[metric] += interval.low is not None and interval.low <= target <= interval.high
        setting = f"{k} classes, n = {n:,}"
        for metric, label in (
            ("f1_macro", "macro-F1"),
            ("balanced_accuracy", "balanced accuracy"),
            ("f1_gap", "macro-F1 gap of two models"),
        ):
            if shown[metric]:
                rows.append(
                    row(
                        "classes",
                        f"{label}: 95 % bootstrap interval covers, where shown (none below "
                        f"{MIN_EXAMPLES_PER_CLASS} examples per class)",
                        f"{setting} (shown in {100 * shown[metric] / runs:.0f} % of runs)",
                        "coverage",
                        0.95,
                        hits[metric] / shown[metric],
                        shown[metric],
                        n=n,
                    )
                )
        # the recall interval rests on the class's examples (about n / k): the target follows that size
        rows.append(
            row(
                "classes",
                "recall of a class: 95 % Wilson interval covers (before: bootstrap)",
                f"{setting} (about {n // k} examples in the class)",
                "coverage",
                0.95,
                recall_hits / runs,
                runs,
                before=recall_before / runs,
                n=n // k,
            )
        )
    return rows


def _catalogue_pair(rng: np.random.Generator, n: int, metric: str, strength: tuple[float, float]) -> tuple:
    """Two correlated binary models: MCC from accuracies (right with probability ``strength``, one shared
    uniform draw for 60 % of the examples); ROC AUC from binormal scores (means ``strength``, noise correlation 0.6)."""
    y = rng.integers(0, 2, n)
    if metric == "mcc":
        u, fresh, shared = rng.random(n), rng.random(n), rng.random(n) < 0.6
        a = np.where(u < strength[0], y, 1 - y)
        b = np.where(np.where(shared, u, fresh) < strength[1], y, 1 - y)
        return y, (a, None), (b, None)
    z1, z2 = rng.standard_normal(n), rng.standard_normal(n)
    scores = (strength[0] * y + z1, strength[1] * y + 0.6 * z1 + 0.8 * z2)
    probas = [1.0 / (1.0 + np.exp(-(s - m / 2))) for s, m in zip(scores, strength, strict=True)]
    return y, *(((q > 0.5).astype(int), np.c_[1 - q, q]) for q in probas)


def _catalogue_rows(rng: np.random.Generator, quick: bool) -> list[Row]:
    """Metrics picked from the catalogue (``stats.metrics``): the paired bootstrap interval of a pair's MCC and
    ROC AUC difference, DeLong's interval of the ROC AUC difference (what a run of two classes shows, on the same
    draws), and the gate on it (``--metric``) at a true drop equal to the margin. Truths: the population
    difference (MCC = 2·accuracy − 1 on balanced binary data; AUC = Φ(mean/√2))."""
    from scipy.stats import norm

    from headtohead.stats.gate import metric_noninferiority

    rows = []
    runs = 100 if quick else 2000  # the gate's false-pass rate is ~3 %: 2,000 runs put its s.e. near 0.4 pp
    auc = lambda value: float(np.sqrt(2) * norm.ppf(value))  # noqa: E731 - binormal mean of an AUC
    cases = {"mcc": ((0.85, 0.80), 0.10), "roc_auc": ((auc(0.85), auc(0.80)), 0.05)}
    for metric, (strength, true) in cases.items():
        for n in [500] if quick else [200, 1000]:
            hits, delong = np.empty(runs, dtype=bool), np.zeros(runs, dtype=bool)
            for i in range(runs):
                y, (a, qa), (b, qb) = _catalogue_pair(rng, n, metric, strength)
                ci = paired_bootstrap(y, a, b, qa, qb, metrics=[metric], n_resamples=1000, seed=i)[metric]
                hits[i] = ci.low is not None and ci.low <= true <= ci.high
                if metric == "roc_auc":  # the same draw, no other: every other row keeps its numbers
                    found = delong_paired(y == 1, qa[:, 1], qb[:, 1])
                    delong[i] = found.low is not None and found.high is not None and found.low <= true <= found.high
            quantity = f"{metric}: a pair's difference (paired BCa bootstrap)"
            setting = f"n = {n:,}, true difference {true:+g}"
            rows.append(row("catalogue", quantity, setting, "coverage", 0.95, hits, runs, n=n))
            if metric == "roc_auc":
                quantity = "roc_auc: a pair's difference (DeLong, as a run of two classes shows it)"
                rows.append(row("catalogue", quantity, setting, "coverage", 0.95, delong, runs, n=n))
            passed = np.empty(runs, dtype=bool)  # the candidate (b) is worse by exactly the margin
            for i in range(runs):
                y, base, cand = _catalogue_pair(rng, n, metric, strength)
                decision = metric_noninferiority(y, base, cand, metric=metric, margin=true, n_resamples=1000, seed=i)
                passed[i] = decision.outcome == "pass"
            quantity = f"gate --metric {metric}: false pass, true drop = margin"
            rows.append(row("catalogue", quantity, f"n = {n:,}, margin {true:g}", "error", 0.025, passed, runs, n=n))
    return rows


def metric_rows(quick: bool = False, seed: int = 0) -> list[Row]:
    """Every row of this section (``quick``: a reduced grid for ``make test``)."""
    rng = np.random.default_rng(seed)
    return _calibration_rows(rng, quick) + _classes_rows(rng, quick) + _catalogue_rows(rng, quick)
