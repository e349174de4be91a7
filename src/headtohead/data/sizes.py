"""How big each input is: words or characters of a text, pixels of an image.

Quality per input size is one of the slices of the comparison (long sentences, large
photos); this module only measures, :mod:`headtohead.stats.slices` bins and tests.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from headtohead.data.base import Dataset

__all__ = ["input_sizes", "TextUnit"]

TextUnit = Literal["words", "characters"]


def input_sizes(dataset: Dataset, *, text_unit: TextUnit = "words") -> tuple[np.ndarray, str] | None:
    """The size of every example, and its unit.

    Parameters
    ----------
    dataset : Dataset
    text_unit : {"words", "characters"}
        For text: whitespace-separated words (what people mean by "a long sentence", and
        independent of any model's tokenizer) or characters. A text pair counts both texts.

    Returns
    -------
    (sizes, unit) or None
        ``sizes`` is an int64 array of length ``len(dataset)``; ``unit`` is ``"words"``,
        ``"characters"`` or ``"pixels"`` (width × height, read from the image header without
        decoding). ``None`` for feature vectors, which have no natural size.

    Examples
    --------
    >>> ds = Dataset("t", "text", ["a b c", "hello"], np.array([0, 1]), ("x", "y"))
    >>> sizes, unit = input_sizes(ds)
    >>> sizes.tolist(), unit
    ([3, 1], 'words')
    """
    if text_unit not in ("words", "characters"):
        raise ValueError(f"text_unit must be 'words' or 'characters', not {text_unit!r}")
    if dataset.modality in ("text", "text_pair"):

        def measure(text: str) -> int:
            return len(text.split()) if text_unit == "words" else len(text)

        sizes = [
            sum(measure(part) for part in example) if dataset.modality == "text_pair" else measure(example)
            for example in dataset.examples
        ]
        return np.asarray(sizes, dtype=np.int64), text_unit
    if dataset.modality == "image":
        return np.asarray([_pixels(example) for example in dataset.examples], dtype=np.int64), "pixels"
    return None


def _pixels(example: object) -> int:
    if isinstance(example, np.ndarray):
        return int(example.shape[0] * example.shape[1])
    from PIL import Image

    with Image.open(str(example)) as image:  # reads the header only
        width, height = image.size
    return int(width * height)
