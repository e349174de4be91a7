"""A model measured several ways: its passes, as the config says them (what varies, and how many).

A model with ``prompts:`` or ``repeats: k`` (or stored prediction files given as ``passes: prompt``
or ``passes: repeat``) is one model of
the run with several passes over the same examples. The config only says what varies and how
many passes there are (:meth:`~headtohead.config.models.base.ModelConfig.pass_specs`); how a pass
is made lives with the family (``adapters/prompt_variants.py``: the template and labels a prompt
pass shows), and how passes are pooled with the statistics, one rule per factor
(``stats/passes.py``). See ``docs/architecture.md``, "Passes".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Factor", "FACTORS", "PLANNED_FACTORS", "PassSpec", "pass_specs", "factor_error", "repeat_seed"]

#: What varies between a model's passes: its prompt, or nothing but the run (a repeat, with a seed of its own).
Factor = Literal["prompt", "repeat"]
FACTORS: tuple[Factor, ...] = ("prompt", "repeat")
#: Factors people ask for that have no rule yet: refused in one line that says what to do instead.
PLANNED_FACTORS: dict[str, str] = {}
#: The letter of a factor's pass keys (``p1``, ``p2`` … ; ``r1``, ``r2`` …).
_KEY_PREFIX: dict[str, str] = {"prompt": "p", "repeat": "r"}
#: The step between the seeds of a model's repeats (a prime: repeats of runs seeded 42 and 43 do not meet).
_SEED_STEP = 104_729


@dataclass(frozen=True)
class PassSpec:
    """One pass of a model measured several ways.

    Attributes
    ----------
    index : int
        Its position among the model's passes, from 0 (the order they run and are stored in).
    key : str
        Its key in the records and in ``predictions.npz`` (``p1`` …).
    factor : str
        What varies between the passes (``prompt``, ``repeat``).
    count : int
        The model's passes in all.
    """

    index: int
    key: str
    factor: Factor
    count: int


def pass_specs(factor: Factor, count: int) -> tuple[PassSpec, ...]:
    """The ``count`` passes of a model whose ``factor`` varies.

    Examples
    --------
    >>> [p.key for p in pass_specs("prompt", 3)]
    ['p1', 'p2', 'p3']
    """
    return tuple(PassSpec(i, f"{_KEY_PREFIX[factor]}{i + 1}", factor, count) for i in range(count))


def factor_error(factor: str, where: str) -> str:
    """One line for a factor no rule pools: not supported yet (and what to do), or not a factor at all."""
    if factor in PLANNED_FACTORS:
        return (
            f"{where}: passes: {factor} — {PLANNED_FACTORS[factor]}; give each file as a model of its own, or "
            f"passes: prompt when the files differ by their prompt"
        )
    return f"{where}: passes: {factor!r} is not a factor; use passes: {' or '.join(FACTORS)}"


def repeat_seed(seed: int, index: int) -> int:
    """The seed of repeat ``index`` (from 0) of a run seeded ``seed``: the run's own for the first repeat.

    Python, NumPy and torch are seeded with it before the repeat's model loads, and an LLM asked over
    HTTP is sent it (``seed``), so each repeat is a run of its own and the same run gives the same repeats.

    Examples
    --------
    >>> [repeat_seed(42, r) for r in range(3)]
    [42, 104771, 209500]
    """
    return (seed + index * _SEED_STEP) % 2**32
