"""``kind: timm``: a timm image classifier by architecture name (with a checkpoint or pretrained weights)."""

from __future__ import annotations

from pydantic import Field

from headtohead.config.models.base import ModelConfig

__all__ = ["ArchitectureSettings", "TimmSettings"]


class ArchitectureSettings(ModelConfig):
    """An image classifier built by architecture name (timm, torchvision)."""

    pretrained: bool = Field(default=False, description="Download the library's pretrained weights (online).")
    image_size: int | None = Field(default=None, gt=0, description="Override the model's input resolution.")


class TimmSettings(ArchitectureSettings):
    """A timm architecture."""
