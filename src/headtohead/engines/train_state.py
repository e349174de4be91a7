"""Checkpoints that let an interrupted training resume, and the trained weights a run keeps.

See ``docs/architecture.md``, the section of this title.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from headtohead.adapters.base import ModelAdapter
from headtohead.adapters.labels import align_labels
from headtohead.adapters.weights import error_summary, save_checkpoint
from headtohead.config.train import TrainConfig
from headtohead.data.base import Dataset
from headtohead.errors import ConfigError, ResultsError
from headtohead.runtime.files import write_text_atomic

__all__ = [
    "save_epoch_checkpoint",
    "latest_checkpoint",
    "read_progress",
    "restore_checkpoint",
    "settings_difference",
    "check_resumable",
    "save_trained_model",
    "resume_settings",
    "output_names",
    "WEIGHTS_FILE",
    "STATE_FILE",
    "TRAINER_FILE",
]

WEIGHTS_FILE = "model.safetensors"
TRAINER_FILE = "trainer.pt"
STATE_FILE = "state.json"
_PREFIX = "epoch-"
# Settings that change neither the weights nor the order; a checkpoint may be resumed across them.
_NOT_IN_FINGERPRINT = {
    "resume",
    "num_workers",
    "eval_each_epoch",
    "target",
    "timing_warmup_steps",
    "stall_warning",
    "scaling_steps",
    "seeds",
    "device",
    "nproc",
    "ddp_backend",
}


def _epoch_folder(root: Path, epoch: int) -> Path:
    return root / f"{_PREFIX}{epoch:04d}"


def save_epoch_checkpoint(
    root: str | Path,
    epoch: int,
    *,
    module: Any,
    optimizer: Any,
    scheduler: Any,
    scaler: Any,
    progress: Mapping[str, Any],
) -> Path:
    """Write the checkpoint of ``epoch`` (1-based) under ``root`` and drop older ones.

    Parameters
    ----------
    root : str or Path
        The run's checkpoint folder.
    epoch : int
        The epoch just completed.
    module, optimizer, scheduler, scaler
        The plain (unwrapped) model and the training state objects.
    progress : mapping
        JSON-serialisable progress (see :func:`headtohead.engines.train.train_model`).

    Returns
    -------
    Path
        The completed ``epoch-NNNN`` folder.
    """
    import torch

    root = Path(root)
    final = _epoch_folder(root, epoch)
    partial = final.with_name(final.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        partial.mkdir(parents=True)
        save_checkpoint(module, partial / WEIGHTS_FILE)
        trainer = {
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "scaler": scaler.state_dict(),
            "rng_cpu": torch.get_rng_state(),
            "rng_cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        }
        torch.save(trainer, partial / TRAINER_FILE)
        write_text_atomic(partial / STATE_FILE, json.dumps(dict(progress)))
        shutil.rmtree(final, ignore_errors=True)
        os.replace(partial, final)
    except OSError as exc:
        raise ResultsError(
            f"{partial}: cannot write the epoch checkpoint ({exc.strerror}); free disk space or "
            f"choose another --out folder"
        ) from exc
    for older in root.glob(f"{_PREFIX}*"):
        if older != final and older.is_dir():
            shutil.rmtree(older, ignore_errors=True)
    return final


def latest_checkpoint(root: str | Path) -> Path | None:
    """The newest complete ``epoch-NNNN`` folder under ``root``, or ``None``."""
    root = Path(root)
    if not root.is_dir():
        return None
    done = [
        p
        for p in root.glob(f"{_PREFIX}*")
        if p.is_dir()
        and not p.name.endswith(".partial")
        and (p / STATE_FILE).is_file()
        and p.name[len(_PREFIX) :].isdigit()
    ]
    return max(done, key=lambda p: int(p.name[len(_PREFIX) :]), default=None)


def read_progress(checkpoint: Path) -> dict[str, Any]:
    """The ``state.json`` of a checkpoint folder."""
    try:
        return cast("dict[str, Any]", json.loads((checkpoint / STATE_FILE).read_text(encoding="utf-8")))
    except (OSError, json.JSONDecodeError) as exc:
        raise ResultsError(
            f"{checkpoint / STATE_FILE}: unreadable training checkpoint ({error_summary(exc)}); "
            f"delete {checkpoint} to start that training over"
        ) from exc


def settings_difference(saved: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """Keys whose values differ between a checkpoint's settings and the current ones.

    Examples
    --------
    >>> settings_difference({"lr": 1, "epochs": 3}, {"lr": 2, "epochs": 3})
    ['lr: 1 → 2']
    """
    keys = list(dict.fromkeys([*saved, *current]))
    return [
        f"{k}: {saved.get(k)!r} → {current.get(k)!r}".replace("'", "") for k in keys if saved.get(k) != current.get(k)
    ]


def restore_checkpoint(checkpoint: Path, *, module: Any, optimizer: Any, scheduler: Any, scaler: Any) -> None:
    """Load weights, optimizer, schedule, scaler and RNG states from ``checkpoint`` into the live objects."""
    import torch
    from safetensors.torch import load_file

    try:
        state = load_file(str(checkpoint / WEIGHTS_FILE))
        trainer = torch.load(checkpoint / TRAINER_FILE, map_location="cpu", weights_only=True)
    except Exception as exc:  # a damaged checkpoint: say which, and how to get past it
        raise ResultsError(
            f"{checkpoint}: cannot read the training checkpoint ({error_summary(exc)}); delete "
            f"the folder to resume from an earlier one or start over"
        ) from exc
    device = next(module.parameters()).device
    module.load_state_dict({k: v.to(device) for k, v in state.items()}, strict=True)
    optimizer.load_state_dict(trainer["optimizer"])
    scheduler.load_state_dict(trainer["scheduler"])
    scaler.load_state_dict(trainer["scaler"])
    torch.set_rng_state(trainer["rng_cpu"])
    if trainer["rng_cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(trainer["rng_cuda"])


def save_trained_model(
    adapter: ModelAdapter, target: str | Path, *, output_names: Sequence[str], extra: Mapping[str, Any] | None = None
) -> Path:
    """Save a trained model so that its ordinary adapter reloads it.

    * ``transformers`` — ``save_pretrained`` of model and tokenizer into the folder
      ``target`` (``config.json`` names the outputs), reloaded with ``source: <target>``;
    * any other torch model — ``target/model.safetensors`` with the output names in its
      metadata, reloaded with ``checkpoint: <that file>``.

    Parameters
    ----------
    adapter : ModelAdapter
        The trained model (its plain module, not a DDP or compiled wrapper).
    target : str or Path
        A folder (created).
    output_names : sequence of str
        The class of each output column, in output order.
    extra : mapping, optional
        Facts kept with safetensors checkpoints (seed, epochs …).

    Returns
    -------
    Path
        The folder (transformers) or the ``.safetensors`` file.
    """
    folder = Path(target)
    folder.mkdir(parents=True, exist_ok=True)
    module = adapter.module
    if adapter.kind == "transformers":
        from transformers.utils import logging as hf_logging

        names = [str(n) for n in output_names]
        module.config.id2label = dict(enumerate(names))
        module.config.label2id = {n: i for i, n in enumerate(names)}
        bars = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()
        try:
            module.save_pretrained(folder)
            adapter.tokenizer.save_pretrained(folder)  # type: ignore[attr-defined]
        except OSError as exc:
            raise ResultsError(
                f"{folder}: cannot save the trained model ({exc.strerror}); free disk space or "
                f"choose another --out folder"
            ) from exc
        finally:
            if bars:
                hf_logging.enable_progress_bar()
        return folder
    return save_checkpoint(module, folder / WEIGHTS_FILE, label_names=list(output_names), extra=extra)


def check_resumable(checkpoint: Path, saved: Mapping[str, Any], current: Mapping[str, Any]) -> None:
    """Refuse to resume a checkpoint made with other settings (the result would be neither run).

    Raises
    ------
    ConfigError
        The settings differ; the message lists what changed and how to proceed.
    """
    changed = settings_difference(saved, current)
    if changed:
        shown = "; ".join(changed[:3]) + (f"; … {len(changed) - 3} more" if len(changed) > 3 else "")
        raise ConfigError(
            f"{checkpoint}: this checkpoint was made with other settings ({shown}); delete "
            f"{checkpoint.parent} or set train.resume: false to start over"
        )


def resume_settings(
    model: Any, train_data: Dataset, config: TrainConfig, *, seed: int, world_size: int = 1
) -> dict[str, Any]:
    """Everything that decides the trained weights; a checkpoint resumes only if these are equal.

    Parameters
    ----------
    model : ModelConfig
        The model's entry in the experiment.
    train_data : Dataset
    config : TrainConfig
    seed : int
    world_size : int
        Processes sharing each global batch.

    Returns
    -------
    dict
        JSON-serialisable; compared key by key (:func:`~headtohead.engines.train_state.settings_difference`).
    """
    kept = config.model_dump(mode="json", exclude=_NOT_IN_FINGERPRINT)
    return {
        **kept,
        "seed": seed,
        "world_size": world_size,
        "model": model.model_dump(mode="json"),
        "train_data": train_data.fingerprint(),
    }


def output_names(adapter: ModelAdapter, label_names: tuple[str, ...]) -> list[str]:
    """The class of each of the model's output columns (dataset names, in output order; a model's classes
    the data does not hold keep their own names)."""
    alignment = align_labels(adapter.label_names, label_names, model=adapter.name)
    names = [""] * alignment.n_outputs
    for cls, column in enumerate(alignment.columns):
        names[int(column)] = label_names[cls]
    for name, column in zip(alignment.outside, alignment.outside_columns, strict=True):
        names[int(column)] = name
    return names
