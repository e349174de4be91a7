"""``kind: transformers``: a Hugging Face sequence classifier from a local folder or the hub."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import Field

from headtohead.config.models.keys import HubModel, OutputNames, Pickles

__all__ = ["TransformersSettings", "is_transformers_source"]

_HUB_ID = re.compile(r"^[\w.-]+/[\w.-]+$")


class TransformersSettings(Pickles, HubModel, OutputNames):
    """A transformers sequence-classification model."""

    kind: Literal["transformers"]

    max_length: int | None = Field(default=None, gt=0, description="Tokeniser truncation length (text models).")


def is_transformers_source(source: str, path: Path) -> bool:
    """A folder with ``config.json``, or an ``owner/name`` hub id that is not a local path."""
    return (path.is_dir() and (path / "config.json").is_file()) or (bool(_HUB_ID.match(source)) and not path.exists())
