"""``kind: onnx``: an exported ``.onnx`` graph run with ONNX Runtime."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from headtohead.config.models.keys import OutputNames
from headtohead.config.models.python import OUTPUT_KINDS

__all__ = ["OnnxSettings", "is_onnx_folder"]


class OnnxSettings(OutputNames):
    """An ONNX graph; text models need the tokenizer they were exported with."""

    kind: Literal["onnx"]

    tokenizer: str | None = Field(
        default=None, description="Text: local folder of the Hugging Face tokenizer the model was exported with."
    )
    max_length: int | None = Field(default=None, gt=0, description="Tokeniser truncation length (text models).")
    image_size: int | None = Field(default=None, gt=0, description="Override the graph's input resolution.")
    mean: list[float] | None = Field(default=None, description="Images: per-channel normalisation mean (ImageNet's).")
    std: list[float] | None = Field(default=None, description="Images: per-channel normalisation std (ImageNet's).")
    outputs: OUTPUT_KINDS = Field(default="logits", description="What the graph returns.")


def is_onnx_folder(source: str, path: Path) -> bool:
    """A folder holding ``model.onnx`` (and no ``config.json``, which makes it a transformers folder)."""
    return path.is_dir() and (path / "model.onnx").is_file() and not (path / "config.json").is_file()
