"""``kind: python``: any callable built by a ``package.module:factory`` function."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import Field

from headtohead.config.models.keys import ConstructorArgs, OutputNames

__all__ = ["PythonSettings", "OUTPUT_KINDS", "is_factory_source"]

_FACTORY = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
#: What a callable's (or an ONNX graph's) outputs are.
OUTPUT_KINDS = Literal["logits", "probabilities"]


class PythonSettings(ConstructorArgs, OutputNames):
    """A model built by a Python factory."""

    kind: Literal["python"]

    outputs: OUTPUT_KINDS = Field(default="logits", description="What the callable returns.")
    image_size: int | None = Field(default=None, gt=0, description="Input resolution of image models.")


def is_factory_source(source: str, path: Path) -> bool:
    """``package.module:factory`` that is not a local path."""
    return bool(_FACTORY.match(source)) and not path.exists()
