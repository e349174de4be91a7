"""Audit of a model asked with several prompts: the comparison pooled over prompts (``stats.prompts``).

Five prompts of an LLM against an encoder of the same mean accuracy, 500 examples of shared
difficulty (``benchmarks/sim/prompts.py``, ``benchmarks/prompt_noise.py``). "Fixed": the prompts'
accuracies −8, −4, 0, +4, +8 pp around the mean (issue 31's done-criterion); "before" is what a run
with one prompt (drawn at random) says. "Random": each run's five offsets drawn from N(0, 4 pp),
the encoder equal to their population mean; "before" is the pooled rows clustered by example
alone, which treats the five prompts drawn as the only ones.
"""

from __future__ import annotations

from prompt_noise import N_EXAMPLES, simulate

from audit.common import Row, row

__all__ = ["prompt_rows"]

_WHAT = {
    "fixed": ("5 prompts at −8, −4, 0, +4, +8 pp around the encoder's accuracy", "one prompt"),
    "random": ("5 prompts drawn from N(0, 4 pp) around the encoder's accuracy", "examples only"),
}


def prompt_rows(*, quick: bool = False, seed: int = 0) -> list[Row]:
    """The pooled test's false 'better' rate and its interval's coverage, for prompts fixed and drawn."""
    runs = 200 if quick else 2000
    rows = []
    for scenario, (setting, before) in _WHAT.items():
        rates = simulate(scenario, runs, seed)
        setting = f"n = {N_EXAMPLES}, {setting}"
        rows.append(
            row(
                "prompts",
                f"'better' at no pooled gap, α = 0.05 (pooled over prompts; before: {before})",
                setting,
                "error",
                0.05,
                rates["pooled"],
                runs,
                before=rates[before],
                n=N_EXAMPLES,
            )
        )
        rows.append(
            row(
                "prompts",
                "pooled accuracy gap: 95 % interval covers",
                setting,
                "coverage",
                0.95,
                rates["covers"],
                runs,
                n=N_EXAMPLES,
            )
        )
    return rows
