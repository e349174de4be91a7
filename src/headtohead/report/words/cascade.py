"""The sentences of a run's cascades: how the threshold was chosen, what it guarantees, which examples were judged."""

from __future__ import annotations

import math

from headtohead.report.words.numbers import format_money, format_number, format_percent, format_pp, format_probability
from headtohead.results.cascade import CascadeRecord
from headtohead.results.records import RunResult

__all__ = ["threshold_text", "cascade_note", "examples_needed", "held_out_words"]

_SCORES = {"top": "top probability", "margin": "margin"}


def threshold_text(c: CascadeRecord) -> str:
    """``top probability ≥ 0.87`` (a threshold near 1 as ``1 − 0.0001``); ``none passed: all deferred``."""
    if c.threshold is None:
        return "none passed: all deferred"
    t = c.threshold
    value = f"1 − {format_money(1 - t)}" if 0.999 <= t < 1 else format_probability(t)
    return f"{_SCORES[c.score]} ≥ {value}"


def held_out_words(n_examples: int, held_out: int) -> str:
    """What the dataset line says of the examples a cascade calibrated on.

    Examples
    --------
    >>> held_out_words(1500, 772)
    'statistics on the 728 examples no cascade chose its threshold on (772 held out)'
    """
    judged = format_number(n_examples - held_out, "integer")
    return f"statistics on the {judged} examples no cascade chose its threshold on ({format_number(held_out, 'integer')} held out)"


def examples_needed(max_drop: float, delta: float) -> int:
    """The fewest calibration examples without a single harm that pass a threshold at ``max_drop`` and ``delta``.

    Examples
    --------
    >>> examples_needed(0.005, 0.05)
    598
    """
    return math.ceil(math.log(delta) / math.log1p(-max_drop)) if max_drop > 0 else 0


def cascade_note(result: RunResult) -> list[str]:
    """What the cascades' table rests on: the split, the guarantee, and a cascade whose test passed no threshold."""
    found = [(m.name, m.cascade) for m in result.models if m.cascade is not None]
    if not found:
        return []
    held = len(result.calibration_examples)
    judged = result.dataset.n_examples - held
    split = (
        f"Each cascade's threshold was chosen on a seeded share of the examples ({format_number(held, 'integer')} "
        f"held out for it) by Learn-then-Test: the thresholds of a fixed grid, most deferring first, each tested "
        f'against "it loses more than the allowed accuracy" with an exact binomial on its harms (the cheap model '
        f"wrong where the expensive one is right), stopping at the first not rejected. With probability at least "
        f"1 − delta the cascade's accuracy is then within the allowed drop of the expensive model's. Every statistic "
        f"of this run — the cascades', their parts' and every other model's — reads the other "
        f"{format_number(judged, 'integer')} examples only, so a cascade is paired with every model on examples none "
        f"of which chose its threshold."
    )
    lines = [split]
    for name, c in found:
        n_cal = len(c.calibration_examples)
        if c.threshold is None:
            need = examples_needed(c.max_drop, c.delta)
            lines.append(
                f"{name}: no threshold passed at delta {format_probability(c.delta)}, so it defers every example (it "
                f"is {c.expensive}). A drop of at most {format_pp(c.max_drop, signed=False)} pp needs at least "
                f"{format_number(need, 'integer')} calibration examples without a harm; it had "
                f"{format_number(n_cal, 'integer')}."
            )
        elif c.deferral_share is not None:
            lines.append(
                f"{name}: defers {format_percent(c.deferral_share)} of the examples to {c.expensive}; cost and latency "
                f"are {c.cheap}'s on every example plus {c.expensive}'s on the deferred share."
            )
    return lines
