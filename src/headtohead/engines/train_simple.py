"""The demo's short training interface: :func:`train_classifier` with a few settings.

A thin layer over :func:`headtohead.engines.train.train_model` (constant learning rate, no
clipping, no checkpoints), kept for ``h2h demo`` and the example builders.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from headtohead.adapters.base import ModelAdapter
from headtohead.config.train import TrainConfig
from headtohead.data.base import Dataset
from headtohead.engines.train import TrainHooks, train_model

__all__ = ["TrainSettings", "TrainLog", "train_classifier"]


@dataclass(frozen=True)
class TrainSettings:
    """Hyperparameters shared by every model of a comparison (the demo's short form)."""

    epochs: int = 3
    batch_size: int = 64
    learning_rate: float = 3e-3
    weight_decay: float = 0.01
    seed: int = 0


@dataclass
class TrainLog:
    """What happened while training one model (the demo's short form)."""

    order_hashes: list[str] = field(default_factory=list)
    epoch_losses: list[float] = field(default_factory=list)
    seconds: float = 0.0
    samples_per_second: float = 0.0


def train_classifier(
    adapter: ModelAdapter,
    dataset: Dataset,
    settings: TrainSettings,
    *,
    on_epoch: Callable[[int, float], None] | None = None,
) -> TrainLog:
    """Train with a constant learning rate and no clipping: :func:`train_model` in its simplest form.

    Parameters
    ----------
    adapter : ModelAdapter
        A torch model built for ``dataset``'s classes.
    dataset : Dataset
        Training examples.
    settings : TrainSettings
    on_epoch : callable, optional
        ``on_epoch(epoch_number, mean_loss)`` after each epoch (1-based).

    Returns
    -------
    TrainLog
    """
    config = TrainConfig(
        epochs=settings.epochs,
        batch_size=settings.batch_size,
        learning_rate=settings.learning_rate,
        weight_decay=settings.weight_decay,
        lr_schedule="constant",
        max_grad_norm=None,
        timing_warmup_steps=0,
        resume=False,
    )
    hooks = TrainHooks(on_epoch=(lambda e: on_epoch(e.epoch, e.train_loss)) if on_epoch is not None else None)
    run = train_model(adapter, dataset, config, seed=settings.seed, hooks=hooks)
    seconds = sum(e.train_s for e in run.epochs)
    return TrainLog(
        order_hashes=[e.order_hash for e in run.epochs],
        epoch_losses=[e.train_loss for e in run.epochs],
        seconds=seconds,
        samples_per_second=run.samples_seen / seconds if seconds else 0.0,
    )
