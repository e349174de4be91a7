"""The metric catalogue: every quality metric headtohead knows, each one entry.

See ``docs/statistics.md`` §14.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np

from headtohead.errors import did_you_mean, edit_distance, spelling

__all__ = ["Metric", "CATALOGUE", "STAT_NAMES", "register", "names", "defaults", "check_names", "unknown"]
__all__ += ["misspelling_of", "QUALIFIERS"]

#: Sums a bootstrap metric may ask for (:func:`headtohead.stats.bootstrap_metrics.example_stats` builds them):
#: class histograms of the true and predicted labels (``pred``: the dataset's classes only; ``pred_all``:
#: every distinct prediction, failures and outside classes included), correct per true class, confidence
#: bins, per-example Brier and NLL.
STAT_NAMES = ("true", "pred", "pred_all", "tp", "bin_count", "bin_confidence", "bin_correct", "brier", "nll")
PROBA_STATS = {"bin_count", "bin_confidence", "bin_correct", "brier", "nll"}

Examples = float | np.ndarray
#: ``compute(sums, n)``: ``sums[name]`` is ``(R, size)``; ``n`` the examples per resample.
Compute = Callable[[Mapping[str, np.ndarray], Examples], np.ndarray]
#: ``weighted(weights, y_true, proba, n_classes)``: ``weights`` ``(R, n)`` resample counts per example → ``(R,)``.
Weighted = Callable[[np.ndarray, np.ndarray, np.ndarray, int], np.ndarray]
#: ``point(y_true, pred, proba, n_classes)`` → the value on these rows (``None``: not defined there).
Point = Callable[[np.ndarray, np.ndarray, "np.ndarray | None", int], "float | None"]


@dataclass(frozen=True)
class Metric:
    """One metric of the catalogue.

    Attributes
    ----------
    name : str
        As in results, config and the command line (``f1_macro``, ``mcc``).
    label : str
        Its heading in tables.
    scale : {"share", "plain"}
        ``share``: a fraction shown in %, differences in percentage points.
    higher_is_better : bool
    point : callable or None
        scikit-learn's function; ``None``: the bootstrap's own formula on all rows (ECE, MCE: no scikit-learn one).
    needs, compute : tuple of str, callable or None
        The bootstrap as a function of summed statistics (:data:`STAT_NAMES`).
    weighted : callable or None
        The bootstrap as a function of each resample's example weights (rank metrics: ROC AUC).
    needs_proba : bool
        Computed from class probabilities (on the answered rows; "not available" without them).
    default : bool
        Every run reports it; the others an experiment picks (``stats.metrics``).
    column : bool
        A default metric shown in the summary table (picked ones always are).
    epoch : bool
        Reported by the per-epoch evaluation of ``h2h train`` (a training target may name it).
    """

    name: str
    label: str
    scale: Literal["share", "plain"]
    higher_is_better: bool
    point: Point | None = None
    needs: tuple[str, ...] = ()
    compute: Compute | None = None
    weighted: Weighted | None = None
    needs_proba: bool = False
    default: bool = False
    column: bool = False
    epoch: bool = False

    def from_sums(self, sums: Mapping[str, np.ndarray], n: Examples) -> np.ndarray:
        """The bootstrap formula on summed statistics (only for an entry that has one)."""
        if self.compute is None:
            raise ValueError(f"metric '{self.name}' is not a function of summed statistics")
        return self.compute(sums, n)

    @property
    def bootstrapped(self) -> bool:
        """The bootstrap can compute it (an interval is possible)."""
        return self.compute is not None or self.weighted is not None


CATALOGUE: dict[str, Metric] = {}


def register(entry: Metric) -> Metric:
    """Add ``entry`` to the catalogue (its name must be new, its statistics known)."""
    unknown = [s for s in entry.needs if s not in STAT_NAMES]
    if unknown or entry.name in CATALOGUE or ":" in entry.name:
        raise ValueError(f"cannot register metric '{entry.name}': unknown statistics {unknown} or name taken")
    if entry.point is None and entry.compute is None:
        raise ValueError(f"metric '{entry.name}' needs a point function or a bootstrap formula")
    if PROBA_STATS.intersection(entry.needs) and not entry.needs_proba:
        entry = Metric(**{**entry.__dict__, "needs_proba": True})
    CATALOGUE[entry.name] = entry
    return entry


def names(*, default: bool | None = None) -> tuple[str, ...]:
    """Every name, or the default (``True``) / picked (``False``) ones, in catalogue order."""
    return tuple(n for n, m in CATALOGUE.items() if default is None or m.default == default)


def defaults() -> tuple[Metric, ...]:
    """The metrics every run reports."""
    return tuple(m for m in CATALOGUE.values() if m.default)


def unknown(name: str, among: Iterable[str] | None = None, *, what: str = "metric", note: str = "") -> str:
    """The one line that refuses a metric name: the nearest name, then the choices (default: the catalogue's)."""
    choices = list(CATALOGUE if among is None else among)
    return f"unknown {what} '{name}'{did_you_mean(name, choices)} (choose one of: {', '.join(choices)}{note})"


#: Words that make a name another metric, not a misspelling of a catalogue one (``f1_micro`` is not ``f1_macro``).
QUALIFIERS = ("micro", "macro", "weighted", "samples", "binary")


def misspelling_of(name: str) -> str | None:
    """The catalogue metric ``name`` misspells, or ``None``: it is a catalogue name, or a name of its own.

    A misspelling is not a catalogue name, has 4 letters or more (case and separators aside: ``F1-Macro``
    is ``f1_macro``), is one edit from a catalogue name (two from one of 8 letters or more;
    :func:`headtohead.errors.edit_distance`), and holds no word of :data:`QUALIFIERS` that name lacks.
    Shorter names (``acc``, ``auc``, ``map``, ``em``) are other metrics' own abbreviations, one edit
    from ``mcc`` or ``ece`` by chance: never a misspelling.

    Examples
    --------
    >>> misspelling_of("acuracy"), misspelling_of("F1-Macro"), misspelling_of("f1_micro"), misspelling_of("auc")
    ('accuracy', 'f1_macro', None, None)
    """
    if name in CATALOGUE:
        return None
    key = spelling(name)
    if len(key) < 4:
        return None
    found = []
    for entry in CATALOGUE:
        target = spelling(entry)
        other = any(word in key and word not in target for word in QUALIFIERS)
        distance = edit_distance(key, target)
        if not other and distance <= (2 if len(target) >= 8 else 1):
            found.append((distance, entry))
    return min(found)[1] if found else None


def check_names(picked: list[str]) -> list[str]:
    """``picked`` if every name is in the catalogue, without repeats; else a one-line :class:`ValueError`."""
    for name in picked:
        if name not in CATALOGUE:
            raise ValueError(unknown(name))
    return list(dict.fromkeys(picked))


# --- point values (scikit-learn) --------------------------------------------------------------


class _Sklearn:
    """``sklearn.metrics`` imported on first use: config reads the catalogue's names without paying for it."""

    def __getattr__(self, name: str) -> Any:
        from sklearn import metrics

        return getattr(metrics, name)


skm = _Sklearn()


def _present(y: np.ndarray, k: int) -> np.ndarray:
    return np.flatnonzero(np.bincount(np.asarray(y, dtype=np.int64), minlength=k)[:k])


def _prf(which: int, average: str) -> Point:
    def point(y: np.ndarray, pred: np.ndarray, proba: np.ndarray | None, k: int) -> float | None:
        labels = _present(y, k)
        if not len(labels):
            return 0.0
        values = skm.precision_recall_fscore_support(y, pred, labels=labels, average=average, zero_division=0)
        return float(values[which])

    return point


def _balanced(y: np.ndarray, pred: np.ndarray, proba: np.ndarray | None, k: int) -> float | None:
    if not len(y):
        return 0.0
    with warnings.catch_warnings():  # "y_pred contains classes not in y_true" is expected on small sets
        warnings.simplefilter("ignore")
        return float(skm.balanced_accuracy_score(y, pred))


def _brier_point(y: np.ndarray, pred: np.ndarray, proba: np.ndarray | None, k: int) -> float | None:
    if proba is None:
        return None
    p = np.asarray(proba, np.float64)[:, :k]
    return float(skm.brier_score_loss(y, p / p.sum(axis=1, keepdims=True), labels=np.arange(k)))


def _nll_point(y: np.ndarray, pred: np.ndarray, proba: np.ndarray | None, k: int) -> float | None:
    if proba is None:
        return None
    p = np.asarray(proba, np.float64)[:, :k]
    return float(skm.log_loss(y, p / p.sum(axis=1, keepdims=True), labels=np.arange(k)))


def _mcc_point(y: np.ndarray, pred: np.ndarray, proba: np.ndarray | None, k: int) -> float | None:
    return float(skm.matthews_corrcoef(y, pred))


def _auc_point(y: np.ndarray, pred: np.ndarray, proba: np.ndarray | None, k: int) -> float | None:
    if proba is None:
        return None
    p, present = np.asarray(proba, np.float64), _present(y, k)
    if len(present) < 2:
        return None  # one class: no negatives to rank against
    if k == 2:
        return float(skm.roc_auc_score(y, p[:, 1]))
    # one-vs-rest, macro: scikit-learn's per-class scores, averaged over the classes present
    return float(np.mean([skm.roc_auc_score(y == c, p[:, c]) for c in present]))


# --- bootstrap formulas (functions of summed statistics) --------------------------------------


def safe_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` with 0 where ``den == 0`` (scikit-learn's ``zero_division=0``)."""
    out = np.zeros(np.broadcast_shapes(num.shape, den.shape))
    np.divide(num, den, out=out, where=den > 0)
    return out


def f1_per_class(s: Mapping[str, np.ndarray]) -> np.ndarray:
    # 2·TP / (2·TP + FP + FN) == 2·TP / (support + predicted count)
    return safe_ratio(2.0 * s["tp"], s["true"] + s["pred"])


def _present_mean(values: np.ndarray, s: Mapping[str, np.ndarray]) -> np.ndarray:
    """Mean over the classes present among the (resampled) examples: an absent class has no recall to average."""
    present = s["true"] > 0
    return cast(np.ndarray, (values * present).sum(axis=1) / np.maximum(present.sum(axis=1), 1))


def _mcc(s: Mapping[str, np.ndarray], n: Examples) -> np.ndarray:
    # scikit-learn's formula over the confusion matrix: cov(y, p) / sqrt(cov(y, y)·cov(p, p)), 0 when undefined
    cov_yp = s["tp"].sum(axis=1) * n - (s["true"] * s["pred"]).sum(axis=1)
    cov_pp = n * n - (s["pred_all"] ** 2).sum(axis=1)
    cov_yy = n * n - (s["true"] ** 2).sum(axis=1)
    return safe_ratio(cov_yp, np.sqrt(np.maximum(cov_yy * cov_pp, 0.0)))


def _auc_one(weights: np.ndarray, positive: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Weighted ROC AUC of ``scores`` for ``positive`` per row of ``weights`` (ties count a half; NaN: one class).

    Each positive wins against the weight of the negatives scored below it: a cumulative sum over the
    negatives in score order, read where each positive's score falls (a tie between the two bounds).
    """
    negatives = np.flatnonzero(~positive)
    negatives = negatives[np.argsort(scores[negatives], kind="stable")]
    below = np.zeros((len(weights), len(negatives) + 1), dtype=weights.dtype)
    np.cumsum(weights[:, negatives], axis=1, out=below[:, 1:])
    ranked = scores[negatives]
    pos = np.flatnonzero(positive)
    lo, hi = np.searchsorted(ranked, scores[pos], "left"), np.searchsorted(ranked, scores[pos], "right")
    w_pos = weights[:, pos]
    wins = (w_pos * (below[:, lo] + below[:, hi])).sum(axis=1) / 2
    pairs = w_pos.sum(axis=1) * below[:, -1]
    return cast(np.ndarray, np.divide(wins, pairs, out=np.full(len(weights), np.nan), where=pairs > 0))


def _auc(weights: np.ndarray, y: np.ndarray, proba: np.ndarray, k: int) -> np.ndarray:
    if k == 2:
        return _auc_one(weights, y == 1, proba[:, 1])
    # one-vs-rest, macro over the classes present in the resample (an absent class has NaN, left out)
    per_class = np.stack([_auc_one(weights, y == c, proba[:, c]) for c in range(k)])
    with warnings.catch_warnings():  # a resample with one class: no AUC (NaN)
        warnings.simplefilter("ignore", RuntimeWarning)
        return cast(np.ndarray, np.nanmean(per_class, axis=0))


def _mean_of(stat: str) -> Compute:
    return lambda s, n: s[stat][:, 0] / n


def _accuracy(y: np.ndarray, pred: np.ndarray, proba: np.ndarray | None, k: int) -> float | None:
    return float(np.mean(pred == y)) if len(y) else 0.0  # scikit-learn's accuracy_score


def _recalls(s: Mapping[str, np.ndarray], n: Examples) -> np.ndarray:
    return _present_mean(safe_ratio(s["tp"], s["true"]), s)


def _share(
    name: str,
    label: str,
    point: Point,
    needs: tuple[str, ...] = (),
    compute: Compute | None = None,
    epoch: bool = False,
) -> Metric:
    """A default share (higher is better); those with a bootstrap formula are columns of the summary table."""
    return Metric(
        name, label, "share", True, point, needs, compute, default=True, column=compute is not None, epoch=epoch
    )


_F1_STATS, _BIN_STATS = ("tp", "true", "pred"), ("bin_count", "bin_confidence", "bin_correct")
for _entry in (
    _share("accuracy", "accuracy", _accuracy, ("tp",), lambda s, n: s["tp"].sum(axis=1) / n, epoch=True),
    _share("balanced_accuracy", "balanced acc.", _balanced, ("tp", "true"), _recalls, epoch=True),
    _share("f1_macro", "macro-F1", _prf(2, "macro"), _F1_STATS, lambda s, n: _present_mean(f1_per_class(s), s), epoch=True),
    _share("f1_weighted", "weighted-F1", _prf(2, "weighted"), _F1_STATS, lambda s, n: (f1_per_class(s) * s["true"]).sum(1) / n),
    _share("precision_macro", "macro precision", _prf(0, "macro"), _F1_STATS, lambda s, n: _present_mean(safe_ratio(s["tp"], s["pred"]), s)),
    _share("recall_macro", "macro recall", _prf(1, "macro"), ("tp", "true"), _recalls),
    _share("precision_weighted", "weighted precision", _prf(0, "weighted")),
    _share("recall_weighted", "weighted recall", _prf(1, "weighted")),
    Metric("brier", "Brier", "plain", False, _brier_point, ("brier",), _mean_of("brier"), default=True),
    Metric("nll", "NLL", "plain", False, _nll_point, ("nll",), _mean_of("nll"), default=True),
    # Σ_b (n_b / n)·|conf_b − acc_b| == Σ_b |Σconf_b − Σcorrect_b| / n; ECE and MCE have no scikit-learn function
    Metric("ece", "ECE (plug-in, biased up)", "plain", False, None, _BIN_STATS[1:], lambda s, n: np.abs(s["bin_confidence"] - s["bin_correct"]).sum(1) / n, default=True),
    Metric("mce", "MCE", "plain", False, None, _BIN_STATS, lambda s, n: safe_ratio(np.abs(s["bin_confidence"] - s["bin_correct"]), s["bin_count"]).max(1)),
    Metric("mcc", "MCC", "plain", True, _mcc_point, ("tp", "true", "pred", "pred_all"), _mcc),
    Metric("roc_auc", "ROC AUC (answered rows)", "plain", True, _auc_point, weighted=_auc, needs_proba=True),
):  # fmt: skip
    register(_entry)
