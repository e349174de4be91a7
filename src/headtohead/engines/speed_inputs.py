"""The inputs a speed measurement times: real batches drawn from the data, and fixed shapes.

Every model is timed on the same examples: :func:`draw_batches` picks them from the
evaluation set (seeded, identical for every model), :func:`fix_sequence_length` pads or cuts
tokenised text to a controlled length (``speed.fixed_shape``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from headtohead.data.base import Dataset
from headtohead.engines.batching import plan_batches
from headtohead.errors import DataError

__all__ = ["draw_batches", "fix_sequence_length"]


def draw_batches(dataset: Dataset, batch_size: int, count: int) -> list[np.ndarray]:
    """Indices of up to ``count`` full batches of real examples, the same for every model.

    Batches come from :func:`~headtohead.engines.batching.plan_batches` in dataset order;
    only full batches are used so every timed call has the same shape. A dataset smaller
    than one batch has its examples repeated to fill one.

    Examples
    --------
    >>> import numpy as np
    >>> from headtohead.data.base import Dataset
    >>> ds = Dataset("x", "features", np.zeros((5, 2)), np.zeros(5), ("a",))
    >>> [b.tolist() for b in draw_batches(ds, 2, 4)]
    [[0, 1], [2, 3]]
    >>> [b.tolist() for b in draw_batches(ds, 8, 4)]
    [[0, 1, 2, 3, 4, 0, 1, 2]]
    """
    if len(dataset) == 0:
        raise DataError(f"{dataset.source}: no examples to measure speed on")
    plan = plan_batches(len(dataset), batch_size)
    full = [b for b in plan if len(b) == batch_size][:count]
    # Speed depends on the shape of a batch, not on which examples fill it.
    return full or [np.resize(plan.order, batch_size)]


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
    resized = {key: (_resize_columns(value, length, pad_id if key == "input_ids" else 0)
                     if getattr(value, "ndim", 0) == 2 and value.shape[1] == columns else value)
               for key, value in inputs.items()}
    if type(inputs) is dict:
        return resized, True
    try:  # keep BatchEncoding and friends, which adapters may rely on
        return type(inputs)(resized), True
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
