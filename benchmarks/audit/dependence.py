"""Audit of the statistics where examples are not independent draws of a fixed sample: groups and early stops.

Groups: ``K`` groups of ``m`` examples (or of uneven sizes); in group ``g`` model A is right with
probability ``expit(1.4 + shift + u_g)`` and B with ``expit(1.4 − u_g)``, ``u_g ~ N(0, τ²)``, so each
model is better for some groups; the true gap (``shift`` chosen for it) is the expectation over
groups. "Before": the tests and intervals that treat examples as independent (version 3's rule
and its paired bootstrap); "after": the clustered ones (``data.group_column``).

Early stops: ``--until-decided`` on i.i.d. examples (discordance 10 %, at most 872 examples, a look
every 50). "Before": version 3 quoted the fixed-sample McNemar test and bootstrap interval of the
stopped sample; "after": the anytime-valid decision and confidence sequence. With groups, the
per-example sequential test (before) against the test that bets on whole groups (after). And what
a user reads: SST-2-sized runs through the code the run uses after its looks, up to the headline.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize
from scipy.special import expit

from audit.common import Row, bootstrap_accuracy_interval, row
from headtohead.stats.mcnemar import mcnemar_pvalues
from headtohead.stats.paired import (
    clustered_counts,
    clustered_difference_interval,
    clustered_difference_pvalue,
)
from headtohead.stats.sequential import confidence_bounds, first_decisions, path_e_values
from headtohead.stats.sequential_groups import grouped_path_e_values

__all__ = ["dependence_rows"]

_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(80)


def _true_gap(shift: float, tau: float) -> float:
    """E over groups of P(A right) − P(B right), by Gauss–Hermite quadrature."""
    u = tau * _NODES
    return float(np.sum(_WEIGHTS * (expit(1.4 + shift + u) - expit(1.4 - u))) / np.sum(_WEIGHTS))


def _shift_for(gap: float, tau: float) -> float:
    return 0.0 if gap == 0.0 else float(optimize.brentq(lambda s: _true_gap(s, tau) - gap, -3, 3))


def _grouped_sample(
    rng: np.random.Generator, sizes: np.ndarray, shift: float, tau: float
) -> tuple[np.ndarray, np.ndarray]:
    groups = np.repeat(np.arange(len(sizes)), sizes)
    u = rng.normal(0.0, tau, len(sizes))[groups]
    a = rng.random(len(groups)) < expit(1.4 + shift + u)
    b = rng.random(len(groups)) < expit(1.4 - u)
    return a.astype(np.int64) - b.astype(np.int64), groups


def _sizes(rng: np.random.Generator, k: int, m: int, uneven: bool) -> np.ndarray:
    return rng.integers(1, 2 * m, k) if uneven else np.full(k, m)


def _cluster_rows(rng: np.random.Generator, quick: bool) -> list[Row]:
    rows = []
    grid = (
        [(60, 15, 1.0, False)]
        if quick
        else [
            (k, m, tau, uneven) for k in (10, 30, 60) for m in (5, 15) for tau in (0.5, 1.0) for uneven in (False, True)
        ]
    )
    runs = 200 if quick else 1000
    for k, m, tau, uneven in grid:
        setting = f"{k} groups of {'1–' + str(2 * m - 1) if uneven else m} examples, τ = {tau:g}"
        false_before = false_after = 0
        cover_before = cover_after = 0
        gap, shift = 0.03, _shift_for(0.03, tau)
        for _ in range(runs):
            d, groups = _grouped_sample(rng, _sizes(rng, k, m, uneven), 0.0, tau)
            b, c = int(np.sum(d == 1)), int(np.sum(d == -1))
            false_before += mcnemar_pvalues(np.array(b), np.array(c), "auto")[1] <= 0.05
            false_after += clustered_difference_pvalue(clustered_counts(d, groups), b, c) <= 0.05
            d, groups = _grouped_sample(rng, _sizes(rng, k, m, uneven), shift, tau)
            b, c, n = int(np.sum(d == 1)), int(np.sum(d == -1)), len(d)
            low, high = bootstrap_accuracy_interval(b, c, n)
            cover_before += low <= gap <= high
            low, high = clustered_difference_interval(clustered_counts(d, groups), b, c, n)
            cover_after += low <= gap <= high
        n_mean = k * m
        rows.append(
            row(
                "groups",
                "'better' at no average gap, α = 0.05 (clustered McNemar; before: examples as independent)",
                setting,
                "error",
                0.05,
                false_after / runs,
                runs,
                before=false_before / runs,
                n=n_mean,
            )
        )
        rows.append(
            row(
                "groups",
                "accuracy gap (3 pp): 95 % interval covers (clustered; before: paired bootstrap)",
                setting,
                "coverage",
                0.95,
                cover_after / runs,
                runs,
                before=cover_before / runs,
                n=n_mean,
            )
        )
    # the gate with groups: a true drop equal to the margin
    margin, tau = 0.01, 1.0
    shift = _shift_for(-margin, tau)
    for k, m in [(60, 15)] if quick else [(30, 15), (60, 15), (200, 10)]:
        passes_before = passes_after = 0
        for _ in range(runs):
            d, groups = _grouped_sample(rng, np.full(k, m), shift, tau)
            b, c, n = int(np.sum(d == 1)), int(np.sum(d == -1)), len(d)
            passes_before += bootstrap_accuracy_interval(b, c, n)[0] >= -margin
            passes_after += clustered_difference_interval(clustered_counts(d, groups), b, c, n)[0] >= -margin
        rows.append(
            row(
                "groups",
                "gate false pass: true drop = margin 1 pp (clustered; before: examples as independent)",
                f"{k} groups of {m}, τ = {tau:g}",
                "error",
                0.025,
                passes_after / runs,
                runs,
                before=passes_before / runs,
                n=k * m,
            )
        )
    return rows


def _stopped_rows(rng: np.random.Generator, quick: bool) -> list[Row]:
    rows = []
    runs, n_max, chunk, psi = (300 if quick else 2000), 872, 50, 0.1
    looks = np.r_[np.arange(chunk, n_max, chunk), n_max]
    for gap in (0.0, 0.05) if quick else (0.0, 0.02, 0.05, 0.08):
        p10, p01 = (psi + gap) / 2, (psi - gap) / 2
        d = rng.choice([1, -1, 0], size=(runs, n_max), p=[p10, p01, 1 - psi])
        b = np.cumsum(d == 1, axis=1)[:, looks - 1]
        c = np.cumsum(d == -1, axis=1)[:, looks - 1]
        n = np.broadcast_to(looks, b.shape)
        code, look = first_decisions(path_e_values(b, c, n), alpha=0.05)
        stop = np.minimum(look, len(looks) - 1)
        early = look < len(looks) - 1  # decided before the data ran out
        lows, highs = confidence_bounds(b, c, n, 0.05)
        running_low = np.maximum.accumulate(lows, axis=1)[np.arange(runs), stop]
        running_high = np.minimum.accumulate(highs, axis=1)[np.arange(runs), stop]
        bs, cs, ns = b[np.arange(runs), stop], c[np.arange(runs), stop], looks[stop]
        fixed = np.array([bootstrap_accuracy_interval(int(x), int(y), int(z)) for x, y, z in zip(bs, cs, ns)])
        setting = (
            f"gap {100 * gap:g} pp, discordance 10 %, ≤ 872 examples, a look every 50 ({100 * early.mean():.0f} % "
            f"stopped early)"
        )
        rows.append(
            row(
                "early stops",
                "95 % interval shown at the stop covers (confidence sequence; before: "
                "fixed-sample bootstrap of the stopped sample)",
                setting,
                "coverage",
                0.95,
                (running_low <= gap) & (gap <= running_high),
                runs,
                before=float(np.mean((fixed[:, 0] <= gap) & (gap <= fixed[:, 1]))),
                n=int(ns.mean()),
            )
        )
        if gap == 0.0:
            _, p_fixed, _ = mcnemar_pvalues(bs, cs, "auto")
            rows.append(
                row(
                    "early stops",
                    "'better' at no gap (sequential decision; before: McNemar on the stopped sample)",
                    setting,
                    "error",
                    0.05,
                    np.isin(code, (1, 2)),
                    runs,
                    before=float(np.mean(p_fixed <= 0.05)),
                )
            )
    return rows


def _grouped_stop_rows(rng: np.random.Generator, quick: bool) -> list[Row]:
    runs = 200 if quick else 2000
    groups = np.repeat(np.arange(60), 15)
    threshold = np.log(2 / 0.05)
    plain = grouped = 0
    for _ in range(runs):
        d, _ = _grouped_sample(rng, np.full(60, 15), 0.0, 1.0)
        shuffled = d[rng.permutation(900)]  # the per-example test: examples in a random order
        looks = np.arange(90, 901, 90)
        code, _ = first_decisions(
            path_e_values(
                np.cumsum(shuffled == 1)[looks - 1][None], np.cumsum(shuffled == -1)[looks - 1][None], looks[None]
            ),
            alpha=0.05,
        )
        plain += int(code[0]) in (1, 2)
        up, down = grouped_path_e_values(np.bincount(groups, weights=d), np.full(60, 15), 15, np.arange(6, 61, 6))
        grouped += bool(np.any(up >= threshold) or np.any(down >= threshold))
    return [
        row(
            "early stops",
            "'better' at no average gap with groups (bets on whole groups; before: per example)",
            "60 groups of 15, τ = 1, a look every 6 groups",
            "error",
            0.05,
            grouped / runs,
            runs,
            before=plain / runs,
            n=900,
        )
    ]


def _shown_verdict_rows(rng: np.random.Generator, quick: bool) -> list[Row]:
    """SST-2-sized runs with no true gap and a look every 50: how often the headline a user reads names a winner.

    Each run goes through the code ``h2h run --until-decided`` runs after its looks: the pair's
    :class:`~headtohead.stats.sequential.SequentialTest` fed chunk by chunk and its record
    (``to_record``), the run's fixed-sample statistics (McNemar's score test on the examples
    used, as ``stats.analyse`` sets ``significant``), then ``decided_by_sequential_tests``,
    ``with_sequential`` and the report's headline (``build_verdict``). "Before": the rule of
    version 5, McNemar at the end whenever the sequential test had not decided by then.
    """
    from sim.sample import sample_run

    from headtohead.report.words.sequential import with_sequential
    from headtohead.report.words.verdict import build_verdict
    from headtohead.stats.paired import difference_pvalue
    from headtohead.stats.sequential import SequentialTest, to_record
    from headtohead.stats.stopped import decided_by_sequential_tests

    n_max, chunk, alpha = 872, 50, 0.05
    template = sample_run({"a": 0.9, "b": 0.9}, n_examples=n_max, speed=False, n_resamples=100)[0]
    rows = []
    for psi, runs in [(0.1, 120)] if quick else [(0.05, 1000), (0.1, 2000), (0.2, 1000)]:
        shown = before = stopped = 0
        for _ in range(runs):
            d = rng.choice([1, -1, 0], size=n_max, p=[psi / 2, psi / 2, 1 - psi])
            test = SequentialTest(alpha)
            for start in range(0, n_max, chunk):
                if test.update(d[start : start + chunk] == 1, d[start : start + chunk] == -1).decision != "continue":
                    break
            record = to_record(test, model_a="a", model_b="b", chunk_size=chunk, examples_available=n_max)
            b, c = record.final.only_a_correct, record.final.only_b_correct
            fixed = bool(difference_pvalue(b, c) <= alpha)  # what analyse says of the examples used
            comparison = template.stats.comparisons[0].model_copy(
                update={"significant": fixed, "winner": ("a" if b > c else "b") if fixed else None}
            )
            stats = template.stats.model_copy(update={"comparisons": [comparison]})
            stats = with_sequential(decided_by_sequential_tests(stats, [record]), [record])
            headline = build_verdict(template.model_copy(update={"stats": stats})).headline
            shown += any(line.kind == "quality" and line.subject is not None for line in headline)
            early = record.examples_used < n_max
            stopped += early
            before += record.decision in ("a_better", "b_better") if early else fixed
        rows.append(
            row(
                "early stops",
                "headline names a winner at no gap, SST-2-sized runs (the sequential test decides every pair; "
                "before: McNemar at the end when it had not)",
                f"≤ 872 examples, a look every 50, discordance {100 * psi:g} % ({100 * stopped / runs:.0f} % "
                f"stopped early)",
                "error",
                alpha,
                shown / runs,
                runs,
                before=before / runs,
                n=n_max,
            )
        )
    return rows


def dependence_rows(quick: bool = False, seed: int = 0) -> list[Row]:
    """Every row of this section (``quick``: a reduced grid for ``make test``)."""
    rng = np.random.default_rng(seed)
    return (
        _cluster_rows(rng, quick)
        + _stopped_rows(rng, quick)
        + _grouped_stop_rows(rng, quick)
        + _shown_verdict_rows(np.random.default_rng([seed, 33]), quick)
    )
