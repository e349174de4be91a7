"""A model measured several ways: its passes, as the config says them (what varies, and how many).

A model with ``prompts:`` (or stored prediction files given as ``passes: prompt``) is one model of
the run with several passes over the same examples. The config only says what varies and how
many passes there are (:meth:`~headtohead.config.models.base.ModelConfig.pass_specs`); how a pass
is made lives with the family (``adapters/prompt_variants.py``: the template and labels a prompt
pass shows), and how passes are pooled with the statistics, one rule per factor
(``stats/passes.py``). See ``docs/architecture.md``, "Passes".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Factor", "FACTORS", "PLANNED_FACTORS", "PassSpec", "pass_specs", "factor_error"]

#: What varies between a model's passes (issue 41's repeated runs will be one more).
Factor = Literal["prompt"]
FACTORS: tuple[Factor, ...] = ("prompt",)
#: Factors people ask for that have no rule yet: refused in one line that says what to do instead.
PLANNED_FACTORS = {"repeat": "repeated runs of one model are not supported yet"}
#: The letter of a factor's pass keys (``p1``, ``p2`` …).
_KEY_PREFIX: dict[str, str] = {"prompt": "p"}


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
        What varies between the passes (``prompt``).
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
