"""``kind: lm-eval``: the per-document samples an lm-evaluation-harness run logged (``--log_samples``)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from headtohead.config.models.keys import Priced

__all__ = ["LmEvalSettings"]


class LmEvalSettings(Priced):
    """A ``samples_<task>_<date>.jsonl`` file, or a folder of them (one per task), read as one model's answers."""

    kind: Literal["lm-eval"]
    reruns: ClassVar[bool] = False  # stored answers: nothing to re-run

    metric: str | None = Field(
        default=None,
        description="The per-document metric that says right or wrong (acc, acc_norm, exact_match …; default: acc, "
        "else exact_match, else the only one logged).",
    )
    filter: str | None = Field(
        default=None,
        description="The filter whose responses are scored (lm-eval's filter name; default: 'none', else the only one).",
    )
    tasks: list[str] | None = Field(
        default=None, description="The tasks of a folder to read (default: every task it holds)."
    )
