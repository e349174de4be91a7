"""A small, fair training loop: every model gets the same shuffled batches and settings.

Used by ``h2h demo`` to train its two image models from scratch. The fine-tuning issue
grows this into the full trainer (schedules, AMP, accumulation, checkpoints).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from headtohead.adapters.base import ModelAdapter
from headtohead.data.base import Dataset
from headtohead.engines.batching import plan_batches
from headtohead.engines.evaluate import batch_examples
from headtohead.engines.seeding import seed_everything

__all__ = ["TrainSettings", "TrainLog", "train_classifier"]


@dataclass(frozen=True)
class TrainSettings:
    """Hyperparameters shared by every model of a comparison."""

    epochs: int = 3
    batch_size: int = 64
    learning_rate: float = 3e-3
    weight_decay: float = 0.01
    seed: int = 0


@dataclass
class TrainLog:
    """What happened while training one model."""

    order_hashes: list[str] = field(default_factory=list)
    epoch_losses: list[float] = field(default_factory=list)
    seconds: float = 0.0
    samples_per_second: float = 0.0


def train_classifier(adapter: ModelAdapter, dataset: Dataset, settings: TrainSettings, *,
                     on_epoch: Callable[[int, float], None] | None = None) -> TrainLog:
    """Train ``adapter.module`` on ``dataset`` with AdamW and cross-entropy.

    The batch order of epoch ``e`` is a permutation seeded by ``settings.seed + e``: the
    same for every model, recorded as a hash per epoch in the returned log.

    Parameters
    ----------
    adapter : ModelAdapter
        A torch-backed adapter whose outputs are in ``dataset.label_names`` order (a model
        built for this dataset).
    dataset : Dataset
        Training examples.
    settings : TrainSettings
    on_epoch : callable, optional
        ``on_epoch(epoch_number, mean_loss)`` after each epoch (1-based).

    Returns
    -------
    TrainLog
    """
    import torch

    seed_everything(settings.seed)
    module = adapter.module
    optimizer = torch.optim.AdamW(module.parameters(), lr=settings.learning_rate, weight_decay=settings.weight_decay)
    loss_fn = torch.nn.CrossEntropyLoss()
    log = TrainLog()
    module.train()
    start = time.perf_counter()
    try:
        for epoch in range(settings.epochs):
            plan = plan_batches(len(dataset), settings.batch_size, shuffle=True, seed=settings.seed + epoch)
            log.order_hashes.append(plan.hash())
            losses = []
            for indices in plan:
                inputs = adapter.to_device(adapter.preprocess(batch_examples(dataset, indices)))
                targets = torch.as_tensor(dataset.labels[indices], device=adapter.device)
                optimizer.zero_grad(set_to_none=True)
                loss = loss_fn(adapter.training_logits(inputs), targets)
                loss.backward()
                optimizer.step()
                losses.append(float(loss.detach()))
            log.epoch_losses.append(float(np.mean(losses)))
            if on_epoch is not None:
                on_epoch(epoch + 1, log.epoch_losses[-1])
    finally:
        module.eval()
    log.seconds = time.perf_counter() - start
    log.samples_per_second = settings.epochs * len(dataset) / log.seconds if log.seconds else 0.0
    return log
