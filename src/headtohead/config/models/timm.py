"""``kind: timm``: a timm image classifier by architecture name (with a checkpoint or pretrained weights)."""

from __future__ import annotations

from typing import Literal

from headtohead.config.models.vision import ArchitectureSettings

__all__ = ["TimmSettings"]


class TimmSettings(ArchitectureSettings):
    """A timm architecture."""

    kind: Literal["timm"]
