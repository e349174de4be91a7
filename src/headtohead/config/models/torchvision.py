"""``kind: torchvision``: a torchvision image classifier by architecture name."""

from __future__ import annotations

from headtohead.config.models.timm import ArchitectureSettings

__all__ = ["TorchvisionSettings"]


class TorchvisionSettings(ArchitectureSettings):
    """A torchvision architecture."""
