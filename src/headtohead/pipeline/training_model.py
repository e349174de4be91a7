"""One model's training in this process: load it, train it identically, save what its adapter reloads.

:func:`train_one` is what every training runs — alone, or as one rank of a data-parallel group
(:mod:`headtohead.pipeline.training_ddp`); :func:`finished_run` finds a training that already
finished with the same settings, so an interrupted ``h2h train`` resumes without training it again.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from headtohead.config import Experiment
from headtohead.config.schema import DataConfig, ModelConfig
from headtohead.config.train import TrainConfig
from headtohead.errors import ConfigError
from headtohead.report.words.training import epoch_line
from headtohead.results.files import CHECKPOINTS_DIR, MODELS_DIR, TRAINED_MODEL_RECORD
from headtohead.results.training import TrainingRun
from headtohead.runtime.files import write_text_atomic

__all__ = ["TRAINABLE_KINDS", "check_trainable", "eval_experiment", "train_one", "finished_run"]

#: Kinds whose trained weights the ordinary adapters reload (``save_trained_model``).
TRAINABLE_KINDS: tuple[str, ...] = ("transformers", "timm", "torchvision")


def check_trainable(exp: Experiment) -> None:
    """Refuse a model of a kind h2h train cannot fine-tune (before any training starts)."""
    for model in exp.models:
        if model.kind not in TRAINABLE_KINDS:
            raise ConfigError(
                f"model '{model.name}' (kind {model.kind}) cannot be fine-tuned by h2h train "
                f"(trainable kinds: {', '.join(TRAINABLE_KINDS)}); train it elsewhere and compare "
                f"it with h2h run"
            )


def eval_experiment(exp: Experiment, data: DataConfig, saved: Mapping[str, str]) -> dict[str, Any]:
    """The experiment that evaluates the trained models: each model points at its saved weights.

    Parameters
    ----------
    exp : Experiment
        The training experiment.
    data : DataConfig
        Its data section with absolute paths.
    saved : mapping of str to str
        Model name → folder (transformers) or ``.safetensors`` file (timm, torchvision).

    Returns
    -------
    dict
        A plain experiment (no train section) for :func:`headtohead.run`.
    """
    raw = exp.model_dump(mode="json", exclude={"train"})
    raw["data"] = data.model_dump(mode="json", exclude_none=True)
    models = []
    for model in exp.models:
        entry = model.model_dump(mode="json", exclude_none=True)
        entry.pop("label_names", None)  # the saved weights name their outputs now
        if model.kind == "transformers":
            entry["source"] = saved[model.name]
        else:
            entry.update(checkpoint=saved[model.name], pretrained=False)
        models.append(entry)
    raw["models"] = models
    return raw


def train_one(
    model: ModelConfig,
    *,
    data: DataConfig,
    splits: Any,
    config: TrainConfig,
    seed: int,
    exp_seed: int,
    device: str,
    base_dir: Path,
    out: Path,
    eval_batch_size: int,
    dist: Any,
    say: Callable[[str], None],
    keep: bool = True,
) -> TrainingRun:
    """Train (or resume) one model with one seed in this process, and save it (main process).

    ``keep=False`` is a throughput-only run: no evaluation, no checkpoints, nothing saved.
    """
    from headtohead.adapters import LoadContext, create_adapter
    from headtohead.engines.train import TrainHooks, output_names, resume_settings, train_model
    from headtohead.engines.train_state import save_trained_model

    context = LoadContext(
        label_names=splits.eval.label_names, modality=splits.eval.modality, device=device, seed=seed, base_dir=base_dir
    )
    start = time.perf_counter()
    adapter = create_adapter(model, context)
    load_time = time.perf_counter() - start
    epochs_total = config.epochs if config.max_steps is None else None
    main = dist is None or dist.is_main
    show = (lambda r: say(epoch_line(model.name, seed, epochs_total, r))) if main and keep else None
    hooks = TrainHooks(on_epoch=show)
    run = train_model(
        adapter,
        splits.train,
        config,
        seed=seed,
        eval_data=splits.eval if keep else None,
        eval_batch_size=eval_batch_size,
        checkpoint_dir=out / CHECKPOINTS_DIR / model.name / f"seed-{seed}" if keep else None,
        hooks=hooks,
        dist=dist,
        load_time_s=load_time,
    )
    if not main or not keep:
        return run
    folder = out / MODELS_DIR / model.name / f"seed-{seed}"
    target = save_trained_model(
        adapter,
        folder,
        output_names=output_names(adapter, splits.eval.label_names),
        extra={
            "seed": seed,
            "experiment_seed": exp_seed,
            "epochs": len(run.epochs),
            "optimizer_steps": run.optimizer_steps,
            "order_hash": run.order_hash,
        },
    )
    run = run.model_copy(update={"saved_to": str(target.resolve())})
    settings = resume_settings(model, splits.train, config, seed=seed, world_size=run.world_size)
    write_text_atomic(
        folder / TRAINED_MODEL_RECORD, json.dumps({"settings": settings, "run": run.model_dump(mode="json")})
    )
    # The weights are saved and the run recorded: the epoch checkpoints (weights plus optimizer
    # state, three times the model's size) are no longer needed to resume.
    shutil.rmtree(out / CHECKPOINTS_DIR / model.name / f"seed-{seed}", ignore_errors=True)
    return run


def finished_run(
    model: ModelConfig, splits: Any, config: TrainConfig, seed: int, world_size: int, out: Path
) -> TrainingRun | None:
    """The record of a training of this model and seed that already finished with the same settings."""
    from headtohead.engines.train import resume_settings

    marker = out / MODELS_DIR / model.name / f"seed-{seed}" / TRAINED_MODEL_RECORD
    if not config.resume or not marker.is_file():
        return None
    try:
        saved = json.loads(marker.read_text(encoding="utf-8"))
        run = TrainingRun.model_validate(saved["run"])
    except (OSError, ValueError, KeyError):
        return None  # unreadable: train again
    current = resume_settings(model, splits.train, config, seed=seed, world_size=world_size)
    if saved.get("settings") != current or not run.saved_to or not Path(run.saved_to).exists():
        return None
    return run
