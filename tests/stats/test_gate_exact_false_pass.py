"""The gate's false-pass rate at the margin, summed exactly (``benchmarks/gate_false_pass_exact.py``), and the
label of an interval joined with the exact one.

The benchmark's fast sum (a pass threshold per discordant count, found by bisection on the gate's
own interval) equals a brute-force sum over every table, and reproduces the figures
``docs/statistics.md`` and the README quote.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from headtohead.stats.gate import accuracy_noninferiority
from headtohead.stats.paired import PairedCorrectness, difference_interval, score_interval

_SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gate_false_pass_exact.py"


def _benchmark():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("gate_false_pass_exact", _SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def _brute_force(n: int, psi: float, margin: float) -> float:
    """Every table (b, c) of n examples, its multinomial probability, the gate's own decision."""
    b, c = (v.ravel() for v in np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij"))
    keep = b + c <= n
    b, c = b[keep], c[keep]
    p10, p01 = (psi - margin) / 2, (psi + margin) / 2
    p = stats.multinomial.pmf(np.stack([b, c, n - b - c], axis=1), n, [p10, p01, 1.0 - psi])
    low, _ = difference_interval(b, c, n, 0.95)
    return float(p[low >= -margin].sum())


@pytest.mark.parametrize(("n", "psi", "margin"), [(50, 0.2, 0.005), (60, 0.03, 0.01), (110, 0.1, 0.01)])
def test_the_fast_exact_sum_equals_the_sum_over_every_table(n: int, psi: float, margin: float) -> None:
    bench = _benchmark()
    b_min = bench.pass_threshold(n, margin, check=True)  # check: the pass region is b ≥ b_min(k) on every table
    assert bench.false_pass(n, psi, margin, b_min) == pytest.approx(_brute_force(n, psi, margin), abs=1e-12)


@pytest.mark.parametrize(
    ("n", "psi", "margin", "percent"),
    [
        (50, 0.2, 0.005, 2.95),  # the worst of the audit's 147 settings
        (50, 0.175, 0.005, 2.98),  # the worst of the dense grid
        (110, 0.08, 0.01, 2.84),  # the worst from 100 examples: the README's "at most 2.6 %" did not hold
        (520, 0.045, 0.005, 2.59),  # the worst from 500
    ],
)
def test_the_figures_the_docs_quote(n: int, psi: float, margin: float, percent: float) -> None:
    """README and docs/statistics.md, section 7 (the grid's worst points, from ``gate_false_pass_exact.py``)."""
    bench = _benchmark()
    assert round(100 * bench.false_pass(n, psi, margin, bench.pass_threshold(n, margin)), 2) == percent


def test_an_interval_joined_with_the_exact_one_says_so() -> None:
    """Where one model is never right alone the interval is Tango's ∪ Clopper–Pearson: labelled ``+exact``."""
    never = PairedCorrectness(np.int64(5), np.int64(0), np.int64(40))
    low, high = never.interval()
    tango_low, tango_high = score_interval(5, 0, 40)
    assert high > tango_high  # widened
    assert never.method == "tango-score+exact"
    assert PairedCorrectness(np.int64(0), np.int64(3), np.int64(40)).method == "tango-score+exact"
    for b, c in ((5, 2), (0, 0)):  # Tango's alone (b = c = 0: no share to be exact about)
        assert PairedCorrectness(np.int64(b), np.int64(c), np.int64(40)).method == "tango-score"
    cells = PairedCorrectness(np.array([5, 5, 0]), np.array([0, 2, 0]), np.array([40, 40, 40]))
    assert cells.methods.tolist() == ["tango-score+exact", "tango-score", "tango-score"]
    with pytest.raises(ValueError, match="methods"):
        _ = cells.method
    grouped = PairedCorrectness.of(
        np.array([1, 1, 1, 0, 1, 1], bool), np.array([1, 0, 0, 0, 1, 1], bool), groups=np.array([0, 0, 1, 1, 2, 2])
    )
    assert grouped.method == "tango-score+clusters+exact"


def test_the_gate_names_the_joined_interval() -> None:
    from headtohead.report.words.gate import decision_explanation

    y = np.zeros(60, dtype=int)
    baseline = y.copy()
    baseline[:3] = 1  # the baseline wrong on 3, the candidate never: only the candidate is ever right alone
    decision = accuracy_noninferiority(y, baseline, y, margin=0.01)
    assert decision.method == "tango-score+exact"
    assert "joined with the exact one" in decision_explanation(decision)
    other = y.copy()
    other[3:5] = 1
    assert accuracy_noninferiority(y, baseline, other, margin=0.01).method == "tango-score"
