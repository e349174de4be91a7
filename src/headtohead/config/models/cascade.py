"""``kind: cascade``: a cheap model that answers when it is sure and defers the rest to an expensive one.

A cascade is built from two other models of the same run (``cheap``, ``expensive``) after they ran: it
asks nothing itself. Its threshold is chosen on a seeded calibration share of the examples by
Learn-then-Test (``stats/cascade.py``) so that, with probability at least ``1 − delta``, its accuracy
is within ``max_drop`` of the expensive model's; it is judged with every other model on the remaining
examples (``docs/cascades.md``).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from headtohead.config.margins import parse_accuracy_margin
from headtohead.config.models.base import ModelConfig
from headtohead.errors import ConfigError

__all__ = ["CascadeSettings"]


class CascadeSettings(ModelConfig):
    """A cascade of two models of the run: the cheap one answers where its deferral score is high enough."""

    kind: Literal["cascade"]
    reruns: ClassVar[bool] = False  # built from its parts' stored answers: nothing to re-run

    source: str = Field(default="", description="Written for it: 'cheap → expensive'.")
    cheap: str = Field(min_length=1, description="The model that answers first (it must give class probabilities).")
    expensive: str = Field(min_length=1, description="The model asked where the cheap one defers.")
    score: Literal["top", "margin"] = Field(
        default="top",
        description="The cheap model's deferral score: its top class probability (top) or the gap between its two "
        "highest (margin); an example whose score is below the threshold is deferred.",
    )
    max_drop: float = Field(
        description="The accuracy the cascade may lose against the expensive model, with its unit: 0.5pp."
    )
    delta: float = Field(
        default=0.05, gt=0, lt=0.5, description="The chance the guarantee may fail (Learn-then-Test's delta)."
    )
    calibration: float = Field(
        default=0.5,
        gt=0,
        lt=1,
        description="The share of the examples (seeded by the run's seed) the threshold is chosen on; every model "
        "is judged on the others.",
    )

    @field_validator("max_drop", mode="before")
    @classmethod
    def _margin_with_unit(cls, value: Any) -> float:
        text = str(value).strip()
        if isinstance(value, bool) or not text.endswith("pp"):
            raise ValueError(
                f"max_drop {value!r} has no unit; write the accuracy the cascade may lose in percentage points, "
                f"e.g. max_drop: {text or '0.5'}pp"
            )
        try:
            return parse_accuracy_margin(text, option=None)
        except ConfigError as exc:
            raise ValueError(f"max_drop: {exc}") from None

    @model_validator(mode="before")
    @classmethod
    def _named_source(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("source") and data.get("cheap") and data.get("expensive"):
            return {**data, "source": f"{data['cheap']} → {data['expensive']}"}
        return data

    def parts(self) -> tuple[str, ...]:
        """The models it is built from: cheap, then expensive."""
        return (self.cheap, self.expensive)
