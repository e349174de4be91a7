"""Is a variant still as good as its parent? Paired statistics on the same examples.

For every variant: McNemar's test on paired correctness against the parent
(:func:`headtohead.stats.mcnemar_test`), a paired bootstrap interval on the accuracy
difference (:func:`headtohead.stats.paired_bootstrap`), Holm's adjustment over the variants
of one model, how many predictions changed, and — with a margin — whether the variant is
non-inferior (the lower bound of the interval above ``-margin``). A shorter ``max_length``
shows its truncation cost the same way. The sentence about it: :func:`headtohead.report.sweep.variant_verdict`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from headtohead.results.comparison import ContingencyTable
from headtohead.results.sweep import QualityVsParent
from headtohead.stats.bootstrap import paired_bootstrap
from headtohead.stats.mcnemar import mcnemar_test
from headtohead.stats.multiple import holm_adjust

__all__ = ["quality_vs_parent"]


def quality_vs_parent(y_true: np.ndarray, parent: tuple[str, np.ndarray, np.ndarray],
                      variants: Mapping[str, tuple[np.ndarray, np.ndarray]], *, label_names: Sequence[str],
                      alpha: float = 0.05, margin: float | None = None, n_resamples: int = 2000,
                      ci_method: str = "bca", confidence: float = 0.95, seed: int = 0) -> dict[str, QualityVsParent]:
    """Compare every variant's predictions with its parent's on the same examples.

    Parameters
    ----------
    y_true : ndarray of shape (n,)
        True labels, in evaluation order.
    parent : (str, ndarray, ndarray)
        The parent's name, predicted classes ``(n,)`` and probabilities ``(n, k)``.
    variants : mapping of str to (ndarray, ndarray)
        Each variant's predicted classes and probabilities, same order.
    label_names : sequence of str
    alpha : float
        Significance level, after Holm's adjustment over the variants.
    margin : float, optional
        Non-inferiority margin as a fraction (0.01 = 1 pp).
    n_resamples, ci_method, confidence, seed
        Of the paired bootstrap.

    Returns
    -------
    dict of str to QualityVsParent

    Examples
    --------
    >>> y = np.array([0, 1] * 50)
    >>> same = (y, np.eye(2)[y])
    >>> q = quality_vs_parent(y, ("m", *same), {"m[int8]": same}, label_names=["a", "b"], n_resamples=200)
    >>> q["m[int8]"].difference, q["m[int8]"].significant
    (0.0, False)
    """
    _, parent_pred, parent_proba = parent
    y_true = np.asarray(y_true, dtype=np.int64)
    correct_parent = parent_pred == y_true
    tests, intervals = {}, {}
    for i, (name, (pred, proba)) in enumerate(variants.items()):
        tests[name] = mcnemar_test(pred == y_true, correct_parent)
        intervals[name] = paired_bootstrap(y_true, pred, parent_pred, proba, parent_proba, metrics=["accuracy"],
                                           label_names=label_names, n_resamples=n_resamples, confidence=confidence,
                                           method=ci_method, seed=np.random.default_rng([seed, i]))["accuracy"]
    adjusted = dict(zip(tests, holm_adjust([t.p_value for t in tests.values()]))) if tests else {}
    out: dict[str, QualityVsParent] = {}
    n = len(y_true)
    for name, (pred, proba) in variants.items():
        test, interval, p_adj = tests[name], intervals[name], float(adjusted[name])
        accuracy, parent_accuracy = float(np.mean(pred == y_true)), float(np.mean(correct_parent))
        significant = p_adj <= alpha
        non_inferior = None if margin is None else bool(interval.low > -margin)
        changed = int(np.count_nonzero(pred != parent_pred))
        out[name] = QualityVsParent(
            n_examples=n, accuracy=accuracy, parent_accuracy=parent_accuracy, difference=interval.estimate,
            ci_low=interval.low, ci_high=interval.high, confidence=confidence, ci_method=interval.method,
            table=ContingencyTable(both_correct=test.table[0], only_a_correct=test.table[1],
                                   only_b_correct=test.table[2], both_wrong=test.table[3]),
            test=test.test, p_value=test.p_value, p_adjusted=p_adj, alpha=alpha, significant=significant,
            agreement=1.0 - changed / n if n else 1.0,
            max_abs_probability_diff=float(np.max(np.abs(np.asarray(proba, np.float64) - parent_proba), initial=0.0)),
            margin=margin, non_inferior=non_inferior)
    return out
