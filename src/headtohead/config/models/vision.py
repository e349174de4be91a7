"""The keys every image-classifier family built by architecture name shares (``timm``, ``torchvision``)."""

from __future__ import annotations

from pydantic import Field

from headtohead.config.models.base import ModelConfig

__all__ = ["ArchitectureSettings"]


class ArchitectureSettings(ModelConfig):
    """An image classifier built by architecture name, with a checkpoint or the library's pretrained weights."""

    pretrained: bool = Field(default=False, description="Download the library's pretrained weights (online).")
    image_size: int | None = Field(default=None, gt=0, description="Override the model's input resolution.")
