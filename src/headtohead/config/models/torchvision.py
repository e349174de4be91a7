"""``kind: torchvision``: a torchvision image classifier by architecture name."""

from __future__ import annotations

from typing import Literal

from headtohead.config.models.vision import ArchitectureSettings

__all__ = ["TorchvisionSettings"]


class TorchvisionSettings(ArchitectureSettings):
    """A torchvision architecture."""

    kind: Literal["torchvision"]
