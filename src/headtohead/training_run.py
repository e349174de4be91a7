"""``h2h train``: fine-tune every model identically, save it, then run the full comparison.

The flow, for each seed and each model: load it, train it with
:func:`~headtohead.engines.train.train_model` (epoch checkpoints under
``<out>/checkpoints/<model>/seed-<s>/``, so an interrupted run resumes), save the trained
weights under ``<out>/models/<model>/seed-<s>/`` in the form its adapter reloads. Then:

* ``training.json`` — every run's measurements and the multi-seed statistics, with the
  environment fingerprint (what ``h2h compare`` reads across machines);
* ``experiment.yaml`` — the evaluation experiment, its models pointing at the first seed's
  trained weights, run through :func:`headtohead.run` (quality, statistics, speed) into
  ``results.json`` / ``predictions.npz``.

With ``train.nproc > 1`` each training is launched data-parallel through torchrun
(:mod:`headtohead.engines.train_ddp`), after a short single-process reference run that
gives the scaling efficiency.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml

from headtohead.config import Experiment
from headtohead.config.schema import DataConfig, ModelConfig
from headtohead.config.train import TrainConfig, load_train_experiment
from headtohead.errors import ConfigError, DataError
from headtohead.results.comparison import SeedResult
from headtohead.runtime.files import write_text_atomic
from headtohead.results.training import EpochRecord, ScalingRecord, TrainingRun, TrainingSummary
from headtohead.results.training_file import TrainingResult, save_training_result

__all__ = ["train_experiment", "TrainOutcome", "load_train_experiment", "eval_experiment", "run_training_job",
           "TRAINABLE_KINDS", "TRAINING_FILE"]

log = logging.getLogger("headtohead")

TRAINING_FILE = "training.json"
#: Written beside a trained model: its TrainingRun and the settings it was trained with.
FINISHED_FILE = "h2h-training.json"
#: Kinds whose trained weights the ordinary adapters reload (``save_trained_model``).
TRAINABLE_KINDS: tuple[str, ...] = ("transformers", "timm", "torchvision")


@dataclass
class TrainOutcome:
    """What :func:`train_experiment` returns."""

    training: TrainingSummary
    run: Any  # headtohead.runner.Run; None on the non-main processes of a torchrun launch
    out_dir: Path
    experiment: dict[str, Any]


def _check_trainable(exp: Experiment) -> None:
    for model in exp.models:
        if model.kind not in TRAINABLE_KINDS:
            raise ConfigError(f"model '{model.name}' (kind {model.kind}) cannot be fine-tuned by h2h train "
                              f"(trainable kinds: {', '.join(TRAINABLE_KINDS)}); train it elsewhere and compare "
                              f"it with h2h run")


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


def _seed_summary(runs: Sequence[TrainingRun], seeds: Sequence[int]) -> Any:
    if len(seeds) < 2 or not all(r.final_eval for r in runs):
        return None
    from headtohead.stats import summarise_seeds

    results = [SeedResult(model=r.model, seed=r.seed, metrics=dict(r.final_eval)) for r in runs]
    return summarise_seeds(results, compare_metric="accuracy")


def _epoch_line(model: str, seed: int, total: int | None, record: EpochRecord) -> str:
    rate = record.samples / record.train_s if record.train_s > 0 else 0.0
    metrics = (" · eval " + ", ".join(f"{k} {v:.3f}" for k, v in record.eval.items() if k != "balanced_accuracy")
               if record.eval else "")
    of = f"/{total}" if total else ""
    return (f"  {model} (seed {seed}): epoch {record.epoch}{of} loss {record.train_loss:.4f}{metrics} · "
            f"{rate:,.0f} samples/s")


def _run_line(run: TrainingRun) -> str:
    parts = [f"{run.samples_per_s:,.1f} samples/s" if run.samples_per_s else "samples/s n/a"]
    if run.tokens_per_s:
        parts.append(f"{run.tokens_per_s:,.0f} tokens/s")
    if run.data_wait_fraction is not None:
        parts.append(f"waits for data {run.data_wait_fraction * 100:.0f} %")
    parts.append(f"peak {'CUDA' if run.cuda_max_allocated_mb is not None else 'RSS'} {run.peak_memory_mb:,.0f} MiB")
    if run.scaling is not None:
        parts.append(f"{run.world_size} processes, scaling efficiency {run.scaling.efficiency * 100:.0f} %")
    resumed = f", resumed after epoch {run.resumed_from_epoch}" if run.resumed_from_epoch else ""
    return f"  {run.model} (seed {run.seed}): {' · '.join(parts)}; {run.end_to_end_s:.1f} s end to end{resumed}"


def _train_one(model: ModelConfig, *, data: DataConfig, splits: Any, config: TrainConfig, seed: int,
               exp_seed: int, device: str, base_dir: Path, out: Path, eval_batch_size: int,
               dist: Any, say: Callable[[str], None], keep: bool = True) -> TrainingRun:
    """Train (or resume) one model with one seed in this process, and save it (main process).

    ``keep=False`` is a throughput-only run: no evaluation, no checkpoints, nothing saved.
    """
    from headtohead.adapters import LoadContext, create_adapter
    from headtohead.engines.train import TrainHooks, output_names, resume_settings, train_model
    from headtohead.engines.train_state import save_trained_model

    context = LoadContext(label_names=splits.eval.label_names, modality=splits.eval.modality, device=device,
                          seed=seed, base_dir=base_dir)
    start = time.perf_counter()
    adapter = create_adapter(model, context)
    load_time = time.perf_counter() - start
    epochs_total = config.epochs if config.max_steps is None else None
    main = dist is None or dist.is_main
    show = (lambda r: say(_epoch_line(model.name, seed, epochs_total, r))) if main and keep else None
    hooks = TrainHooks(on_epoch=show)
    run = train_model(adapter, splits.train, config, seed=seed, eval_data=splits.eval if keep else None,
                      eval_batch_size=eval_batch_size,
                      checkpoint_dir=out / "checkpoints" / model.name / f"seed-{seed}" if keep else None,
                      hooks=hooks, dist=dist, load_time_s=load_time)
    if not main or not keep:
        return run
    folder = out / "models" / model.name / f"seed-{seed}"
    target = save_trained_model(adapter, folder, output_names=output_names(adapter, splits.eval.label_names),
                                extra={"seed": seed, "experiment_seed": exp_seed, "epochs": len(run.epochs),
                                       "optimizer_steps": run.optimizer_steps, "order_hash": run.order_hash})
    run = run.model_copy(update={"saved_to": str(target.resolve())})
    settings = resume_settings(model, splits.train, config, seed=seed, world_size=run.world_size)
    write_text_atomic(folder / FINISHED_FILE, json.dumps({"settings": settings, "run": run.model_dump(mode="json")}))
    # The weights are saved and the run recorded: the epoch checkpoints (weights plus optimizer
    # state, three times the model's size) are no longer needed to resume.
    shutil.rmtree(out / "checkpoints" / model.name / f"seed-{seed}", ignore_errors=True)
    return run


def _finished_run(model: ModelConfig, splits: Any, config: TrainConfig, seed: int, world_size: int,
                  out: Path) -> TrainingRun | None:
    """The record of a training of this model and seed that already finished with the same settings."""
    from headtohead.engines.train import resume_settings

    marker = out / "models" / model.name / f"seed-{seed}" / FINISHED_FILE
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


def run_training_job(job: Mapping[str, Any]) -> dict[str, Any]:
    """Train one model with one seed as described by ``job`` (a torchrun worker's task).

    Returns
    -------
    dict
        The :class:`TrainingRun` as JSON (rank 0's is the one that counts).
    """
    from headtohead.data import create_dataset
    from headtohead.engines.train_ddp import dist_context_from_env, init_process_group

    config = TrainConfig.model_validate(job["train"])
    dist = dist_context_from_env(config.ddp_backend, job["device"])
    device = f"cuda:{dist.local_rank}" if dist is not None and job["device"].startswith("cuda") else job["device"]
    if dist is not None:
        init_process_group(dist)
    data = DataConfig.model_validate(job["data"])
    splits = create_dataset(data, seed=job["experiment_seed"])
    run = _train_one(ModelConfig.model_validate(job["model"]), data=data, splits=splits, config=config,
                     seed=job["seed"], exp_seed=job["experiment_seed"], device=device, base_dir=Path(job["base_dir"]),
                     out=Path(job["out"]), eval_batch_size=job["eval_batch_size"], dist=dist,
                     say=lambda line: print(line, flush=True))
    return run.model_dump(mode="json")


@contextlib.contextmanager
def _threads_like_torchrun(device: str) -> Iterator[None]:
    """Give the reference run the CPU threads of one torchrun worker, so the ratio compares like with like.

    torchrun starts every worker with ``OMP_NUM_THREADS=1`` unless the variable is set.
    """
    import torch

    before = torch.get_num_threads()
    if device == "cpu":
        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS") or 1))
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _launch_parallel(model: ModelConfig, *, data: DataConfig, splits: Any, config: TrainConfig, seed: int,
                     exp_seed: int, device: str, base_dir: Path, out: Path, eval_batch_size: int,
                     say: Callable[[str], None]) -> TrainingRun:
    """A single-process reference run (for the scaling efficiency), then the DDP run via torchrun."""
    from headtohead.engines.train_ddp import launch

    reference = None
    if config.scaling_steps:
        warm = min(config.timing_warmup_steps, config.scaling_steps - 1)
        ref_config = config.model_copy(update={"max_steps": config.scaling_steps, "nproc": 1, "resume": False,
                                               "eval_each_epoch": False, "target": None, "timing_warmup_steps": warm})
        say(f"  {model.name} (seed {seed}): {config.scaling_steps} single-process reference steps for the scaling "
            f"efficiency")
        with _threads_like_torchrun(device):
            ref = _train_one(model, data=data, splits=splits, config=ref_config, seed=seed, exp_seed=exp_seed,
                             device=device, base_dir=base_dir, out=out, eval_batch_size=eval_batch_size, dist=None,
                             say=lambda _: None, keep=False)
        reference = ref.samples_per_s
    job = {"model": model.model_dump(mode="json"), "data": data.model_dump(mode="json"),
           "train": config.model_dump(mode="json"), "seed": seed, "experiment_seed": exp_seed, "device": device,
           "base_dir": str(base_dir), "out": str(out), "eval_batch_size": eval_batch_size}
    say(f"  {model.name} (seed {seed}): data-parallel training in {config.nproc} processes (torchrun)")
    output = launch(job, nproc=config.nproc, workdir=out / "ddp" / model.name / f"seed-{seed}")
    run = TrainingRun.model_validate(output["run"])
    for record in run.epochs:
        say(_epoch_line(model.name, seed, len(run.epochs), record))
    if reference and run.samples_per_s:
        scaling = ScalingRecord(world_size=run.world_size, reference_samples_per_s=reference,
                                samples_per_s=run.samples_per_s)
        run = run.model_copy(update={"scaling": scaling})
    return run


def _absolute_data(exp: Experiment, base_dir: Path) -> DataConfig:
    from headtohead.per_model import absolute_data_paths

    return absolute_data_paths(exp.data, base_dir)


def train_experiment(experiment: Experiment | str | Path | Mapping[str, Any], *, out_dir: str | Path | None = None,
                     overrides: Sequence[str] = (), on_event: Callable[[str], None] | None = None,
                     progress: Any = None) -> TrainOutcome:
    """Train every model of ``experiment`` identically (per seed), save them, then compare them.

    Parameters
    ----------
    experiment : Experiment, path or mapping
        An experiment with a ``train:`` section (defaults apply without one) and training
        data (``data.train`` or ``data.split``).
    out_dir : str or Path, optional
        Output folder (default ``runs/<name>``): ``models/``, ``checkpoints/``,
        ``training.json``, ``experiment.yaml``, ``results.json``, ``predictions.npz``.
    overrides : sequence of str
        ``--set`` strings (``train.epochs=1``, ``models.bert.max_length=64`` …).
    on_event : callable, optional
        Receives one line of text per milestone (epochs, finished models, warnings).
    progress : callable, optional
        Evaluation progress callback of :func:`headtohead.run`.

    Returns
    -------
    TrainOutcome

    Raises
    ------
    H2HError
        Invalid experiment, no training data, a model that cannot be trained, a device
        without the requested precision, or a checkpoint made with other settings.
    """
    from headtohead.data import create_dataset
    from headtohead.runtime.devices import resolve_device
    from headtohead.engines.train_ddp import dist_context_from_env, init_process_group
    from headtohead.results.environment import capture_environment
    from headtohead.runner import check_writable

    say = on_event or (lambda line: None)
    exp, config, base_dir = load_train_experiment(experiment, overrides)
    _check_trainable(exp)
    out = Path(out_dir) if out_dir is not None else Path("runs") / exp.name
    check_writable(out)  # before hours of training, not after
    device = resolve_device(config.device or exp.eval.device)
    dist = dist_context_from_env(config.ddp_backend, device)
    if dist is not None:
        init_process_group(dist)
        device = f"cuda:{dist.local_rank}" if device.startswith("cuda") else device
    data = _absolute_data(exp, base_dir)
    splits = create_dataset(data, seed=exp.seed)
    if splits.train is None:
        raise DataError(f"{data.path}: h2h train needs training data; set data.train (a separate file) or "
                        f"data.split (hold out part of data.path for evaluation)")
    seeds = config.seeds_for(exp.seed)
    world = dist.world_size if dist is not None else config.nproc
    say(f"Training {len(exp.models)} models × {len(seeds)} seed(s) on {len(splits.train)} examples with identical "
        f"order and settings ({_recipe(config, world)}); evaluating on {len(splits.eval)} examples.")
    common = dict(data=data, splits=splits, config=config, exp_seed=exp.seed, device=device, base_dir=base_dir,
                  out=out, eval_batch_size=exp.eval.batch_size, say=say)
    runs: list[TrainingRun] = []
    for seed in seeds:
        for model in exp.models:
            run = _finished_run(model, splits, config, seed, world, out)
            if run is not None:
                say(f"  {model.name} (seed {seed}): already trained with these settings in {run.saved_to}; "
                    f"reusing it (set train.resume: false to train again)")
            elif config.nproc > 1 and dist is None:
                run = _launch_parallel(model, seed=seed, **common)
            else:
                run = _train_one(model, seed=seed, dist=dist, **common)
            runs.append(run)
            if dist is None or dist.is_main:
                say(_run_line(run))
                for warning in run.warnings:
                    log.warning("%s", warning)
    summary = _summary(config, splits, seeds, runs)
    if dist is not None and not dist.is_main:
        return TrainOutcome(training=summary, run=None, out_dir=out, experiment={})
    created = datetime.now(timezone.utc).isoformat(timespec="seconds")
    environment = capture_environment(base_dir)
    record = TrainingResult(headtohead_version=_version(), name=exp.name, created_at=created,
                            environment=environment, training=summary)
    save_training_result(record, out / TRAINING_FILE)
    saved = {r.model: r.saved_to for r in runs if r.seed == seeds[0]}
    final = eval_experiment(exp, data, saved)  # type: ignore[arg-type]
    write_text_atomic(out / "experiment.yaml", yaml.safe_dump(final, sort_keys=False))
    say(f"Comparing the trained models (seed {seeds[0]}) on {len(splits.eval)} examples: h2h run "
        f"{out / 'experiment.yaml'}")
    return TrainOutcome(training=summary, run=_compare(final, out, summary, progress), out_dir=out, experiment=final)


def _recipe(config: TrainConfig, world: int) -> str:
    length = f"{config.max_steps} steps" if config.max_steps else f"{config.epochs} epochs"
    parts = [length, f"batch {config.batch_size}" + (f"×{world} processes" if world > 1 else ""),
             f"AdamW lr {config.learning_rate:g}", config.precision]
    if config.gradient_accumulation_steps > 1:
        parts.append(f"accumulate {config.gradient_accumulation_steps}")
    return ", ".join(parts)


def _summary(config: TrainConfig, splits: Any, seeds: list[int], runs: list[TrainingRun]) -> TrainingSummary:
    summary = TrainingSummary(settings=config.model_dump(mode="json"), train_source=splits.train.source,
                              n_train=len(splits.train), train_fingerprint=splits.train.fingerprint(),
                              eval_fingerprint=splits.eval.fingerprint(), seeds=seeds, runs=runs,
                              multi_seed=_seed_summary(runs, seeds))
    if not summary.identical_order():
        # Cannot happen with one trainer; kept as a guard the results file can prove.
        summary = summary.model_copy(update={"warnings": ["models of the same seed saw different example orders"]})
    return summary


def _compare(final: dict[str, Any], out: Path, summary: TrainingSummary, progress: Any) -> Any:
    """Run the ordinary comparison on the trained weights; keep the training record in results.json."""
    from headtohead.results import save_result
    from headtohead.results.records import RunResult
    from headtohead.runner import RESULTS_FILE, run

    # resume=True: a comparison interrupted earlier re-uses its finished models (keys include the weights' stamps).
    outcome = run(final, out_dir=out, progress=progress, resume=True)
    if "training" in RunResult.model_fields:
        outcome.result = outcome.result.model_copy(update={"training": summary})
        save_result(outcome.result, out / RESULTS_FILE)
    return outcome


def _version() -> str:
    import headtohead

    return headtohead.__version__
