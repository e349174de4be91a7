"""Turning an image example (a path or an array) into a PIL image, in one place."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # PIL is imported lazily
    from PIL import Image

__all__ = ["to_pil"]


def to_pil(example: Any) -> Image.Image:
    """Open an image example as an RGB ``PIL.Image``.

    Parameters
    ----------
    example : str, Path, ndarray or PIL.Image
        A file path, an ``H×W`` (grey) or ``H×W×C`` ``uint8`` array, or an image.

    Returns
    -------
    PIL.Image.Image
        In RGB mode, fully loaded (the file is closed).
    """
    from PIL import Image

    if isinstance(example, Image.Image):
        return example.convert("RGB")
    if isinstance(example, (str, Path)):
        with Image.open(example) as image:
            return image.convert("RGB")
    array = np.asarray(example)
    if array.dtype != np.uint8:
        array = np.clip(array, 0, 255).astype(np.uint8)
    if array.ndim == 2:
        return Image.fromarray(array, mode="L").convert("RGB")
    return Image.fromarray(array).convert("RGB")
