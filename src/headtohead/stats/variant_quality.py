"""Is a variant still as good as its parent? Paired statistics on the same examples.

See ``docs/sweeps.md``, "What a sweep does".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from headtohead.results.comparison import ContingencyTable
from headtohead.results.sweep import QualityVsParent
from headtohead.stats.gate import decide
from headtohead.stats.mcnemar import contingency
from headtohead.stats.multiple import holm_adjust
from headtohead.stats.paired import PairedCorrectness

__all__ = ["quality_vs_parent", "DEFAULT_MARGIN"]

#: The non-inferiority margin of a sweep when none is set (1 percentage point).
DEFAULT_MARGIN = 0.01


def quality_vs_parent(
    y_true: np.ndarray,
    parent: tuple[str, np.ndarray, np.ndarray],
    variants: Mapping[str, tuple[np.ndarray, np.ndarray]],
    *,
    label_names: Sequence[str],
    alpha: float = 0.05,
    margin: float = DEFAULT_MARGIN,
    confidence: float = 0.95,
    groups: np.ndarray | None = None,
) -> dict[str, QualityVsParent]:
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
        Significance level of the difference test, after Holm's adjustment over the variants.
    margin : float
        Non-inferiority margin as a fraction (0.01 = 1 pp).
    confidence : float
        Level of the score interval (each side a test at ``(1 − confidence)/2``).
    groups : ndarray of shape (n,), optional
        Group of each example: the clustered forms of the test and interval.

    Returns
    -------
    dict of str to QualityVsParent

    Examples
    --------
    >>> y = np.array([0, 1] * 50)
    >>> same = (y, np.eye(2)[y])
    >>> q = quality_vs_parent(y, ("m", *same), {"m[int8]": same}, label_names=["a", "b"])
    >>> q["m[int8]"].difference, q["m[int8]"].significant, q["m[int8]"].non_inferior
    (0.0, False, False)
    """
    if not 0.0 <= margin < 1.0:
        raise ValueError(f"margin must be a fraction in [0, 1), not {margin}")
    _, parent_pred, parent_proba = parent
    y_true = np.asarray(y_true, dtype=np.int64)
    correct_parent = parent_pred == y_true
    n = len(y_true)
    paired = {
        name: PairedCorrectness.of(pred == y_true, correct_parent, groups) for name, (pred, _) in variants.items()
    }
    p_values = {name: float(counted.p_value) for name, counted in paired.items()}
    adjusted = dict(zip(p_values, holm_adjust(list(p_values.values())), strict=True)) if p_values else {}
    out: dict[str, QualityVsParent] = {}
    for name, (pred, proba) in variants.items():
        table, p_adj = contingency(pred == y_true, correct_parent), float(adjusted[name])
        low, high = (float(x) for x in paired[name].interval(confidence))
        changed = int(np.count_nonzero(pred != parent_pred))
        out[name] = QualityVsParent(
            n_examples=n,
            accuracy=float(np.mean(pred == y_true)),
            parent_accuracy=float(np.mean(correct_parent)),
            difference=(table[1] - table[2]) / n,
            ci_low=low,
            ci_high=high,
            confidence=confidence,
            ci_method=paired[name].method,
            table=ContingencyTable(
                both_correct=table[0], only_a_correct=table[1], only_b_correct=table[2], both_wrong=table[3]
            ),
            test=paired[name].test,
            p_value=p_values[name],
            p_adjusted=p_adj,
            alpha=alpha,
            significant=p_adj <= alpha,
            agreement=1.0 - changed / n if n else 1.0,
            max_abs_probability_diff=float(np.max(np.abs(np.asarray(proba, np.float64) - parent_proba), initial=0.0)),
            margin=margin,
            non_inferior=decide(low, high, -margin, higher_is_better=True) == "pass",
        )
    return out
