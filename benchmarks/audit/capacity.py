"""The capacity scenario's ratio interval: servers of known capacity, A against B, over seeded repeats.

Two servers serve one request at a time, ``d`` and ``2d`` seconds each (capacities ``1/d`` and
``1/(2d)``: a true ratio of 2); every probe's latencies are computed exactly (Lindley's recursion,
``sim.queueing.serial_sender``, 30 ms of network on top), its arrivals Poisson and seeded, and
:func:`headtohead.engines.capacity.run_capacity` searches both at ``e2e_p99 ≤ 2 s`` with 3 seeded
searches each, as a run does. Measured: how often the ratio's 95 % interval holds 2, and, with two
identical servers (A/A), how often the verdict names one as holding more (Holm over the one pair).
"""

from __future__ import annotations

from sim.queueing import serial_sender

from audit.common import Row, grid_seed, row
from headtohead.adapters.chat_stream import LoadTarget
from headtohead.config.speed import SpeedConfig
from headtohead.engines.capacity import run_capacity

__all__ = ["capacity_rows"]

#: (service time of A in s, of B, measured requests per probe)
_GRID = [(0.02, 0.04, 60), (0.02, 0.04, 299), (0.005, 0.01, 60), (0.02, 0.02, 60)]
_QUICK = [(0.02, 0.04, 60)]


def _pair(d_a: float, d_b: float, requests: int, seed: int) -> tuple[float | None, float | None, str | None]:
    """One seeded run: (CI low, CI high) of the ratio b/a and the model named as holding more."""
    targets = [
        LoadTarget(name, [{}], [0], lambda text: 0, serial_sender(d, 0.03)) for name, d in (("a", d_a), ("b", d_b))
    ]
    config = SpeedConfig(
        scenarios=["capacity"],
        capacity={"slo": {"e2e_p99": "2s"}, "requests": requests, "repeats": 3, "start_rate": 0.2 / d_a},
    )
    (pair,) = run_capacity(targets, config, seed=seed).comparisons
    return pair.ci_low, pair.ci_high, pair.more


def capacity_rows(*, quick: bool = False, seed: int = 0) -> list[Row]:
    """Coverage of the true capacity ratio, and the false 'holds more' rate of identical servers."""
    runs = 6 if quick else 400
    rows = []
    for d_a, d_b, requests in _QUICK if quick else _GRID:
        found = [_pair(d_a, d_b, requests, grid_seed(seed, i, requests, int(d_a * 1e4))) for i in range(runs)]
        setting = (
            f"servers of {d_a * 1e3:g} and {d_b * 1e3:g} ms a request, Poisson arrivals, {requests} requests "
            f"a probe, 3 searches, p99 e2e ≤ 2 s"
        )
        truth = d_a / d_b
        if truth == 1.0:
            named = sum(more is not None for _, _, more in found)
            rows.append(
                row("capacity", "'holds more' between identical servers", setting, "error", 0.05, named / runs, runs)
            )
        else:
            covered = sum(low is not None and high is not None and low <= truth <= high for low, high, _ in found)
            rows.append(
                row(
                    "capacity",
                    f"capacity ratio 95 % interval holds {1 / truth:g}",
                    setting,
                    "coverage",
                    0.95,
                    covered / runs,
                    runs,
                )
            )
    return rows
