"""The statistical audit's reduced grid (``benchmarks/audit_statistics.py --quick``): every target met.

The full grid and its table are in ``docs/statistics.md``; this runs the same code on fewer grid
points and simulations, so a change that breaks an interval's coverage or a decision's error
rate fails here.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def audit():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import audit_statistics

        yield audit_statistics
    finally:
        sys.path.remove(str(BENCHMARKS))


#: The audit in two halves of about equal time, which xdist's workers run side by side: the dependence section
#: (clustered data and early stops: half the time) and every other.
PARTS = {
    "dependence": {"groups", "early stops"},
    "the others": {"pairs", "gate", "sweep", "failures", "calibration", "classes", "dominance"},
}


@pytest.mark.slow
@pytest.mark.parametrize("part", list(PARTS))
def test_the_reduced_audit_meets_every_target(audit, part) -> None:
    names = [s for s in audit.SECTIONS if (s == "dependence") == (part == "dependence")]
    rows = audit.run_audit(names, quick=True, seed=0)
    assert PARTS[part] <= {r.section for r in rows}
    missed = [
        f"{r.section}: {r.quantity} [{r.setting}] {r.after:.3f} (target {r.target:.3f})" for r in rows if not r.met
    ]
    assert not missed, "\n".join(missed)
    # and the audit can tell: what the issue found wrong before is wrong in its "before" column
    before = {(r.section, r.setting): r.before for r in rows if r.before is not None}
    if part == "dependence":
        assert max(r.before for r in rows if r.section == "groups" and r.before is not None) > 0.2
    else:
        assert before[("gate", "n = 100, discordance 2 %, margin 1 pp")] > 0.1


def test_the_version_3_bootstrap_interval_is_reproduced(audit) -> None:
    """The audit's "before" column for accuracy gaps is the paired BCa interval version 3 showed."""
    from audit.common import bootstrap_accuracy_interval

    from headtohead.stats.bootstrap import paired_bootstrap

    b, c, n = 14, 5, 200
    y = np.zeros(n, dtype=int)
    a = np.r_[np.zeros(b), np.ones(c), np.zeros(n - b - c)].astype(int)
    other = np.r_[np.ones(b), np.zeros(n - b)].astype(int)
    reference = paired_bootstrap(y, a, other, metrics=["accuracy"], n_resamples=20_000, seed=1)["accuracy"]
    low, high = bootstrap_accuracy_interval(b, c, n, n_resamples=20_000)
    assert (low, high) == pytest.approx((reference.low, reference.high), abs=0.006)
