"""The keys every image-classifier family built by architecture name shares (``timm``, ``torchvision``)."""

from __future__ import annotations

from pydantic import Field

from headtohead.config.models.keys import ConstructorArgs, OutputNames, Pickles

__all__ = ["ArchitectureSettings"]


class ArchitectureSettings(Pickles, ConstructorArgs, OutputNames):
    """An image classifier built by architecture name, with a checkpoint or the library's pretrained weights."""

    checkpoint: str | None = Field(
        default=None,
        description="Weights file for the architecture (.safetensors, or a torch file loaded with weights_only=True).",
    )
    pretrained: bool = Field(default=False, description="Download the library's pretrained weights (online).")
    image_size: int | None = Field(default=None, gt=0, description="Override the model's input resolution.")
