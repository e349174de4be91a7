"""The base of every config section: frozen, unknown keys refused, defaults validated."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

__all__ = ["Section", "DEVICE_RE"]

#: The devices ``eval.device`` and ``train.device`` accept.
DEVICE_RE = re.compile(r"^(auto|cpu|cuda|cuda:\d+|mps)$")


class Section(BaseModel):
    """A section of the experiment file. Unknown keys are errors, so a typo never silently
    falls back to a default."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)
