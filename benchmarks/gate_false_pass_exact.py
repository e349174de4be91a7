"""The gate's false-pass rate with the candidate worse by exactly the margin, summed exactly over a dense grid.

``h2h gate`` passes a candidate when the lower bound of the accuracy gap's interval
(:func:`headtohead.stats.paired.difference_interval`, 95 %: each side a test at 2.5 %) is at or
above ``−margin``. With ``n`` paired examples, a share ``ψ`` of them discordant and the true gap
exactly ``−margin``, a table's discordant count ``k = b + c`` is Binomial(n, ψ) and, given ``k``,
``b`` (candidate right alone) is Binomial(k, q) with ``q = (ψ − margin)/(2ψ)``. For fixed ``n``,
margin and ``k`` the gate passes exactly when ``b`` is at least some ``b_min(k)`` (the interval's
lower bound grows with ``b`` at fixed ``k``; :func:`pass_threshold` checks it on every ``b`` for
``n ≤ 120`` when ``check=True``), so

    P(false pass) = Σ_k Binomial(n, ψ).pmf(k) · P(Binomial(k, q) ≥ b_min(k)),

with no Monte-Carlo error. ``b_min`` is found by bisection on the implementation itself (the
function the gate calls), once per ``(n, margin)``, and reused for every ``ψ``.

Run: ``PYTHONPATH=src .venv/bin/python benchmarks/gate_false_pass_exact.py`` (a few minutes on
two cores); ``--quick`` for a coarse grid. The grid is the one the README's claim covers:
n = 50 to 2,000 (every n to 300, every 10th to 1,000, every 50th to 2,000), discordance 1 to 40 %
in steps of 0.5 pp, margins 0.5 to 5 pp in steps of 0.5 pp (margin below the discordance).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import numpy as np

from headtohead.stats.paired import difference_interval

CONFIDENCE = 0.95  # the gate's default: a two-sided 95 % interval, each side 2.5 %


def pass_threshold(n: int, margin: float, *, check: bool = False) -> np.ndarray:
    """``b_min[k]`` for ``k = 0 … n``: the fewest only-candidate-right examples that pass (``k + 1``: none pass)."""
    k = np.arange(n + 1)
    passes_at_k = difference_interval(k, 0, n, CONFIDENCE)[0] >= -margin
    high = np.where(passes_at_k, k, k + 1)  # invariant: b = high passes (k + 1: nothing does)
    low = np.where(passes_at_k, 0, k + 1)
    while np.any(low < high):
        mid = np.minimum((low + high) // 2, k)  # settled entries (k + 1) are evaluated at k and ignored
        ok = difference_interval(mid, k - mid, n, CONFIDENCE)[0] >= -margin
        searching = low < high
        low, high = np.where(searching & ~ok, mid + 1, low), np.where(searching & ok, mid, high)
    if check:
        b, kk = np.meshgrid(np.arange(n + 1), k, indexing="ij")
        valid = b <= kk
        ok = np.zeros_like(valid)
        ok[valid] = difference_interval(b[valid], kk[valid] - b[valid], n, CONFIDENCE)[0] >= -margin
        assert np.array_equal(ok[valid], (b >= low[kk])[valid]), f"not monotone in b at n = {n}, margin {margin}"
    return low


def false_pass(n: int, psi: float, margin: float, b_min: np.ndarray) -> float:
    """P(the gate passes) at discordance ``psi`` with the true gap ``−margin`` (``b_min`` from :func:`pass_threshold`)."""
    from scipy import stats

    k = np.arange(n + 1)
    q = (psi - margin) / (2.0 * psi)
    return float(np.sum(stats.binom.pmf(k, n, psi) * stats.binom.sf(b_min - 1, k, q)))


@dataclass(frozen=True)
class Worst:
    rate: float
    n: int
    psi: float
    margin: float

    def text(self) -> str:
        return f"{100 * self.rate:.3f} % (n = {self.n:,}, discordance {100 * self.psi:g} %, margin {100 * self.margin:g} pp)"


def grid(quick: bool) -> tuple[list[int], list[float], list[float]]:
    """The sizes, discordances and margins the README's claim covers."""
    if quick:
        return [50, 100, 110, 200, 500, 2000], [0.01, 0.02, 0.05, 0.1, 0.2, 0.4], [0.005, 0.01, 0.02, 0.05]
    sizes = list(range(50, 301)) + list(range(310, 1001, 10)) + list(range(1050, 2001, 50))
    psis = [round(0.01 + 0.005 * i, 4) for i in range(79)]  # 1 % … 40 %
    margins = [round(0.005 * i, 4) for i in range(1, 11)]  # 0.5 … 5 pp
    return sizes, psis, margins


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a coarse grid (seconds)")
    args = parser.parse_args(argv)
    sizes, psis, margins = grid(args.quick)
    settings, above = 0, 0
    worst: dict[str, Worst] = {}
    for n in sizes:
        for margin in margins:
            b_min = pass_threshold(n, margin, check=n <= 120 and margin in (0.005, 0.05))
            for psi in psis:
                if margin >= psi:
                    continue
                rate = false_pass(n, psi, margin, b_min)
                settings += 1
                above += rate > 0.025
                for key, lowest in (("from 50", 50), ("from 100", 100), ("from 500", 500)):
                    if n >= lowest and (key not in worst or rate > worst[key].rate):
                        worst[key] = Worst(rate, n, psi, margin)
        print(f"n = {n}: worst so far {worst['from 50'].text()}", file=sys.stderr, flush=True)
    print(f"{settings:,} settings ({len(sizes)} sizes × {len(psis)} discordances × {len(margins)} margins, "
          f"margin < discordance); above 2.5 % at {above:,}")  # fmt: skip
    for key, w in worst.items():
        print(f"worst {key} examples: {w.text()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
