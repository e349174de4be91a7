"""The quality pass: run one model over the batch plan and keep every prediction.

See ``docs/architecture.md``, "Fairness invariants".
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from scipy.special import softmax

from headtohead.adapters.base import ModelAdapter
from headtohead.adapters.labels import LabelAlignment, align_labels
from headtohead.data.base import Dataset
from headtohead.engines.backoff import BatchRunner
from headtohead.engines.batching import BatchPlan
from headtohead.engines.prefetch import Prefetcher, batch_examples
from headtohead.engines.transfer import DeviceFeeder, ScoreCollector, is_tensor, no_autograd, transfer_streams
from headtohead.errors import ModelError
from headtohead.results.predictions import NO_PREDICTION
from headtohead.results.records import BatchBackoff

__all__ = ["Evaluation", "evaluate_model", "batch_examples", "scores_to_numpy", "ProgressCallback"]

#: ``progress(model_name, batches_done, batches_total)``; called after every batch (on a GPU,
#: once the batch is queued: the pass never waits for the device just to report progress).
ProgressCallback = Callable[[str, int, int], None]

# Rows turned into probabilities at a time: float64 temporaries stay small for a million rows.
_PROBA_CHUNK = 65_536


@dataclass(frozen=True)
class Evaluation:
    """One model's pass over the evaluation set.

    Attributes
    ----------
    pred : ndarray (n,)
        Predicted class index in dataset label order (then the model's classes outside the
        data, ``alignment.outside``), aligned with ``plan.order``; :data:`NO_PREDICTION` where
        the scores were NaN or infinite.
    proba : ndarray (n, n_outputs), float32, or None
        Probabilities, columns in dataset label order then ``alignment.outside``, rows aligned
        with ``plan.order``; NaN rows where there is no prediction; ``None`` for a model that
        stored predictions without probabilities.
    alignment : LabelAlignment
    plan_hash : str
    seconds : float
        Wall time of the pass (preprocessing included; speed is measured properly elsewhere).
    backoff : tuple of BatchBackoff
        Out-of-memory back-offs (empty: every batch ran whole).
    """

    pred: np.ndarray
    proba: np.ndarray | None
    alignment: LabelAlignment
    plan_hash: str
    n_batches: int
    seconds: float
    backoff: tuple[BatchBackoff, ...] = ()

    @property
    def n_nonfinite(self) -> int:
        """Examples whose scores were NaN or infinite."""
        return int((self.pred == NO_PREDICTION).sum())


def scores_to_numpy(scores: Any) -> np.ndarray:
    """A model's scores (torch tensor or array-like) as a float64 NumPy array."""
    if hasattr(scores, "detach"):
        scores = scores.detach().float().cpu().numpy()
    return np.asarray(scores, dtype=np.float64)


def evaluate_model(
    adapter: ModelAdapter,
    dataset: Dataset,
    plan: BatchPlan,
    *,
    progress: ProgressCallback | None = None,
    prefetch: int | None = None,
    workers: int | None = None,
) -> Evaluation:
    """Predict every example of ``dataset`` in ``plan`` order.

    Parameters
    ----------
    adapter : ModelAdapter
        A loaded model (eval mode).
    dataset : Dataset
        The evaluation split.
    plan : BatchPlan
        The order and batches shared by all models of the run.
    progress : callable, optional
        ``progress(model_name, batches_done, batches_total)``.
    prefetch : int, optional
        Batches preprocessed ahead of the forward pass by a background thread; ``0``
        preprocesses each batch in this thread just before its forward pass (same results).
        ``None``: ahead when a core is spare (see :func:`~headtohead.engines.prefetch.spare_cores`).
    workers : int, optional
        Worker processes for image decoding (families with a
        :meth:`~headtohead.adapters.base.ModelAdapter.preprocess_function`); ``None``: the
        spare cores (at most 8), ``0``: none.

    Returns
    -------
    Evaluation

    Raises
    ------
    ModelError
        The model's labels do not match the dataset's, its outputs are malformed or not
        finite for any example, or one example does not fit in the device's memory.
    """
    alignment = align_labels(adapter.label_names, dataset.label_names, model=adapter.name)
    if alignment.warning:
        adapter.warn(alignment.warning)
    if adapter.feeds == "ids":
        return _stored_evaluation(adapter, dataset, plan, alignment, progress)
    start = time.perf_counter()
    runner = BatchRunner(adapter)
    scores = _run_batches(adapter, dataset, plan, alignment, progress, prefetch, workers, runner)
    proba, pred = _probabilities(adapter, scores, alignment)
    seconds = time.perf_counter() - start
    return Evaluation(
        pred=pred,
        proba=proba,
        alignment=alignment,
        plan_hash=plan.hash(),
        n_batches=len(plan),
        seconds=seconds,
        backoff=tuple(runner.events),
    )


def _stored_evaluation(
    adapter: ModelAdapter,
    dataset: Dataset,
    plan: BatchPlan,
    alignment: LabelAlignment,
    progress: ProgressCallback | None,
) -> Evaluation:
    """The stored outputs of every example, batch by batch in plan order (no preprocessing, nothing to time)."""
    start = time.perf_counter()
    n, k = len(plan.order), alignment.n_outputs  # the data's classes, then the model's others
    pred = np.empty(n, dtype=np.int64)
    proba: np.ndarray | None = None
    row = 0
    fetches = type(adapter).fetch_outputs is not ModelAdapter.fetch_outputs
    if fetches:  # an endpoint: every request of the plan at once, with its own progress (examples, not batches)
        adapter.fetch_outputs(dataset, plan.order, progress=_example_progress(adapter.name, progress))
    for done, indices in enumerate(plan, start=1):
        stored = adapter.stored_outputs(dataset, indices)
        if stored.proba is not None:
            if proba is None and row:
                raise ModelError(
                    f"model '{adapter.name}' stored probabilities for some examples only; give them "
                    f"for every example or for none"
                )
            proba = np.empty((n, k), dtype=np.float32) if proba is None else proba
            proba[row : row + len(indices)] = stored.proba
        elif proba is not None:
            raise ModelError(
                f"model '{adapter.name}' stored probabilities for some examples only; give them for "
                f"every example or for none"
            )
        pred[row : row + len(indices)] = stored.pred
        row += len(indices)
        if progress is not None and not fetches:
            progress(adapter.name, done, len(plan))
    return Evaluation(
        pred=pred,
        proba=proba,
        alignment=alignment,
        plan_hash=plan.hash(),
        n_batches=len(plan),
        seconds=time.perf_counter() - start,
    )


def accepts_rates(progress: Callable[..., Any]) -> bool:
    """Whether a progress callback takes ``rates=`` (requests/s, tokens/s of an endpoint), by its signature."""
    try:
        return any(
            p.name == "rates" or p.kind is inspect.Parameter.VAR_KEYWORD
            for p in inspect.signature(progress).parameters.values()
        )
    except (TypeError, ValueError):
        return False


def _example_progress(name: str, progress: ProgressCallback | None) -> Callable[..., None] | None:
    """``progress(done, total, rates=…)`` of a fetch, passed on to the run's callback (rates if it takes them)."""
    if progress is None:
        return None
    if accepts_rates(progress):
        return lambda done, total, rates=None: progress(name, done, total, rates=rates)  # type: ignore[call-arg]
    return lambda done, total, rates=None: progress(name, done, total)


def _run_batches(
    adapter: ModelAdapter,
    dataset: Dataset,
    plan: BatchPlan,
    alignment: LabelAlignment,
    progress: ProgressCallback | None,
    prefetch: int | None,
    workers: int | None,
    runner: BatchRunner,
) -> np.ndarray:
    """Every batch through the model; the raw scores in plan order."""
    streams = transfer_streams(adapter)
    feeder = DeviceFeeder(adapter, streams)
    collector = ScoreCollector(len(plan.order), streams)
    total = len(plan)
    with (
        no_autograd(adapter),
        Prefetcher(
            adapter, dataset, plan, depth=prefetch, workers=workers, pin=streams.pin if streams is not None else None
        ) as batches,
    ):
        ready = iter(batches)
        upcoming = _next_sent(ready, feeder)
        done = 0
        while upcoming is not None:
            indices, sent = upcoming
            # With asynchronous copies the next batch starts moving while this one computes.
            upcoming = _next_sent(ready, feeder) if feeder.ahead else None
            pieces = runner(feeder.receive(sent), len(indices), done)  # one piece unless memory ran out
            rows = 0
            for scores in pieces:
                if not is_tensor(scores) and not isinstance(scores, np.ndarray):
                    scores = np.asarray(scores, dtype=np.float64)
                _check_shape(adapter, scores, int(scores.shape[0]) if len(pieces) > 1 else len(indices), alignment)
                rows += int(scores.shape[0])
                collector.add(scores)
            if rows != len(indices):
                raise ModelError(
                    f"model '{adapter.name}' returned {rows} rows of scores for a batch of "
                    f"{len(indices)}; expected one row per example"
                )
            done += 1
            if progress is not None:
                progress(adapter.name, done, total)
            if not feeder.ahead:
                upcoming = _next_sent(ready, feeder)
    return collector.result()


def _next_sent(ready: Any, feeder: DeviceFeeder) -> tuple[np.ndarray, Any] | None:
    item = next(ready, None)
    if item is None:
        return None
    indices, inputs = item
    return indices, feeder.send(inputs)


def _check_shape(adapter: ModelAdapter, scores: Any, n_rows: int, alignment: LabelAlignment) -> None:
    """Shape checks that need no values (so no wait for the device)."""
    shape = tuple(scores.shape)
    if len(shape) == 2 and shape[1] != alignment.n_outputs:
        expected = (
            f"names {alignment.n_outputs} labels"
            if adapter.label_names is not None
            else f"the dataset has {alignment.n_outputs} classes"
        )
        raise ModelError(
            f"model '{adapter.name}' produced {shape[1]} scores per example but {expected}; "
            f"set its label_names to match its outputs"
        )
    if len(shape) != 2 or shape[0] != n_rows:
        raise ModelError(
            f"model '{adapter.name}' returned scores of shape {shape} for a batch of "
            f"{n_rows}; expected ({n_rows}, n_classes)"
        )


def _probabilities(
    adapter: ModelAdapter, scores: np.ndarray, alignment: LabelAlignment
) -> tuple[np.ndarray, np.ndarray]:
    """Scores → float32 probabilities in aligned order and predictions, a chunk of rows at a time.

    A row with a NaN or infinite score gets NaN probabilities and :data:`NO_PREDICTION`; the
    prediction of the others is the argmax over all the model's outputs.
    """
    n = len(scores)
    proba = np.full((n, alignment.n_outputs), np.nan, dtype=np.float32)
    pred = np.full(n, NO_PREDICTION, dtype=np.int64)
    if not n:
        return proba, pred
    finite = np.isfinite(scores).all(axis=1)
    if not finite.any():
        raise ModelError(
            f"model '{adapter.name}' returned NaN or infinite scores for every example ({n}); check "
            f"its weights, its inputs and its precision (fp16 overflows)"
        )
    for start in range(0, n, _PROBA_CHUNK):
        ok = finite[start : start + _PROBA_CHUNK]
        block = scores[start : start + _PROBA_CHUNK][ok].astype(np.float64)
        if len(block):
            rows = np.flatnonzero(ok) + start
            aligned = alignment.apply(_rows_to_probabilities(adapter, block))
            proba[rows] = aligned
            pred[rows] = proba[rows].argmax(axis=1)  # of the stored float32 values, so a reader can check it
    return proba, pred


def _rows_to_probabilities(adapter: ModelAdapter, scores: np.ndarray) -> np.ndarray:
    if adapter.output_kind == "logits":
        return cast(np.ndarray, softmax(scores, axis=1))
    sums = scores.sum(axis=1, keepdims=True)
    bad = np.flatnonzero((scores < -1e-6).any(axis=1) | ~np.isclose(sums[:, 0], 1.0, atol=1e-3))
    if len(bad):
        raise ModelError(
            f"model '{adapter.name}' is declared to output probabilities but its rows do not sum to 1 "
            f"(e.g. {float(sums[bad[0], 0]):.4f}); set outputs: logits if it returns scores"
        )
    return cast(np.ndarray, scores / sums)
