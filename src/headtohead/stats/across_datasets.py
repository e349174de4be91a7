"""Models compared across several data sets: ranks, Friedman, Nemenyi, Wilcoxon with Holm, the Bayesian signed-rank test.

Demšar's method (2006, JMLR 7): a data set is the unit of evidence, each gives one score per
model, and the tests are non-parametric over data sets — average ranks, Friedman with
Iman–Davenport's F, Nemenyi's critical difference, the exact Wilcoxon signed-rank test per pair
with Holm, the sign test, effect sizes and the Bayesian signed-rank test with a ROPE
(:mod:`headtohead.stats.bayes_signed_rank`). The formulas, their references and their checks:
``docs/statistics.md``, section 13.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import numpy.typing as npt
from scipy import stats

from headtohead.results.suite import (
    AcrossDatasets,
    ControlComparison,
    FriedmanTest,
    ImanDavenportTest,
    PairAcrossDatasets,
)
from headtohead.stats.bayes_signed_rank import bayesian_signed_rank
from headtohead.stats.multiple import holm_rows

__all__ = [
    "EXACT_MAX_DATASETS",
    "rank_rows",
    "friedman_test",
    "iman_davenport_test",
    "omnibus_significant",
    "nemenyi_critical_difference",
    "critical_difference_cliques",
    "SignedRank",
    "signed_rank_test",
    "sign_test",
    "control_comparisons",
    "compare_across_datasets",
]

#: Up to this many data sets the Wilcoxon p-value is exact (scipy's own threshold for its exact method).
EXACT_MAX_DATASETS = 50
_DECIMALS = 12


def _clean(values: np.ndarray) -> np.ndarray:
    return np.round(np.asarray(values, dtype=np.float64), _DECIMALS)


def rank_rows(scores: np.ndarray, *, higher_is_better: bool = True) -> np.ndarray:
    """Rank the models on each data set (row): 1 = best, ties share the mean of their ranks.

    Examples
    --------
    >>> rank_rows(np.array([[0.9, 0.8, 0.9], [0.7, 0.8, 0.6]])).tolist()
    [[1.5, 3.0, 1.5], [2.0, 1.0, 3.0]]
    """
    oriented = _clean(scores) * (-1.0 if higher_is_better else 1.0)
    return cast(np.ndarray, stats.rankdata(oriented, axis=1))


def friedman_test(scores: np.ndarray, *, higher_is_better: bool = True) -> FriedmanTest:
    """Friedman's χ²_F from the average ranks (Demšar's eq. 1), and scipy's tie-corrected statistic.

    Parameters
    ----------
    scores : array, shape (N data sets, k models), k ≥ 3
    higher_is_better : bool

    Returns
    -------
    FriedmanTest
    """
    ranks = rank_rows(scores, higher_is_better=higher_is_better)
    n, k = ranks.shape
    if k < 3 or n < 2:
        raise ValueError(f"Friedman's test needs at least 3 models and 2 data sets, got {k} and {n}")
    mean = ranks.mean(axis=0)
    chi2 = float(12.0 * n / (k * (k + 1)) * (np.sum(mean**2) - k * (k + 1) ** 2 / 4.0))
    chi2 = max(chi2, 0.0)  # rounding can leave −1e-15 when every average rank is (k + 1)/2
    ties = sum(float(np.sum(c**3 - c)) for c in (np.unique(row, return_counts=True)[1] for row in ranks))
    correction = 1.0 - ties / (n * k * (k * k - 1))
    corrected = chi2 / correction if correction > 1e-12 else None
    return FriedmanTest(
        statistic=chi2,
        p_value=float(stats.chi2.sf(chi2, k - 1)),
        df=k - 1,
        tie_corrected_statistic=corrected,
        tie_corrected_p_value=float(stats.chi2.sf(corrected, k - 1)) if corrected is not None else None,
        kendall_w=chi2 / (n * (k - 1)),
    )


def iman_davenport_test(friedman: FriedmanTest, n_datasets: int, n_models: int) -> ImanDavenportTest:
    """Iman & Davenport's F from Friedman's χ²_F (Demšar's eq. 2)."""
    n, k = n_datasets, n_models
    df1, df2 = k - 1, (k - 1) * (n - 1)
    denominator = n * (k - 1) - friedman.statistic
    if denominator <= 1e-12 * n * k:
        # every data set ranks the models the same way: F → ∞ and its p would read 0, a certainty no
        # number of data sets gives (2 data sets agree by chance with probability 1/k!); no p here
        return ImanDavenportTest(statistic=None, p_value=None, df_numerator=df1, df_denominator=df2)
    f = (n - 1) * friedman.statistic / denominator
    return ImanDavenportTest(
        statistic=float(f), p_value=float(stats.f.sf(f, df1, df2)), df_numerator=df1, df_denominator=df2
    )


def omnibus_significant(friedman: FriedmanTest | None, iman: ImanDavenportTest | None, alpha: float) -> bool | None:
    """Iman–Davenport's decision, or Friedman's where F is infinite (``None`` below 3 models)."""
    if friedman is None or iman is None:
        return None
    return bool((iman.p_value if iman.p_value is not None else friedman.p_value) <= alpha)


def nemenyi_critical_difference(n_models: int, n_datasets: int, alpha: float = 0.05) -> tuple[float, float]:
    """``(q_α, CD)`` of the Nemenyi test: q_α from scipy's studentized range (k groups, infinite df) / √2.

    Examples
    --------
    >>> q, cd = nemenyi_critical_difference(4, 14)
    >>> round(q, 3), round(cd, 2)                      # Demšar (2006), section 3.2.2
    (2.569, 1.25)
    """
    k, n = n_models, n_datasets
    q = float(stats.studentized_range.ppf(1.0 - alpha, k, np.inf) / np.sqrt(2.0))
    return q, float(q * np.sqrt(k * (k + 1) / (6.0 * n)))


def critical_difference_cliques(average_ranks: dict[str, float], cd: float) -> list[list[str]]:
    """Maximal groups of models, in rank order, whose average ranks all lie less than ``cd`` apart.

    Examples
    --------
    >>> critical_difference_cliques({"a": 1.2, "b": 1.9, "c": 2.6, "d": 3.9}, 1.25)
    [['a', 'b'], ['b', 'c']]
    """
    order = sorted(average_ranks, key=lambda m: average_ranks[m])
    ranks = [average_ranks[m] for m in order]
    cliques, reach = [], 0
    for i in range(len(order)):
        j = i
        while j + 1 < len(order) and ranks[j + 1] - ranks[i] < cd:
            j += 1
        if j > i and j > reach:
            cliques.append(order[i : j + 1])
            reach = j
    return cliques


@dataclass(frozen=True)
class SignedRank:
    """The Wilcoxon signed-rank test of one pair."""

    w_plus: float
    w_minus: float
    p_value: float
    method: str  # exact | normal | none

    @property
    def statistic(self) -> float:
        return min(self.w_plus, self.w_minus)


def _exact_two_sided(ranks: np.ndarray, w_plus: float) -> float:
    """Two-sided p of ``w_plus`` under random signs over ``ranks`` (halves allowed): the exact permutation law."""
    doubled = np.rint(2 * ranks).astype(np.int64)
    law = np.ones(1)
    for r in doubled:  # each rank adds itself to the sum with probability ½
        grown = np.zeros(law.size + r)
        grown[: law.size] += law
        grown[r:] += law
        law = grown / 2.0
    observed = int(np.rint(2 * w_plus))
    lower, upper = law[: observed + 1].sum(), law[observed:].sum()
    return float(min(1.0, 2.0 * min(lower, upper)))


def signed_rank_test(a: np.ndarray, b: np.ndarray) -> SignedRank:
    """The Wilcoxon signed-rank test of ``a − b`` (Demšar's zero rule, exact up to :data:`EXACT_MAX_DATASETS`).

    Parameters
    ----------
    a, b : array of float
        The two models' scores on the same data sets, oriented so that higher is better.

    Returns
    -------
    SignedRank
        ``w_plus`` sums the ranks of |a − b| where a is better, ``w_minus`` where b is; a
        zero difference gives half its rank to each. ``method`` is ``exact`` (the
        permutation law of the signs over the observed ranks), ``normal`` (scipy's normal
        approximation with tie correction, from 51 data sets) or ``none`` (every difference
        is zero: p = 1).

    Examples
    --------
    >>> c45 = np.array([.763, .599, .954, .628, .882, .936, .661, .583, .775, 1, .940, .619, .972, .957])
    >>> c45m = np.array([.768, .591, .971, .661, .888, .931, .668, .583, .838, 1, .962, .666, .981, .978])
    >>> r = signed_rank_test(c45m, c45)
    >>> r.w_plus, r.w_minus                            # Demšar (2006), section 3.1.3: 93 and 12
    (93.0, 12.0)
    """
    d = _clean(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64))
    ranks = stats.rankdata(np.abs(d))
    zero = d == 0
    half = float(ranks[zero].sum()) / 2.0
    w_plus, w_minus = float(ranks[d > 0].sum()) + half, float(ranks[d < 0].sum()) + half
    if zero.all():
        return SignedRank(w_plus, w_minus, 1.0, "none")
    if d.size <= EXACT_MAX_DATASETS:
        return SignedRank(w_plus, w_minus, _exact_two_sided(ranks[~zero], w_plus - half), "exact")
    approx = stats.wilcoxon(d, zero_method="zsplit", method="approx")
    return SignedRank(w_plus, w_minus, float(approx.pvalue), "normal")


def sign_test(a: np.ndarray, b: np.ndarray) -> tuple[int, int, int, float]:
    """``(wins of a, wins of b, ties, two-sided p)``: the binomial test with ties split evenly (one dropped if odd).

    Examples
    --------
    >>> sign_test(np.array([.9, .8, .7, .6, .5]), np.array([.8, .7, .6, .6, .6]))
    (3, 1, 1, 0.625)
    """
    d = _clean(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64))
    wins, losses, ties = int(np.sum(d > 0)), int(np.sum(d < 0)), int(np.sum(d == 0))
    n = wins + losses + 2 * (ties // 2)
    p = float(stats.binomtest(wins + ties // 2, n, 0.5).pvalue) if n else 1.0
    return wins, losses, ties, p


def _pair(
    a: str,
    b: str,
    x: np.ndarray,
    y: np.ndarray,
    raw: np.ndarray,
    *,
    average: dict[str, float],
    cd: float | None,
    rope: float,
    n_samples: int,
    seed: int,
) -> dict[str, object]:
    """Everything of one pair but Holm (oriented scores ``x``, ``y``; ``raw`` = raw a − b)."""
    signed = signed_rank_test(x, y)
    wins_a, wins_b, ties, sign_p = sign_test(x, y)
    bayes = bayesian_signed_rank(x, y, rope=rope, n_samples=n_samples, seed=seed)
    total = signed.w_plus + signed.w_minus
    difference = average[a] - average[b]
    return dict(
        model_a=a,
        model_b=b,
        n_datasets=int(x.size),
        mean_difference=float(raw.mean()),
        median_difference=float(np.median(raw)),
        wins_a=wins_a,
        wins_b=wins_b,
        ties=ties,
        w_plus=signed.w_plus,
        w_minus=signed.w_minus,
        wilcoxon_statistic=signed.statistic,
        wilcoxon_p=signed.p_value,
        wilcoxon_method=signed.method,
        sign_test_p=sign_p,
        rank_biserial=(signed.w_plus - signed.w_minus) / total if total else 0.0,
        rank_difference=float(difference),
        nemenyi_significant=bool(abs(difference) >= cd) if cd is not None else None,
        rope=rope,
        p_a_better=bayes.p_a_better,
        p_equivalent=bayes.p_equivalent,
        p_b_better=bayes.p_b_better,
        bayes_samples=bayes.n_samples,
        bayes_mc_se=bayes.mc_se,
    )


def control_comparisons(
    baseline: str,
    average_ranks: dict[str, float],
    pairs: Sequence[PairAcrossDatasets],
    *,
    n_datasets: int,
    alpha: float,
) -> list[ControlComparison]:
    """Every other model against ``baseline``: Demšar's rank test and the pair's Wilcoxon test, each with Holm over k − 1.

    Comparing with one control is a family of k − 1 tests, not k(k − 1)/2, so Holm divides α among
    fewer and each comparison keeps more power (Demšar 2006, §3.2.2). Demšar's statistic
    z = (R_i − R_0)/√(k(k+1)/(6N)) reads the average ranks (its p depends on the other models
    too); the Wilcoxon signed-rank test reads the two models' scores only (Benavoli, Corani &
    Mangili 2016 prefer it for that reason) and decides, as it does for the pairs.

    Parameters
    ----------
    baseline : str
        The control; a key of ``average_ranks``.
    average_ranks : dict of str to float
        Every model's average rank (1 = best).
    pairs : sequence of PairAcrossDatasets
        Every pair (their Wilcoxon p, wins and mean differences are read).
    n_datasets : int
    alpha : float

    Returns
    -------
    list of ControlComparison
        One per other model, in the order of ``average_ranks``.

    Examples
    --------
    >>> ranks = {"C4.5": 3.143, "C4.5+m": 2.0, "C4.5+cf": 2.893, "C4.5+m+cf": 1.964}
    >>> se = float(np.sqrt(4 * 5 / (6 * 14)))          # Demšar (2006), §3.2.2: SE = 0.488
    >>> round((ranks["C4.5"] - ranks["C4.5+m+cf"]) / se, 2)
    2.42
    """
    k = len(average_ranks)
    others = [m for m in average_ranks if m != baseline]
    se = float(np.sqrt(k * (k + 1) / (6.0 * n_datasets)))
    z = np.array([(average_ranks[m] - average_ranks[baseline]) / se for m in others])
    rank_p = 2.0 * stats.norm.sf(np.abs(z))
    found = [next(p for p in pairs if {p.model_a, p.model_b} == {m, baseline}) for m in others]
    wilcoxon_p = np.array([p.wilcoxon_p for p in found])
    rank_holm, holm = holm_rows(np.stack([rank_p, wilcoxon_p]))
    out = []
    for i, (model, pair) in enumerate(zip(others, found, strict=True)):
        first = pair.model_a == model  # the pair's a − b is model − baseline
        wins, losses = (pair.wins_a, pair.wins_b) if first else (pair.wins_b, pair.wins_a)
        w_model, w_base = (pair.w_plus, pair.w_minus) if first else (pair.w_minus, pair.w_plus)
        significant = bool(holm[i] <= alpha)
        out.append(
            ControlComparison(
                model=model,
                baseline=baseline,
                mean_difference=pair.mean_difference if first else -pair.mean_difference,
                wins=wins,
                losses=losses,
                ties=pair.ties,
                rank_difference=average_ranks[model] - average_ranks[baseline],
                rank_z=float(z[i]),
                rank_p=float(rank_p[i]),
                rank_holm_p=float(rank_holm[i]),
                rank_significant=bool(rank_holm[i] <= alpha),
                wilcoxon_p=pair.wilcoxon_p,
                holm_p=float(holm[i]),
                significant=significant,
                winner=(model if w_model > w_base else baseline) if significant else None,
            )
        )
    return out


def compare_across_datasets(
    scores: npt.ArrayLike,
    *,
    models: Sequence[str],
    datasets: Sequence[str],
    metric: str = "accuracy",
    higher_is_better: bool = True,
    alpha: float = 0.05,
    rope: float = 0.01,
    n_samples: int = 50_000,
    seed: int = 0,
    baseline: str | None = None,
) -> AcrossDatasets:
    """Every statistic across data sets of one table of scores.

    Parameters
    ----------
    scores : array, shape (N data sets, k models)
        One finite score per data set and model.
    models, datasets : sequence of str
        Names of the columns and rows.
    metric : str
        What the scores are (for the record).
    higher_is_better : bool
        ``False`` for losses and error rates.
    alpha : float
        Level of the Iman–Davenport test, of Nemenyi's CD and of the Holm-adjusted pairs.
    rope : float
        Half-width of the region of practical equivalence of the Bayesian signed-rank test, in
        the metric's units (0.01: one point of accuracy).
    n_samples : int
        Posterior draws of the Bayesian test.
    seed : int
        Seed of those draws (each pair uses ``seed`` plus its index).
    baseline : str, optional
        A control: every other model is also compared with it, Holm over k − 1
        (:func:`control_comparisons`).

    Returns
    -------
    AcrossDatasets
        With two models: ranks and the pair's tests (no Friedman, no CD). From three:
        Friedman, Iman–Davenport, Nemenyi's CD and its cliques, every pair with Holm.

    Raises
    ------
    ValueError
        Fewer than two models or data sets, names that do not match the table, a score
        that is not finite, or a baseline that is not one of the models.
    """
    table = np.asarray(scores, dtype=np.float64)
    if table.ndim != 2 or table.shape != (len(datasets), len(models)):
        raise ValueError(f"scores of shape {table.shape} do not match {len(datasets)} data sets × {len(models)} models")
    n, k = table.shape
    if n < 2 or k < 2:
        raise ValueError(f"comparing across data sets needs at least 2 data sets and 2 models, got {n} and {k}")
    if not np.all(np.isfinite(table)):
        raise ValueError("every score must be a finite number")
    if baseline is not None and baseline not in models:
        raise ValueError(f"baseline '{baseline}' is not one of the models {list(models)}")
    oriented = table if higher_is_better else -table
    ranks = rank_rows(table, higher_is_better=higher_is_better)
    average = {m: float(r) for m, r in zip(models, ranks.mean(axis=0), strict=True)}
    friedman = iman = q = cd = None
    cliques: list[list[str]] = []
    if k >= 3:
        friedman = friedman_test(table, higher_is_better=higher_is_better)
        iman = iman_davenport_test(friedman, n, k)
        q, cd = nemenyi_critical_difference(k, n, alpha)
        cliques = critical_difference_cliques(average, cd)
    pairs = [
        _pair(
            models[i],
            models[j],
            oriented[:, i],
            oriented[:, j],
            table[:, i] - table[:, j],
            average=average,
            cd=cd,
            rope=rope,
            n_samples=n_samples,
            seed=seed + index,
        )
        for index, (i, j) in enumerate(itertools.combinations(range(k), 2))
    ]
    adjusted = holm_rows(np.array([float(p["wilcoxon_p"]) for p in pairs]))[0]  # type: ignore[arg-type]
    records = []
    for pair, holm in zip(pairs, adjusted, strict=True):
        significant = bool(holm <= alpha)
        better = pair["model_a"] if float(pair["w_plus"]) > float(pair["w_minus"]) else pair["model_b"]  # type: ignore[arg-type]
        records.append(
            PairAcrossDatasets.model_validate(
                {**pair, "holm_p": float(holm), "significant": significant, "winner": better if significant else None}
            )
        )
    return AcrossDatasets(
        metric=metric,
        higher_is_better=higher_is_better,
        alpha=alpha,
        rope=rope,
        models=list(models),
        n_datasets=n,
        average_ranks=average,
        friedman=friedman,
        iman_davenport=iman,
        nemenyi_q=q,
        nemenyi_cd=cd,
        cliques=cliques,
        omnibus_significant=omnibus_significant(friedman, iman, alpha),
        pairs=records,
        min_wilcoxon_p=min(1.0, 2.0 / 2**n),
        baseline=baseline,
        control=(
            control_comparisons(baseline, average, records, n_datasets=n, alpha=alpha) if baseline is not None else []
        ),
        datasets=list(datasets),
        scores=table.tolist(),
        ranks=ranks.tolist(),
    )
