"""Where a run's time went, in one line (the last line ``h2h run`` prints)."""

from __future__ import annotations

from collections.abc import Sequence

from headtohead.errors import listing
from headtohead.report.words.numbers import format_duration
from headtohead.results.records import RunResult

__all__ = ["timings_line"]


def timings_line(result: RunResult, reused: Sequence[str] = ()) -> str | None:
    """Where the run's time went, on one line (``None`` for results without timings).

    ``reused``: the models ``--resume`` re-used, whose time the earlier run spent (not counted
    here; the line names them).

    Examples
    --------
    ``Time: setup 1.2 s · load 3.4 s · evaluate 6.9 s · speed 12.0 s · statistics 0.8 s · report 0.6 s · total 25.3 s``
    """
    t = result.timings
    if t is None:
        return None
    parts = [
        ("setup", t.setup_s),
        ("load", t.load_s),
        ("evaluate", t.evaluate_s),
        ("speed", t.speed_s),
        ("statistics", t.statistics_s),
        ("report", t.report_s),
        ("total", t.total_s),
    ]
    line = "Time: " + " · ".join(f"{name} {format_duration(seconds)}" for name, seconds in parts if seconds is not None)
    if reused:
        line += f" (reused from the earlier run, not timed again: {listing(list(reused))})"
    return line
