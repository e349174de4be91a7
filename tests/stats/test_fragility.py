"""The fragility of a decided pair equals a brute-force search over relabellings of its gold labels."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from headtohead.results.predictions import Predictions
from headtohead.stats import analyse
from headtohead.stats.fragility import fewest_relabelled, pair_fragility
from headtohead.stats.multiple import holm_rows
from headtohead.stats.paired import PairedCorrectness


def _decides(y: np.ndarray, pa: np.ndarray, pb: np.ndarray, winner_a: bool, alpha: float, family=None, index=0):
    """The run's own test on these labels: McNemar's score test (through PairedCorrectness), Holm over ``family``."""
    pc = PairedCorrectness.of(pa == y, pb == y)
    b, c = (int(pc.b), int(pc.c)) if winner_a else (int(pc.c), int(pc.b))
    if b <= c:
        return False
    p = np.array([float(pc.p_value)] if family is None else family, dtype=float)
    p[index] = float(pc.p_value)
    return bool(holm_rows(p)[0, index] <= alpha)


def _pair_300() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """b = 30 (only a right), c = 12 (only b right), n = 300, two classes."""
    y = np.zeros(300, dtype=np.int64)
    a = np.r_[np.zeros(30), np.ones(12), np.zeros(200), np.ones(58)].astype(np.int64)
    b = np.r_[np.ones(30), np.zeros(12), np.zeros(200), np.ones(58)].astype(np.int64)
    return y, a, b


def test_b30_c12_n300_equals_brute_force_over_relabellings() -> None:
    y, a, b = _pair_300()
    pc = PairedCorrectness.of(a == y, b == y)
    assert (int(pc.b), int(pc.c), int(pc.n)) == (30, 12, 300)
    # brute force: in binary data a relabelling flips a gold label; among the disagreements, x of the 30
    # examples only a got right and w of the 12 only b got right (which ones does not matter without groups:
    # the test reads counts), every combination tried with the test recomputed from the relabelled labels
    only_a, only_b = np.flatnonzero((a == y) & (b != y)), np.flatnonzero((a != y) & (b == y))
    overturned = []
    for x, w in itertools.product(range(31), range(13)):
        relabelled = y.copy()
        relabelled[only_a[:x]] = 1 - relabelled[only_a[:x]]
        relabelled[only_b[:w]] = 1 - relabelled[only_b[:w]]
        if not _decides(relabelled, a, b, True, 0.05):
            overturned.append(x + w)
    brute = min(overturned)
    found = pair_fragility(y, a, b, 2, family=[float(pc.p_value)], index=0, alpha=0.05)
    assert found == brute == 3
    # and through the run's statistics: analyse stores it, and analyse on the relabelled data agrees
    comparison = analyse(_predictions(y, {"a": a, "b": b}, 2), n_resamples=100).comparisons[0]
    assert (comparison.winner, comparison.fragility, comparison.answers_differ) == ("a", 3, 42)
    for k, decided in ((2, True), (3, False)):
        relabelled = y.copy()
        relabelled[only_a[:k]] = 1
        again = analyse(_predictions(relabelled, {"a": a, "b": b}, 2), n_resamples=100).comparisons[0]
        assert again.significant is decided


def _predictions(y: np.ndarray, preds: dict[str, np.ndarray], k: int) -> Predictions:
    p = Predictions(np.arange(len(y)), y, tuple(f"c{i}" for i in range(k)))
    for name, pred in preds.items():
        proba = np.full((len(y), k), 1.0 / k)
        proba[pred < 0] = np.nan
        p.add(name, pred, proba)
    return p


def _brute_force(y, pa, pb, k, winner_a, alpha, family=None, index=0) -> int:
    """Every assignment of gold labels to the examples where the answers differ; the fewest changed that overturn."""
    differ = np.flatnonzero(pa != pb)
    best = None
    for labels in itertools.product(range(k), repeat=len(differ)):
        changed = int(np.sum(np.asarray(labels) != y[differ]))
        if best is not None and changed >= best:
            continue
        relabelled = y.copy()
        relabelled[differ] = labels
        if not _decides(relabelled, pa, pb, winner_a, alpha, family, index):
            best = changed
    assert best is not None
    return best


@pytest.mark.parametrize("seed", range(12))
def test_small_random_pairs_equal_brute_force_multiclass_failures_and_holm(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = [2, 3, 4][seed % 3]
    found_any = 0
    for _ in range(200):
        n = int(rng.integers(8, 16))
        y = rng.integers(0, k, n)
        pa = np.where(rng.random(n) < 0.8, y, rng.integers(0, k, n))
        pb = np.where(rng.random(n) < 0.35, y, rng.integers(0, k, n))
        pb[rng.random(n) < 0.1] = -1  # no answer: counted wrong, and no gold label can take it
        if seed % 4 == 3:
            pb[rng.random(n) < 0.1] = k  # a class the data lacks
        if np.sum(pa != pb) > 8:
            continue
        pc = PairedCorrectness.of(pa == y, pb == y)
        winner_a = int(pc.b) > int(pc.c)
        # a Holm family of three: this pair's and two others' p-values, held as measured
        family = [float(pc.p_value), 0.004, 0.3] if seed % 2 else [float(pc.p_value)]
        alpha = 0.2
        if not _decides(y, pa, pb, winner_a, alpha, family):
            continue
        win, lose = (pa, pb) if winner_a else (pb, pa)
        found = pair_fragility(y, win, lose, k, family=family, index=0, alpha=alpha)
        assert found == _brute_force(y, pa, pb, k, winner_a, alpha, family)
        found_any += 1
        if found_any == 5:
            break
    assert found_any == 5


def test_counts_search_uses_the_weaker_moves_when_the_loser_gave_no_answer() -> None:
    # b = 10 only the winner right, of which 2 the loser answered; the rest it failed on (relabelling makes both wrong)
    def decided(b: int, c: int) -> bool:
        return b > c and (b - c) ** 2 / (b + c) >= 3.841458820694124

    # brute force over (switched, both wrong, loser gained) moves
    brute = min(s + w + g for s in range(3) for w in range(9) for g in range(6) if not decided(10 - s - w, 0 + s + g))
    assert fewest_relabelled(10, 0, 2, 5, decided) == brute


def test_undecided_and_grouped_pairs_have_no_fragility() -> None:
    y, a, b = _pair_300()
    undecided = analyse(_predictions(y, {"a": a, "b": a.copy()}, 2), n_resamples=100).comparisons[0]
    assert undecided.fragility is None and undecided.answers_differ is None
    grouped = _predictions(y, {"a": a, "b": b}, 2)
    grouped.groups = np.arange(300) // 2
    comparison = analyse(grouped, n_resamples=100).comparisons[0]
    assert comparison.significant and comparison.fragility is None
