"""The parts of one training loop that every model shares: precision, optimizer and schedule,
gradient checkpointing, and the batch loader that measures how long the model waits for data.

:func:`headtohead.engines.train.train_model` puts them together; they are separate so each
can be tested (and reasoned about) on its own.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from headtohead.adapters.base import ModelAdapter
from headtohead.adapters.weights import error_summary
from headtohead.config.train import TrainConfig
from headtohead.data.base import Dataset
from headtohead.engines.evaluate import batch_examples
from headtohead.errors import DeviceError, ModelError
from headtohead.results.training import EpochRecord
from headtohead.runtime.devices import get_backend, is_cuda

__all__ = [
    "StepInfo",
    "TrainHooks",
    "Precision",
    "resolve_precision",
    "enable_gradient_checkpointing",
    "build_optimizer",
    "build_scheduler",
    "warmup_steps",
    "BatchSource",
    "make_loader",
    "swapped_module",
    "epoch_metrics",
]


@dataclass(frozen=True)
class StepInfo:
    """One finished training step, as :attr:`TrainHooks.on_step` sees it."""

    epoch: int
    step: int
    step_in_epoch: int
    loss: float
    optimizer_steps: int


@dataclass
class TrainHooks:
    """Callbacks: after each step, after each epoch, after each checkpoint is written."""

    on_step: Callable[[StepInfo], None] | None = None
    on_epoch: Callable[[EpochRecord], None] | None = None
    on_checkpoint: Callable[[Path], None] | None = None


@dataclass(frozen=True)
class Precision:
    """How the forward pass runs: ``dtype`` ``None`` is plain float32; ``scaler`` means fp16 loss scaling."""

    name: str
    device_type: str
    dtype: Any = None
    scaler: bool = False

    def autocast(self) -> contextlib.AbstractContextManager[Any]:
        """The autocast context of one forward pass (a no-op in fp32)."""
        if self.dtype is None:
            return contextlib.nullcontext()
        import torch

        return cast("contextlib.AbstractContextManager[Any]", torch.autocast(self.device_type, dtype=self.dtype))


def resolve_precision(
    precision: str, device: str, *, cuda_bf16_supported: Callable[[], bool] | None = None
) -> Precision:
    """Check that ``device`` can autocast to ``precision`` and describe how to run it.

    Parameters
    ----------
    precision : {"fp32", "bf16", "fp16"}
        ``train.precision``.
    device : str
        A resolved device (``cpu``, ``cuda:0``, ``mps``).
    cuda_bf16_supported : callable, optional
        Whether the GPU computes in bfloat16 natively (default:
        ``torch.cuda.is_bf16_supported(including_emulation=False)``); tests pass a stub.

    Returns
    -------
    Precision

    Raises
    ------
    DeviceError
        The device (or this torch build) has no autocast for that dtype, e.g. bf16 on a V100.

    Examples
    --------
    >>> resolve_precision("bf16", "cpu").dtype
    torch.bfloat16
    """
    import torch

    device_type = str(device).split(":", 1)[0]
    if precision == "fp32":
        return Precision("fp32", device_type)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[precision]
    if not torch.amp.is_autocast_available(device_type):
        raise DeviceError(
            f"train.precision is {precision} but torch {torch.__version__} has no autocast on "
            f"'{device_type}'; use precision: fp32 on this device"
        )
    if is_cuda(device) and precision == "bf16":
        supported = cuda_bf16_supported or (lambda: torch.cuda.is_bf16_supported(including_emulation=False))
        if not supported():
            index = int(device.split(":", 1)[1]) if ":" in device else 0
            name = get_backend().cuda_device_name(index)
            raise DeviceError(
                f"train.precision is bf16 but {name} ({device}) has no native bfloat16 (it needs an "
                f"Ampere or newer GPU); use precision: fp16 (with loss scaling) or fp32"
            )
    elif not is_cuda(device):
        # CPU/MPS autocast silently disables itself (with a warning) for a dtype it lacks.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            probe = torch.autocast(device_type, dtype=dtype)
        if caught or not getattr(probe, "_enabled", True):
            message = caught[0].message if caught else "autocast disabled itself"
            why = error_summary(message) if isinstance(message, BaseException) else str(message)
            raise DeviceError(
                f"train.precision is {precision} but '{device_type}' autocast does not support it in "
                f"torch {torch.__version__} ({why}); use bf16 or fp32 on this device"
            )
    return Precision(precision, device_type, dtype, scaler=precision == "fp16")


def enable_gradient_checkpointing(adapter: ModelAdapter) -> None:
    """Switch on activation recomputation (transformers and timm know how; others are refused).

    Raises
    ------
    ModelError
        The model has no gradient-checkpointing switch.
    """
    module = adapter.module
    refusal = (
        f"model '{adapter.name}' (kind {adapter.kind}, {type(module).__name__}) does not support "
        f"gradient checkpointing; set train.gradient_checkpointing: false"
    )
    if hasattr(module, "gradient_checkpointing_enable"):
        if not getattr(module, "supports_gradient_checkpointing", False):
            raise ModelError(refusal)
        # The non-reentrant variant works with inputs that do not require grad and with DDP.
        options = {"use_reentrant": False}
        if hasattr(module, "activation_checkpointing_enable"):  # transformers ≥ 5.20 renamed it
            module.activation_checkpointing_enable(activation_checkpointing_kwargs=options)
        else:
            module.gradient_checkpointing_enable(gradient_checkpointing_kwargs=options)
        return
    if hasattr(module, "set_grad_checkpointing"):
        try:
            module.set_grad_checkpointing(True)
        except (NotImplementedError, AssertionError) as exc:
            raise ModelError(refusal) from exc
        return
    raise ModelError(refusal)


def build_optimizer(module: Any, config: TrainConfig) -> Any:
    """AdamW over the trainable parameters; biases and norm weights (1-D tensors) get no weight decay.

    Exempting them is the convention of BERT's and the transformers Trainer's recipes:
    decaying a LayerNorm gain towards 0 only hurts.
    """
    import torch

    params = [p for p in module.parameters() if p.requires_grad]
    if not params:
        raise ModelError(f"{type(module).__name__} has no trainable parameters (all frozen); unfreeze some to train")
    groups = [
        {"params": [p for p in params if p.ndim >= 2], "weight_decay": config.weight_decay},
        {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(
        [g for g in groups if g["params"]],
        lr=config.learning_rate,
        betas=tuple(config.adam_betas),
        eps=config.adam_epsilon,
    )


def warmup_steps(config: TrainConfig, total_steps: int) -> int:
    """Warm-up length in optimizer steps: ``warmup_steps``, else ``ceil(warmup_ratio × total)``."""
    if config.warmup_steps is not None:
        return min(config.warmup_steps, total_steps)
    return int(np.ceil(config.warmup_ratio * total_steps))


def build_scheduler(optimizer: Any, config: TrainConfig, total_steps: int) -> Any:
    """Linear warm-up, then linear decay to 0 at ``total_steps`` (or constant): transformers' schedules."""
    from transformers import get_constant_schedule_with_warmup, get_linear_schedule_with_warmup

    warm = warmup_steps(config, total_steps)
    if config.lr_schedule == "constant":
        return get_constant_schedule_with_warmup(optimizer, num_warmup_steps=warm)
    return get_linear_schedule_with_warmup(optimizer, num_warmup_steps=warm, num_training_steps=total_steps)


class BatchSource:
    """Map-style dataset of whole batches: item ``i`` is batch ``i`` preprocessed, ready to train on.

    Preprocessing (tokenising, decoding and transforming images) happens here, so with
    ``num_workers > 0`` it runs in the DataLoader's worker processes, off the training loop.

    Parameters
    ----------
    dataset : Dataset
        The training examples.
    batches : sequence of ndarray
        Example indices of each batch, in training order.
    targets : ndarray of int64
        Target output column of every example (labels mapped to the model's output order).
    preprocess : callable
        The adapter's ``preprocess``.
    count_tokens : callable, optional
        ``inputs → real tokens`` (text models).
    """

    def __init__(
        self,
        dataset: Dataset,
        batches: Sequence[np.ndarray],
        targets: np.ndarray,
        preprocess: Callable[[Any], Any],
        count_tokens: Callable[[Any], int] | None = None,
    ) -> None:
        self.dataset = dataset
        self.batches = list(batches)
        self.targets = targets
        self.preprocess = preprocess
        self.count_tokens = count_tokens

    def __len__(self) -> int:
        return len(self.batches)

    def __getitem__(self, i: int) -> tuple[Any, Any, int | None]:
        import torch

        indices = self.batches[i]
        inputs = self.preprocess(batch_examples(self.dataset, indices))
        tokens = self.count_tokens(inputs) if self.count_tokens is not None else None
        return inputs, torch.as_tensor(self.targets[indices], dtype=torch.long), tokens


def _as_is(item: Any) -> Any:
    return item


def _worker_init(_: int) -> None:
    import torch

    # Workers only preprocess; one thread each keeps them from fighting the training loop for cores.
    torch.set_num_threads(1)


def make_loader(source: BatchSource, *, num_workers: int, pin_memory: bool = False, generator: Any = None) -> Any:
    """A ``DataLoader`` yielding ``source``'s batches in order, preprocessed by ``num_workers`` processes.

    Workers are forked where the platform allows it, so the adapter (tokenizer, transforms)
    is inherited rather than pickled. Pass a seeded ``generator``: without one, creating
    the loader draws from torch's global RNG, and a resumed run would then see different
    dropout masks than an uninterrupted one.
    """
    from torch.utils.data import DataLoader

    options: dict[str, Any] = {}
    if num_workers > 0:
        methods = multiprocessing.get_all_start_methods()
        options = {
            "worker_init_fn": _worker_init,
            "persistent_workers": False,
            "prefetch_factor": 2,
            "multiprocessing_context": "fork" if "fork" in methods else None,
        }
    return DataLoader(
        source,
        batch_size=None,
        shuffle=False,
        num_workers=num_workers,
        collate_fn=_as_is,
        pin_memory=pin_memory,
        generator=generator,
        **options,
    )


@contextlib.contextmanager
def swapped_module(adapter: ModelAdapter, wrapped: Any) -> Iterator[None]:
    """Let ``adapter.training_logits`` call ``wrapped`` (DDP / compiled) instead of the plain module."""
    original = adapter.module
    adapter.module = wrapped
    try:
        yield
    finally:
        adapter.module = original


def epoch_metrics(adapter: ModelAdapter, data: Dataset, batch_size: int) -> dict[str, float]:
    """Accuracy, balanced accuracy, macro F1 and log loss on ``data`` (scikit-learn), in eval mode.

    The same quality pass as ``h2h run`` (:func:`~headtohead.engines.evaluate.evaluate_model`),
    so the last epoch's figures equal what the comparison later measures on the saved weights.
    """
    from sklearn import metrics as skm

    from headtohead.engines.batching import plan_batches
    from headtohead.engines.evaluate import evaluate_model

    module = adapter.module
    was_training = bool(module.training)
    module.eval()
    try:
        evaluation = evaluate_model(adapter, data, plan_batches(len(data), batch_size))
    finally:
        module.train(was_training)
    if evaluation.n_nonfinite:  # a comparison counts such examples as wrong; a training epoch has diverged
        raise ModelError(
            f"model '{adapter.name}' returned NaN or infinite scores for {evaluation.n_nonfinite} of "
            f"{len(data)} evaluation examples after an epoch; lower the learning rate or use a more "
            f"stable precision (fp16 overflows)"
        )
    y_true = data.labels
    assert evaluation.proba is not None, "a module being trained always gives scores"
    proba = evaluation.proba.astype(np.float64)
    proba /= proba.sum(axis=1, keepdims=True)  # float32 softmax rows can miss 1 by more than log_loss allows
    labels = list(range(data.num_classes))
    with warnings.catch_warnings():  # a model with classes the data lacks: "y_pred contains classes not in y_true"
        warnings.simplefilter("ignore", UserWarning)
        balanced = float(skm.balanced_accuracy_score(y_true, evaluation.pred))
    return {
        "accuracy": float(skm.accuracy_score(y_true, evaluation.pred)),
        "balanced_accuracy": balanced,
        "f1_macro": float(skm.f1_score(y_true, evaluation.pred, average="macro", labels=labels, zero_division=0)),
        # over all the model's outputs (the data's classes, then any it lacks): -log p(true class)
        "loss": float(skm.log_loss(y_true, proba, labels=list(range(proba.shape[1])))),
    }
