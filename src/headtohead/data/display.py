"""An example as people see it in a report: its text, or a small picture of the image.

The report of a run lists the examples on which two models disagree; it reads records only,
so the pipeline attaches each listed example's input with these functions when the run
ends (``Disagreement.input`` / ``Disagreement.thumbnail``).
"""

from __future__ import annotations

import base64
import io

import numpy as np

from headtohead.data.base import Dataset
from headtohead.data.image_io import to_pil

__all__ = ["input_texts", "thumbnail_uri", "PAIR_SEPARATOR", "THUMBNAIL_PIXELS"]

#: Between the two texts of a text pair.
PAIR_SEPARATOR = " ‖ "
#: The longer side of a thumbnail.
THUMBNAIL_PIXELS = 96


def input_texts(dataset: Dataset) -> list[str | None]:
    """What to show for every example: the text (a pair joined by :data:`PAIR_SEPARATOR`), an image's path.

    Feature rows and images held as arrays have no text (``None``); an image array gets a
    thumbnail instead (:func:`thumbnail_uri`).

    Examples
    --------
    >>> ds = Dataset("t", "text_pair", [("a cat", "a dog")], np.array([0]), ("no", "yes"))
    >>> input_texts(ds)
    ['a cat ‖ a dog']
    """
    if dataset.modality == "text":
        return [str(e) for e in dataset.examples]
    if dataset.modality == "text_pair":
        return [PAIR_SEPARATOR.join(str(part) for part in e) for e in dataset.examples]
    if dataset.modality == "image":
        return [None if isinstance(e, np.ndarray) else str(e) for e in dataset.examples]
    return [None] * len(dataset)


def thumbnail_uri(dataset: Dataset, index: int, *, pixels: int = THUMBNAIL_PIXELS) -> str | None:
    """A small JPEG of image example ``index`` as a ``data:`` URI; ``None`` for other data or an unreadable file.

    Parameters
    ----------
    dataset : Dataset
    index : int
        Position of the example.
    pixels : int
        The thumbnail's longer side (smaller images are not enlarged).
    """
    if dataset.modality != "image":
        return None
    try:
        image = to_pil(dataset.examples[index])
    except (OSError, ValueError):  # a file removed or damaged since the run read it: show its path only
        return None
    image.thumbnail((pixels, pixels))
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=80)
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
