"""The base of every config section: frozen, unknown keys refused, defaults validated, values kept out of errors' text."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

__all__ = ["Section", "DEVICE_RE"]

#: The devices ``eval.device`` and ``train.device`` accept.
DEVICE_RE = re.compile(r"^(auto|cpu|cuda|cuda:\d+|mps)$")


class Section(BaseModel):
    """A section of the experiment file. Unknown keys are errors, so a typo never silently
    falls back to a default."""

    # hide_input_in_errors: an error's text never repeats a value (a base_url refused for carrying
    # credentials); ``errors()`` still holds it for the loader's one line
    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True, hide_input_in_errors=True)
