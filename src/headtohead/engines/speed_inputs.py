"""The inputs a speed measurement times: real examples drawn across the data, and fixed shapes.

Every model is timed on the same examples. :func:`timed_inputs` draws them from the whole
evaluation set, seeded and identical for every model: the examples are ordered by size
(words of a text; feature rows and images by position) and cut into as many strata of equal
count as examples are needed, and one example is drawn from each stratum — so the shortest
and the longest inputs are represented and a batch-1 p99 is a tail over inputs rather than
repeat noise over two of them. :func:`fix_sequence_length` pads or cuts tokenised text to a
controlled length (``speed.fixed_shape``); :func:`prepare` preprocesses with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from headtohead.adapters.base import ModelAdapter
from headtohead.data.base import Dataset
from headtohead.data.sizes import input_sizes
from headtohead.errors import DataError

__all__ = ["TimedInputs", "timed_inputs", "draw_batches", "stratified_sample", "fix_sequence_length", "prepare"]


@dataclass(frozen=True)
class TimedInputs:
    """The batches of one scenario: dataset indices, and the size of each example where the data has sizes."""

    batch_size: int
    indices: list[np.ndarray]
    sizes: list[np.ndarray] | None
    unit: str | None


def stratified_sample(n: int, count: int, rng: np.random.Generator, sizes: np.ndarray | None = None) -> np.ndarray:
    """``count`` distinct indices of ``range(n)``, one drawn from each of ``count`` equal-count strata.

    The strata are consecutive runs of the examples ordered by ``sizes`` (ties and no sizes:
    by index), so the sample covers the whole range of sizes (or of positions).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> sorted(stratified_sample(10, 5, rng).tolist())  # one from each of 0-1, 2-3, ... 8-9
    [1, 3, 5, 6, 8]
    """
    if not 0 < count <= n:
        raise ValueError(f"cannot draw {count} of {n} examples")
    order = np.lexsort((np.arange(n), sizes)) if sizes is not None else np.arange(n)
    return np.array([stratum[rng.integers(len(stratum))] for stratum in np.array_split(order, count)], dtype=np.int64)


def draw_batches(
    dataset: Dataset, batch_size: int, count: int, *, seed: int = 0, sizes: np.ndarray | None = None
) -> list[np.ndarray]:
    """Indices of up to ``count`` full batches of real examples drawn across the data, the same for every model.

    ``batch_size × count`` examples are drawn by :func:`stratified_sample` (over ``sizes``
    when given, else over positions), shuffled (seeded) and cut into batches, so each batch
    mixes short and long inputs as a random stream would. When the data holds no more
    examples than that, all of them are used in a seeded order; a dataset smaller than one
    batch has its examples repeated to fill one (speed depends on a batch's shape, not on
    which examples fill it).

    Examples
    --------
    >>> import numpy as np
    >>> from headtohead.data.base import Dataset
    >>> ds = Dataset("x", "features", np.zeros((5, 2)), np.zeros(5), ("a",))
    >>> [len(b) for b in draw_batches(ds, 2, 4)]
    [2, 2]
    >>> sorted(set(draw_batches(ds, 8, 4)[0].tolist()))
    [0, 1, 2, 3, 4]
    """
    n = len(dataset)
    if n == 0:
        raise DataError(f"{dataset.source}: no examples to measure speed on")
    rng = np.random.default_rng([seed, batch_size])
    need = batch_size * count
    picks = rng.permutation(stratified_sample(n, need, rng, sizes)) if need < n else rng.permutation(n)
    full = len(picks) // batch_size
    if full == 0:
        return [np.resize(picks, batch_size)]
    return [picks[i * batch_size : (i + 1) * batch_size] for i in range(min(full, count))]


def timed_inputs(dataset: Dataset, batch_size: int, count: int, *, seed: int = 0) -> TimedInputs:
    """The batches a scenario times: :func:`draw_batches` stratified by input size for text.

    Parameters
    ----------
    dataset : Dataset
    batch_size : int
    count : int
        Batches wanted (fewer when the data is small).
    seed : int

    Returns
    -------
    TimedInputs
        Sizes (words) for text; ``None`` for images (resized by every model, so their pixel
        count hardly matters to the forward pass) and feature rows.
    """
    sized = input_sizes(dataset) if dataset.modality in ("text", "text_pair") else None
    sizes, unit = sized if sized is not None else (None, None)
    batches = draw_batches(dataset, batch_size, count, seed=seed, sizes=sizes)
    return TimedInputs(batch_size, batches, [sizes[b] for b in batches] if sizes is not None else None, unit)


def prepare(adapter: ModelAdapter, examples: Sequence[Any], sequence_length: int | None) -> tuple[Any, bool]:
    """Preprocess on the CPU, then pad or cut to ``sequence_length`` tokens when one is set.

    Returns
    -------
    inputs, applied : (model inputs, bool)
        ``applied`` says whether the length could be fixed (token inputs only).
    """
    inputs = adapter.preprocess(examples)
    if sequence_length is None:
        return inputs, False
    pad_id = getattr(getattr(adapter, "tokenizer", None), "pad_token_id", None)
    return fix_sequence_length(inputs, sequence_length, pad_id=0 if pad_id is None else int(pad_id))


def fix_sequence_length(inputs: Any, length: int, *, pad_id: int = 0) -> tuple[Any, bool]:
    """Pad or truncate token inputs (``input_ids`` and its companions) to ``length`` columns.

    Every 2-D tensor/array in the mapping with as many columns as ``input_ids`` is resized:
    ``input_ids`` is padded with ``pad_id``, the rest (``attention_mask``,
    ``token_type_ids`` …) with 0. Anything without ``input_ids`` is returned unchanged.

    Returns
    -------
    inputs, applied : (same type as ``inputs``, bool)

    Examples
    --------
    >>> import numpy as np
    >>> out, applied = fix_sequence_length({"input_ids": np.array([[5, 6]]), "attention_mask": np.ones((1, 2))}, 4,
    ...                                    pad_id=1)
    >>> out["input_ids"].tolist(), out["attention_mask"].tolist(), applied
    ([[5, 6, 1, 1]], [[1.0, 1.0, 0.0, 0.0]], True)
    """
    if not isinstance(inputs, Mapping) or "input_ids" not in inputs or getattr(inputs["input_ids"], "ndim", 0) != 2:
        return inputs, False
    columns = inputs["input_ids"].shape[1]
    resized = {
        key: (
            _resize_columns(value, length, pad_id if key == "input_ids" else 0)
            if getattr(value, "ndim", 0) == 2 and value.shape[1] == columns
            else value
        )
        for key, value in inputs.items()
    }
    if type(inputs) is dict:
        return resized, True
    try:  # keep BatchEncoding and friends, which adapters may rely on
        return type(inputs)(resized), True  # type: ignore[call-arg]  # a Mapping subclass built from a dict
    except Exception:
        return resized, True


def _resize_columns(x: Any, length: int, fill: int) -> Any:
    if x.shape[1] >= length:
        cut = x[:, :length]
        return cut.contiguous() if hasattr(cut, "contiguous") else np.ascontiguousarray(cut)
    if hasattr(x, "new_full"):  # a torch tensor (NumPy arrays have no new_full)
        import torch

        return torch.cat([x, x.new_full((x.shape[0], length - x.shape[1]), fill)], dim=1)
    return np.pad(x, ((0, 0), (0, length - x.shape[1])), constant_values=fill)
