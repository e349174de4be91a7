"""The search for the highest rate a model holds: bracket geometrically, then bisect (no LoadGen here).

See ``docs/performance.md``, "What runs".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, cast

from headtohead.stats.server import bracket_estimate

__all__ = ["RateSearch", "start_rate"]


def start_rate(base_qps: float, growth: float, u: float) -> float:
    """A random start in ``[base / growth, base]`` (``u`` uniform in [0, 1)), so that where the true
    capacity falls in the final bracket is random and the searches' estimates are unbiased.

    Examples
    --------
    >>> start_rate(100.0, 2.0, 0.0), start_rate(100.0, 2.0, 0.5)
    (100.0, 70.71067811865476)
    """
    return cast(float, base_qps * growth ** (-u))  # float ** float is typed Any (it may be complex)


@dataclass
class RateSearch:
    """The bracket-then-bisect search of one model (see the module docstring).

    Attributes
    ----------
    next_qps : float or None
        The rate to try next; ``None`` once the search is done.
    held, failed : float or None
        The highest rate held and the lowest rate above it that failed.
    floor : bool
        The search stopped going down: a trial at light load already missed the bound, or the
        next rate would be below ``min_qps``.
    """

    start: float
    growth: float
    precision: float
    min_qps: float
    max_qps: float | None = None
    held: float | None = None
    failed: float | None = None
    floor: bool = False
    next_qps: float | None = None
    trials: int = 0

    def __post_init__(self) -> None:
        self.next_qps = self._clamp(self.start)

    def _clamp(self, rate: float) -> float:
        return min(max(rate, self.min_qps), self.max_qps) if self.max_qps is not None else max(rate, self.min_qps)

    @property
    def done(self) -> bool:
        return self.next_qps is None

    @property
    def phase(self) -> Literal["bracket", "bisect"]:
        return "bisect" if self.held is not None and self.failed is not None else "bracket"

    @property
    def at_cap(self) -> bool:
        """``max_qps`` held: the model's capacity is at least that."""
        return self.held is not None and self.failed is None and self.done

    @property
    def estimate(self) -> float | None:
        return bracket_estimate(self.held, self.failed)

    def record(self, rate: float, held: bool, *, light_load_miss: bool = False) -> None:
        """Take a trial's outcome and set :attr:`next_qps`.

        Parameters
        ----------
        rate : float
            The target rate the trial ran at (:attr:`next_qps`).
        held : bool
            Whether it held (LoadGen: VALID).
        light_load_miss : bool
            A failed trial at light load whose typical request already missed the bound: lower
            rates cannot help, so the search stops going down.
        """
        self.trials += 1
        if held:
            self.held = rate if self.held is None else max(self.held, rate)
        else:
            self.failed = rate if self.failed is None else min(self.failed, rate)
        if self.held is None:  # only failures so far: go down
            lower = rate / self.growth
            if light_load_miss or lower < self.min_qps or math.isclose(rate, self.min_qps):
                self.floor, self.next_qps = True, None
            else:
                self.next_qps = lower
        elif self.failed is None:  # only successes so far: go up
            at_top = self.max_qps is not None and rate >= self.max_qps
            self.next_qps = None if at_top else self._clamp(rate * self.growth)
        elif self.failed / self.held <= 1.0 + self.precision:
            self.next_qps = None
        else:
            self.next_qps = math.sqrt(self.held * self.failed)
