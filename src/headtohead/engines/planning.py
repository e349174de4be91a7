"""The run's one evaluation plan: examples grouped by length so batches carry little padding.

See ``docs/architecture.md``, "Fairness invariants".
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from headtohead.adapters import LoadContext, adapter_class
from headtohead.config.models import ModelConfig, family
from headtohead.data.base import Dataset
from headtohead.engines.batching import BatchPlan, plan_batches
from headtohead.errors import H2HError

__all__ = ["plan_evaluation", "example_lengths", "text_lengths"]

log = logging.getLogger("headtohead")

#: Examples counted per tokenizer call: large enough to be fast, small enough that a
#: million texts never hold all their token ids at once.
_COUNT_CHUNK = 16_384


def plan_evaluation(
    dataset: Dataset,
    batch_size: int,
    *,
    seed: int,
    models: Sequence[ModelConfig] = (),
    context: LoadContext | None = None,
) -> BatchPlan:
    """The batch plan every model of a run evaluates ``dataset`` with.

    Parameters
    ----------
    dataset : Dataset
        The evaluation split.
    batch_size : int
        ``eval.batch_size``.
    seed : int
        The experiment's seed (orders the batches, see :func:`~headtohead.engines.batching.plan_batches`).
    models : sequence of ModelConfig
        The run's models, in experiment order (the first that can count tokens sets the lengths).
    context : LoadContext, optional
        Where relative model paths are read from; needed to count tokens.

    Returns
    -------
    BatchPlan
        Examples of similar length batched together for text; dataset order otherwise.
    """
    lengths, _ = example_lengths(dataset, models, context)
    return plan_batches(len(dataset), batch_size, seed=seed, lengths=lengths)


def example_lengths(
    dataset: Dataset,
    models: Sequence[ModelConfig] = (),
    context: LoadContext | None = None,
) -> tuple[np.ndarray | None, str]:
    """One length per example for grouping batches, and what it counts.

    Returns
    -------
    lengths : ndarray of int64, or None
        ``None`` for images and feature rows.
    unit : str
        ``"tokens of model NAME"``, ``"characters"`` or ``"none"``.
    """
    if dataset.modality not in ("text", "text_pair"):
        return None, "none"
    if context is not None:
        for config in models:
            counted = _token_lengths(dataset, config, context)
            if counted is not None:
                return counted, f"tokens of model {config.name}"
    return text_lengths(dataset.examples), "characters"


def text_lengths(examples: Sequence[Any] | np.ndarray) -> np.ndarray:
    """Characters of each text (of both texts of a ``(text, pair)`` example).

    Examples
    --------
    >>> text_lengths(["ab", "abcd", ("a", "bc")]).tolist()
    [2, 4, 3]
    """

    def size(example: Any) -> int:
        if isinstance(example, (tuple, list)):
            return sum(len(str(part)) for part in example)
        return len(str(example))

    return np.fromiter((size(e) for e in examples), dtype=np.int64, count=len(examples))


def _token_lengths(dataset: Dataset, config: ModelConfig, context: LoadContext) -> np.ndarray | None:
    """The model's own token counts, or ``None`` when its family cannot count them cheaply.

    A model that cannot even load its tokenizer will fail with a clear message when it is
    loaded; here that only means falling back to the next model or to characters.
    """
    try:
        if dataset.modality not in family(config.kind).modalities:
            return None
        cls = adapter_class(config.kind)
        counter = cls.length_counter(config, context)
        if counter is None:
            return None
        examples = dataset.examples
        lengths = np.empty(len(examples), dtype=np.int64)
        for start in range(0, len(examples), _COUNT_CHUNK):
            chunk = examples[start : start + _COUNT_CHUNK]
            lengths[start : start + len(chunk)] = counter(list(chunk))
        return lengths
    except (H2HError, ModuleNotFoundError) as exc:  # a family's extra not installed: its load says which
        log.debug("batch plan: model '%s' cannot count tokens (%s); trying the next way", config.name, exc)
        return None
