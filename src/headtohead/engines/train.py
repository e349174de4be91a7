"""The trainer: every model is fine-tuned identically, and what it costs is measured.

See ``docs/architecture.md``, the section of this title.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from headtohead.adapters.base import ModelAdapter
from headtohead.adapters.labels import align_labels
from headtohead.config.train import TrainConfig
from headtohead.data.base import Dataset
from headtohead.engines.batching import plan_batches
from headtohead.engines.energy import JobEnergy
from headtohead.engines.memory import RssSampler
from headtohead.engines.seeding import seed_everything
from headtohead.engines.telemetry import TelemetrySampler
from headtohead.engines.train_ddp import DistContext, all_reduce_sum, barrier, rank_share
from headtohead.engines.train_loop import (
    BatchSource,
    StepInfo,
    TrainHooks,
    build_optimizer,
    build_scheduler,
    enable_gradient_checkpointing,
    epoch_metrics,
    make_loader,
    resolve_precision,
    swapped_module,
)
from headtohead.engines.train_state import (
    check_resumable,
    latest_checkpoint,
    output_names,
    read_progress,
    restore_checkpoint,
    resume_settings,
    save_epoch_checkpoint,
)
from headtohead.errors import ConfigError, ModelError, did_you_mean
from headtohead.results.training import EpochRecord, StepLog, TrainingRun
from headtohead.runtime.devices import get_backend, is_cuda

__all__ = ["train_model", "TrainHooks", "StepInfo", "resume_settings", "output_names"]

_MIB = 2**20


@dataclass
class _Progress:
    """What the loop has done so far; saved with every checkpoint, restored on resume."""

    epochs: list[dict[str, Any]] = field(default_factory=list)
    steps: dict[str, list[Any]] = field(
        default_factory=lambda: {k: [] for k in ("data_wait_ns", "compute_ns", "samples", "tokens", "loss", "excluded")}
    )
    optimizer_steps: int = 0
    elapsed_train_s: float = 0.0
    end_to_end_s: float = 0.0
    time_to_target_s: float | None = None
    target_epoch: int | None = None
    rss_peak_mb: float = 0.0
    cuda_max_allocated_mb: float | None = None
    cuda_max_reserved_mb: float | None = None

    def to_json(self, settings: dict[str, Any]) -> dict[str, Any]:
        return {**self.__dict__, "settings": settings}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> _Progress:
        return cls(**{k: v for k, v in raw.items() if k != "settings"})


class _Trainer:
    """One model, one seed: set up, (resume,) loop over epochs, summarise."""

    def __init__(
        self,
        adapter: ModelAdapter,
        data: Dataset,
        config: TrainConfig,
        seed: int,
        dist: DistContext | None,
        hooks: TrainHooks,
    ) -> None:
        import torch

        if adapter.module is None:
            raise ModelError(
                f"model '{adapter.name}' (kind {adapter.kind}) has no torch module; headtohead can "
                f"only train torch models (transformers, timm, torchvision, python modules)"
            )
        self.adapter, self.data, self.config, self.seed = adapter, data, config, seed
        self.dist, self.hooks = dist, hooks
        self.module = adapter.module
        self.device = str(adapter.device)
        self.world = dist.world_size if dist else 1
        self.main = dist is None or dist.is_main
        # Load-time warnings ("random weights, train it first") describe the starting point, not the training.
        self.first_warning = len(adapter.warnings)
        alignment = align_labels(adapter.label_names, data.label_names, model=adapter.name)
        # No warning for unnamed or generic outputs (LABEL_0 …): training makes output i class i,
        # and the saved model names its outputs after the data.
        self.targets = alignment.columns[data.labels].astype(np.int64)  # class → the model's output column
        self.global_batch = config.batch_size * self.world
        self.batches_per_epoch = len(self._epoch_plan(0)[1])
        if self.batches_per_epoch == 0:
            raise ModelError(
                f"model '{adapter.name}': {len(data)} training examples cannot feed {self.world} "
                f"processes; use more training data or fewer processes (train.nproc)"
            )
        per_epoch = math.ceil(self.batches_per_epoch / config.gradient_accumulation_steps)
        self.total_steps = config.max_steps or config.epochs * per_epoch
        self.n_epochs = config.epochs if config.max_steps is None else math.ceil(config.max_steps / per_epoch)
        seed_everything(seed)
        self.precision = resolve_precision(config.precision, self.device)
        if config.gradient_checkpointing:
            enable_gradient_checkpointing(adapter)
        self.optimizer = build_optimizer(self.module, config)
        self.scheduler = build_scheduler(self.optimizer, config, self.total_steps)
        self.scaler = torch.amp.GradScaler(self.precision.device_type, enabled=self.precision.scaler)
        self.forward_module = self._wrap()
        self.tokens_of = getattr(adapter, "tokens_in_batch", None)
        self.resumed_from: int | None = None
        self.telemetry: Any = None

    def _wrap(self) -> Any:
        wrapped = self.module
        if self.dist is not None:
            from torch.nn.parallel import DistributedDataParallel

            ids = [int(self.device.split(":", 1)[1])] if is_cuda(self.device) and ":" in self.device else None
            wrapped = DistributedDataParallel(wrapped, device_ids=ids)
        if self.config.compile:
            import torch

            backend, known = self.config.compile_backend, torch._dynamo.list_backends(exclude_tags=())
            if backend not in known:
                shown = ", ".join(torch._dynamo.list_backends())
                raise ConfigError(
                    f"train.compile_backend '{backend}' is not a torch.compile backend"
                    f"{did_you_mean(backend, known)} (e.g. {shown}; eager or aot_eager to debug)"
                )
            wrapped = torch.compile(wrapped, backend=backend)
        return wrapped

    def _epoch_plan(self, epoch: int) -> tuple[str, list[np.ndarray]]:
        """The epoch's order hash and its global batches (those every process can share)."""
        plan = plan_batches(len(self.data), self.global_batch, shuffle=True, seed=self.seed + epoch)
        return plan.hash(), [b for b in plan if len(b) >= self.world]

    # -- the loop --------------------------------------------------------------------
    def run(
        self, checkpoint_dir: Path | None, settings: dict[str, Any], eval_data: Dataset | None, eval_batch_size: int
    ) -> _Progress:
        progress, start_epoch = _Progress(), 0
        if checkpoint_dir is not None and self.config.resume:
            found = latest_checkpoint(checkpoint_dir)
            if found is not None:
                saved = read_progress(found)
                check_resumable(found, saved.get("settings", {}), settings)
                restore_checkpoint(
                    found, module=self.module, optimizer=self.optimizer, scheduler=self.scheduler, scaler=self.scaler
                )
                progress, start_epoch = _Progress.from_json(saved), len(saved["epochs"])
                self.resumed_from = start_epoch
        backend, began = get_backend(), time.perf_counter()
        if is_cuda(self.device):
            backend.reset_peak_memory_stats(self.device)
        rss, telemetry = RssSampler(interval_s=0.05), TelemetrySampler(self.device, interval_s=0.5)
        rss.start()
        telemetry.start()
        try:
            if start_epoch < self.n_epochs and progress.optimizer_steps < self.total_steps:
                self._epochs(progress, start_epoch, began, checkpoint_dir, settings, eval_data, eval_batch_size)
        finally:
            peak = rss.stop().peak / _MIB
            telemetry.stop()
            self.module.eval()
        self.telemetry = telemetry.summarise()
        progress.rss_peak_mb = max(progress.rss_peak_mb, peak)
        if is_cuda(self.device):
            allocated, reserved = backend.max_memory_allocated(self.device), backend.max_memory_reserved(self.device)
            progress.cuda_max_allocated_mb = max(progress.cuda_max_allocated_mb or 0.0, (allocated or 0) / _MIB)
            progress.cuda_max_reserved_mb = max(progress.cuda_max_reserved_mb or 0.0, (reserved or 0) / _MIB)
        return progress

    def _epochs(
        self,
        progress: _Progress,
        start_epoch: int,
        began: float,
        checkpoint_dir: Path | None,
        settings: dict[str, Any],
        eval_data: Dataset | None,
        eval_batch_size: int,
    ) -> None:
        import torch

        plans = [self._epoch_plan(e) for e in range(start_epoch, self.n_epochs)]
        local = [rank_share(b, self.dist) for _, batches in plans for b in batches]
        source = BatchSource(self.data, local, self.targets, self.adapter.preprocess, self.tokens_of)
        loader = make_loader(
            source,
            num_workers=self.config.num_workers,
            pin_memory=is_cuda(self.device),
            generator=torch.Generator().manual_seed(self.seed),
        )
        first_step = len(progress.steps["compute_ns"])
        progress.steps["excluded"].extend(range(first_step, first_step + self.config.timing_warmup_steps))
        batches = iter(loader)
        earlier_wall = progress.end_to_end_s
        for offset, (order_hash, global_batches) in enumerate(plans):
            epoch = start_epoch + offset
            record = self._one_epoch(epoch, order_hash, global_batches, batches, progress)
            last = record.partial or progress.optimizer_steps >= self.total_steps or epoch == self.n_epochs - 1
            record = self._evaluate(record, eval_data, eval_batch_size, last=last)
            self._check_target(record, progress)
            progress.epochs.append(record.model_dump(mode="json"))
            progress.end_to_end_s = earlier_wall + time.perf_counter() - began
            if checkpoint_dir is not None and self.main:
                path = save_epoch_checkpoint(
                    checkpoint_dir,
                    epoch + 1,
                    module=self.module,
                    optimizer=self.optimizer,
                    scheduler=self.scheduler,
                    scaler=self.scaler,
                    progress=progress.to_json(settings),
                )
                if self.hooks.on_checkpoint is not None:
                    self.hooks.on_checkpoint(path)
            barrier(self.dist)
            progress.end_to_end_s = earlier_wall + time.perf_counter() - began
            if self.hooks.on_epoch is not None:
                self.hooks.on_epoch(record)
            if last:
                break
        del batches  # stops the loader's worker processes

    def _one_epoch(
        self, epoch: int, order_hash: str, global_batches: list[np.ndarray], batches: Any, progress: _Progress
    ) -> EpochRecord:
        self.module.train()
        steps, accum = progress.steps, self.config.gradient_accumulation_steps
        n, first, clock = len(global_batches), len(steps["compute_ns"]), time.perf_counter_ns
        start = previous = clock()
        local_loss, local_tokens, local_samples = [], [], []
        done = 0
        for i in range(n):
            inputs, targets, tokens = next(batches)
            ready = clock()
            inputs, targets = self.adapter.to_device(inputs), targets.to(self.device, non_blocking=True)
            group_len = min(accum, n - (i // accum) * accum)
            boundary = (i + 1) % accum == 0 or i == n - 1
            loss = self._forward_backward(inputs, targets, group_len, sync=boundary)
            if boundary:
                self._optimizer_step()
                progress.optimizer_steps += 1
            loss_value = float(loss.detach())  # also waits for the device: the step is really done
            now = clock()
            steps["data_wait_ns"].append(ready - previous)
            steps["compute_ns"].append(now - ready)
            steps["samples"].append(len(global_batches[i]))
            local_loss.append(loss_value * len(targets))
            local_tokens.append(tokens or 0)
            local_samples.append(len(targets))
            done = i + 1
            if self.hooks.on_step is not None:
                self.hooks.on_step(StepInfo(epoch + 1, first + i, i, loss_value, progress.optimizer_steps))
            previous = clock()  # a hook's own time is neither compute nor waiting for data
            if boundary and progress.optimizer_steps >= self.total_steps:
                break
        train_s = (clock() - start) / 1e9
        # One exchange per epoch: every process's losses and tokens, summed over the group.
        summed = all_reduce_sum(np.array([local_loss, local_tokens, local_samples], dtype=np.float64), self.dist)
        step_loss = (summed[0] / np.maximum(summed[2], 1)).tolist()
        steps["loss"].extend(step_loss)
        steps["tokens"].extend(int(t) for t in summed[1])
        progress.elapsed_train_s += train_s
        return EpochRecord(
            epoch=epoch + 1,
            steps=done,
            optimizer_steps=progress.optimizer_steps,
            samples=int(sum(len(b) for b in global_batches[:done])),
            train_loss=float(np.sum(summed[0]) / max(np.sum(summed[2]), 1)),
            train_s=train_s,
            elapsed_train_s=progress.elapsed_train_s,
            learning_rate=float(self.scheduler.get_last_lr()[0]),
            order_hash=order_hash,
            partial=done < n,
        )

    def _forward_backward(self, inputs: Any, targets: Any, group_len: int, *, sync: bool) -> Any:
        import contextlib

        import torch

        # Between optimizer steps DDP need not all-reduce gradients; no_sync saves that traffic.
        skip_sync = self.dist is not None and not sync and hasattr(self.forward_module, "no_sync")
        with self.forward_module.no_sync() if skip_sync else contextlib.nullcontext():
            with swapped_module(self.adapter, self.forward_module), self.precision.autocast():
                logits = self.adapter.training_logits(inputs)
            loss = torch.nn.functional.cross_entropy(logits.float(), targets)
            self.scaler.scale(loss / group_len).backward()
        return loss

    def _optimizer_step(self) -> None:
        import torch

        if self.config.max_grad_norm is not None:
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.module.parameters(), self.config.max_grad_norm)
        scale = self.scaler.get_scale() if self.precision.scaler else None
        self.scaler.step(self.optimizer)
        self.scaler.update()
        # fp16 loss scaling skips a step whose gradients overflowed (and lowers the scale); the
        # schedule then waits too, as in the transformers Trainer.
        if scale is None or self.scaler.get_scale() >= scale:
            self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)

    def _evaluate(self, record: EpochRecord, eval_data: Dataset | None, batch_size: int, *, last: bool) -> EpochRecord:
        if eval_data is None or not self.main or not (self.config.eval_each_epoch or last):
            return record
        start = time.perf_counter()
        metrics = epoch_metrics(self.adapter, eval_data, batch_size)
        return record.model_copy(update={"eval": metrics, "eval_s": time.perf_counter() - start})

    def _check_target(self, record: EpochRecord, progress: _Progress) -> None:
        target = self.config.target
        if target is None or record.eval is None or progress.time_to_target_s is not None:
            return
        value = record.eval[target.metric]
        if (value <= target.value) if target.metric == "loss" else (value >= target.value):
            progress.time_to_target_s, progress.target_epoch = record.elapsed_train_s, record.epoch


def train_model(
    adapter: ModelAdapter,
    train_data: Dataset,
    config: TrainConfig,
    *,
    seed: int,
    eval_data: Dataset | None = None,
    eval_batch_size: int = 32,
    checkpoint_dir: str | Path | None = None,
    hooks: TrainHooks | None = None,
    dist: DistContext | None = None,
    load_time_s: float = 0.0,
) -> TrainingRun:
    """Train ``adapter.module`` on ``train_data`` and measure it.

    Parameters
    ----------
    adapter : ModelAdapter
        A loaded torch model whose outputs can be matched to ``train_data``'s labels.
    train_data : Dataset
        Training examples (the eval split's label names).
    config : TrainConfig
        The recipe, the same for every model.
    seed : int
        Seed of the order (``seed + epoch``), dropout and the optimizer state.
    eval_data : Dataset, optional
        Evaluated after each epoch (``config.eval_each_epoch``) and always after the last.
    eval_batch_size : int
        Batch size of those evaluations.
    checkpoint_dir : str or Path, optional
        Where epoch checkpoints go; an existing one is resumed when ``config.resume``.
    hooks : TrainHooks, optional
        Callbacks after steps, epochs and checkpoints (an exception there interrupts training).
    dist : DistContext, optional
        The data-parallel group; the module is wrapped in ``DistributedDataParallel``.
    load_time_s : float
        How long loading the model took (recorded).

    Returns
    -------
    TrainingRun
        Measured on this process (rank 0's is the one kept in data-parallel runs).

    Raises
    ------
    H2HError
        The model cannot be trained (no torch module, unmatched labels, precision or gradient
        checkpointing unsupported), or a checkpoint was made with other settings.
    """
    hooks = hooks or TrainHooks()
    trainer = _Trainer(adapter, train_data, config, seed, dist, hooks)
    settings = resume_settings(adapter.config, train_data, config, seed=seed, world_size=trainer.world)
    energy = JobEnergy(trainer.device)
    progress = trainer.run(
        Path(checkpoint_dir) if checkpoint_dir is not None else None, settings, eval_data, eval_batch_size
    )
    steps = StepLog.model_validate(
        {**progress.steps, "tokens": progress.steps["tokens"] if trainer.tokens_of else None}
    )
    epochs = [EpochRecord.model_validate(e) for e in progress.epochs]
    warnings = list(dict.fromkeys(adapter.warnings[trainer.first_warning :]))
    if steps.compute_ns and not steps.timed_steps:
        warnings.append(
            f"model '{adapter.name}': all {len(steps.compute_ns)} steps were timing warm-up steps, so "
            f"samples/s were not measured; train longer or lower train.timing_warmup_steps"
        )
    digest = hashlib.sha256("".join(e.order_hash for e in epochs).encode()).hexdigest()
    final = next((e.eval for e in reversed(epochs) if e.eval is not None), None) or {}
    n_parameters = adapter.num_parameters()
    assert n_parameters is not None, "only a torch module trains, and its parameters are counted"
    return TrainingRun(
        model=adapter.name,
        kind=adapter.kind,
        source=adapter.config.source,
        seed=seed,
        device=trainer.device,
        world_size=trainer.world,
        precision=config.precision,
        compile=config.compile,
        gradient_checkpointing=config.gradient_checkpointing,
        num_workers=config.num_workers,
        batch_size=config.batch_size,
        gradient_accumulation_steps=config.gradient_accumulation_steps,
        n_train=len(train_data),
        num_parameters=n_parameters,
        order_hash=digest,
        epochs=epochs,
        steps=steps,
        optimizer_steps=progress.optimizer_steps,
        samples_seen=int(sum(steps.samples)),
        load_time_s=load_time_s,
        end_to_end_s=progress.end_to_end_s,
        time_to_target_s=progress.time_to_target_s,
        target_epoch=progress.target_epoch,
        final_eval=final,
        rss_peak_mb=progress.rss_peak_mb,
        cuda_max_allocated_mb=progress.cuda_max_allocated_mb,
        cuda_max_reserved_mb=progress.cuda_max_reserved_mb,
        telemetry=trainer.telemetry,
        resumed_from_epoch=trainer.resumed_from,
        warnings=warnings,
        cost=energy.finish(progress.end_to_end_s, resumed=trainer.resumed_from is not None, world_size=trainer.world),
    )
