"""What every section of the statistical audit returns: rows of measured rates, each checked against its target.

A row is one interval's coverage or one decision's error rate at one point of a grid, measured
by simulation under the method ``main`` used before the statistics issue (``before``, where
there was one) and under the method headtohead uses now (``after``), with the Monte-Carlo
standard error of ``after``. Targets (``docs/statistics.md``): a 95 % interval covers ≥ 93 %
wherever n ≥ 50 (≥ 90 % below); a test, gate or stop rule errs at most its nominal rate + 1 pp; a
stated probability (``kind = "calibration"``: P(on the front) in a bin, its mean the nominal) is met
by the observed share within :data:`CALIBRATION_TOLERANCE`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

__all__ = [
    "Row",
    "row",
    "meets_target",
    "markdown_table",
    "summary_table",
    "as_rows",
    "bootstrap_accuracy_interval",
    "holm_rows",
    "GRID_NOTE",
    "CALIBRATION_TOLERANCE",
    "grid_seed",
]

GRID_NOTE = (
    "coverage: share of simulated runs whose 95 % interval contains the truth (target ≥ 93 % at n ≥ 50, "
    "≥ 90 % below); error: share of runs where the decision is wrong (target ≤ nominal + 1 pp)"
)


#: How far an observed share may sit from the probability stated for it (a row of kind "calibration").
CALIBRATION_TOLERANCE = 0.05


@dataclass(frozen=True)
class Row:
    """One measured rate (see the module docstring)."""

    section: str
    quantity: str
    setting: str
    kind: str  # "coverage" | "error" | "calibration"
    nominal: float
    after: float
    mc_se: float
    runs: int
    before: float | None = None
    n: int | None = None  # examples, where the coverage target depends on it

    @property
    def target(self) -> float:
        if self.kind == "coverage":
            return 0.90 if self.n is not None and self.n < 50 else 0.93
        return self.nominal + 0.01

    @property
    def met(self) -> bool:
        return meets_target(self)


def row(
    section: str,
    quantity: str,
    setting: str,
    kind: str,
    nominal: float,
    hits: np.ndarray | float,
    runs: int,
    *,
    before: float | None = None,
    n: int | None = None,
) -> Row:
    """A row from the share ``hits`` over ``runs`` simulations (its binomial standard error attached)."""
    rate = float(np.mean(hits)) if isinstance(hits, np.ndarray) else float(hits)
    return Row(
        section,
        quantity,
        setting,
        kind,
        nominal,
        rate,
        math.sqrt(max(rate * (1 - rate), 1e-12) / runs),
        runs,
        before,
        n,
    )


def grid_seed(*parts: int) -> int:
    """A seed for one grid point, the same in every process (``hash`` of a tuple is not)."""
    return int(np.random.SeedSequence(list(parts)).generate_state(1)[0])


def meets_target(r: Row, slack: float = 2.0) -> bool:
    """Whether ``r`` meets its target within ``slack`` Monte-Carlo standard errors."""
    if r.kind == "coverage":
        return r.after + slack * r.mc_se >= r.target
    if r.kind == "calibration":
        return abs(r.after - r.nominal) - slack * r.mc_se <= CALIBRATION_TOLERANCE
    return r.after - slack * r.mc_se <= r.target


def as_rows(items: Iterable[Row | dict]) -> list[Row]:
    """Rows from :class:`Row` objects or the dicts a section module returns."""
    out = []
    for item in items:
        if isinstance(item, Row):
            out.append(item)
        else:
            out.append(
                Row(
                    item["section"],
                    item["quantity"],
                    item["setting"],
                    item["kind"],
                    item["nominal"],
                    item["after"],
                    item["mc_se"],
                    item["runs"],
                    item.get("before"),
                    item.get("n"),
                )
            )
    return out


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f} %"


def markdown_table(rows: Sequence[Row]) -> str:
    """The audit table: one line per row, the target and whether it is met."""
    lines = [
        "| section | what | setting | nominal | before | after | MC s.e. | runs | target | met |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        nominal = f"{100 * r.nominal:.1f} %" if r.kind == "coverage" else f"≤ {100 * r.nominal:.1f} %"
        target = f"≥ {100 * r.target:.0f} %" if r.kind == "coverage" else f"≤ {100 * r.target:.1f} %"
        if r.kind == "calibration":
            nominal, target = f"{100 * r.nominal:.1f} %", f"within {100 * CALIBRATION_TOLERANCE:.0f} pp"
        lines.append(
            f"| {r.section} | {r.quantity} | {r.setting} | {nominal} | {_pct(r.before)} | {_pct(r.after)} | "
            f"{100 * r.mc_se:.2f} pp | {r.runs:,} | {target} | {'yes' if r.met else '**no**'} |"
        )
    return "\n".join(lines)


def summary_table(rows: Sequence[Row]) -> str:
    """One line per quantity: its worst value over the grid now and before, and how many grid points meet the target."""
    groups: dict[tuple[str, str], list[Row]] = {}
    for r in rows:
        groups.setdefault((r.section, r.quantity), []).append(r)
    lines = [
        "| section | what | grid points | worst after (where) | worst before | target | met |",
        "|---|---|---|---|---|---|---|",
    ]
    for (section, quantity), found in groups.items():
        coverage = found[0].kind == "coverage"
        pick = min if coverage else max
        worst = pick(found, key=lambda r: r.after)
        befores = [r.before for r in found if r.before is not None]
        before = _pct(pick(befores)) if befores else "—"
        target = f"≥ {100 * worst.target:.0f} %" if coverage else f"≤ {100 * worst.target:.1f} %"
        if found[0].kind == "calibration":
            worst = max(found, key=lambda r: abs(r.after - r.nominal))
            target = f"within {100 * CALIBRATION_TOLERANCE:.0f} pp of the stated {_pct(worst.nominal)}"
        met = sum(r.met for r in found)
        lines.append(
            f"| {section} | {quantity} | {len(found)} | {_pct(worst.after)} ± {100 * worst.mc_se:.1f} "
            f"({worst.setting}) | {before} | {target} | {met} of {len(found)} |"
        )
    return "\n".join(lines)


@lru_cache(maxsize=200_000)
def bootstrap_accuracy_interval(
    b: int, c: int, n: int, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """The paired BCa bootstrap interval of an accuracy gap: what a run showed before the statistics issue.

    The gap is the mean of ``D = 1[A right] − 1[B right]``, so the interval depends on the
    examples only through ``(b, c, n)``. As version 3's engine did: resample counts from
    Multinomial(n, (b, c, n − b − c)/n), the BCa bias correction from the share of resamples
    below the estimate, the acceleration from the jackknife in closed form (three kinds of
    example), linear-interpolated quantiles; cached per table. When every resample is equal
    (``b = c = 0``) version 3 showed the point ``[0, 0]``.
    """
    from scipy.special import ndtr, ndtri

    estimate = (b - c) / n
    if b == 0 and c == 0:
        return 0.0, 0.0
    rng = np.random.default_rng([seed, b, c, n])
    counts = rng.multinomial(n, [b / n, c / n, max(0.0, 1 - (b + c) / n)], size=n_resamples)
    theta = (counts[:, 0] - counts[:, 1]) / n
    if np.ptp(theta) == 0:
        return float(theta[0]), float(theta[0])
    tol = 1e-12
    z0 = ndtri(
        (np.count_nonzero(theta < estimate - tol) + np.count_nonzero(theta <= estimate + tol)) / (2.0 * n_resamples)
    )
    tail = (1 - confidence) / 2
    if not np.isfinite(z0):
        low, high = np.quantile(theta, [tail, 1 - tail])
        return float(low), float(high)
    # jackknife: leaving out an example of each kind (only A right, only B right, tie)
    kinds = np.array([b, c, n - b - c], dtype=np.float64)
    left_out = np.array([(b - 1 - c), (b - (c - 1)), (b - c)]) / (n - 1)
    mean = np.average(left_out, weights=kinds)
    d = mean - left_out
    den = (kinds * d**2).sum()
    a = 0.0 if den <= 0 else float((kinds * d**3).sum() / (6.0 * den**1.5))
    z = ndtri(np.array([tail, 1 - tail]))
    low, high = np.quantile(theta, ndtr(z0 + (z0 + z) / (1 - a * (z0 + z))))
    return float(low), float(high)
