"""``headtohead.run``: the whole comparison, from an experiment to saved results.

The data flows one way: config → dataset → model adapters → engines → results (→
statistics → reports). This module only sequences those stages; each lives in its own
package. Results are written after every model, atomically, so an error or an interrupt
keeps what has finished.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from headtohead.adapters import LoadContext, ModelAdapter, create_adapter
from headtohead.config import Experiment, experiment_from_dict, load_experiment
from headtohead.config.schema import DataConfig, ModelConfig
from headtohead.data import Dataset, DataSplits, create_dataset
from headtohead.data.hf import parse_hf_spec
from headtohead.devices import resolve_device
from headtohead.engines.batching import BatchPlan, plan_batches
from headtohead.engines.evaluate import Evaluation, ProgressCallback, evaluate_model
from headtohead.engines.seeding import seed_everything
from headtohead.errors import H2HError
from headtohead.metrics import compute_quality
from headtohead.results import (
    DatasetRecord,
    ModelRecord,
    Predictions,
    RunResult,
    save_result,
)
from headtohead.results.comparison import StatsSummary
from headtohead.results.environment import capture_environment
from headtohead.results.speed import SpeedSummary

__all__ = ["run", "Run", "resolve_experiment", "RESULTS_FILE", "PREDICTIONS_FILE"]

log = logging.getLogger("headtohead")

RESULTS_FILE = "results.json"
PREDICTIONS_FILE = "predictions.npz"


@dataclass
class Run:
    """What :func:`run` returns: the result record, the predictions, and where they were saved."""

    result: RunResult
    predictions: Predictions
    out_dir: Path | None


def resolve_experiment(experiment: Experiment | str | Path | Mapping[str, Any], overrides: Sequence[str] = (),
                       ) -> tuple[Experiment, Path]:
    """Validate ``experiment`` and return it with the folder its relative paths are read from.

    A YAML path is read from its own folder; a dict or an :class:`Experiment` from the
    current directory.
    """
    if isinstance(experiment, (str, Path)):
        path = Path(experiment)
        return load_experiment(path, overrides), path.resolve().parent
    if isinstance(experiment, Experiment):
        if overrides:
            return experiment_from_dict(experiment.model_dump(), overrides=overrides), Path.cwd()
        return experiment, Path.cwd()
    return experiment_from_dict(experiment, overrides=overrides), Path.cwd()


def _absolute_data_paths(data: DataConfig, base_dir: Path) -> DataConfig:
    """Make file paths in ``data`` absolute against ``base_dir`` (schemes like ``sklearn:`` pass)."""

    def absolute(spec: str | None) -> str | None:
        if spec is None or spec.startswith("sklearn:"):
            return spec
        if spec.startswith("hf:"):
            source, split = parse_hf_spec(spec)
            local = base_dir / source
            if Path(source).is_absolute() or not local.exists():
                return spec  # a hub name, or already absolute
            return f"hf:{local}" + (f":{split}" if split else "")
        path = Path(spec).expanduser()
        return str(path if path.is_absolute() else base_dir / path)

    return data.model_copy(update={"path": absolute(data.path), "train": absolute(data.train)})


def run(experiment: Experiment | str | Path | Mapping[str, Any], *, out_dir: str | Path | None = None,
        overrides: Sequence[str] = (), progress: ProgressCallback | None = None, quality: bool = True,
        speed: bool | None = None) -> Run:
    """Compare the experiment's models on identical data.

    Parameters
    ----------
    experiment : Experiment, path or mapping
        The experiment: a validated record, a YAML file, or a dict of the same shape.
    out_dir : str or Path, optional
        Folder for ``results.json`` and ``predictions.npz``; nothing is written when ``None``.
    overrides : sequence of str
        ``key.path=value`` overrides (as ``--set`` on the command line).
    progress : callable, optional
        ``progress(task, done, total)`` — a model's quality pass, or a speed stage.
    quality : bool
        Run the quality pass and the statistics (``h2h bench`` turns this off).
    speed : bool, optional
        Measure speed and memory; ``None`` follows ``speed.enabled`` of the experiment.

    Returns
    -------
    Run
        The :class:`~headtohead.results.RunResult`, the per-example predictions and the output folder.

    Raises
    ------
    H2HError
        Invalid experiment, data or model. Models that finished before the error are
        already saved in ``out_dir``.

    Examples
    --------
    >>> import headtohead
    >>> outcome = headtohead.run({                                      # doctest: +SKIP
    ...     "data": {"path": "sklearn:iris"},
    ...     "models": [{"name": "a", "kind": "sklearn", "source": "a.skops"},
    ...                {"name": "b", "kind": "sklearn", "source": "b.skops"}]})
    >>> outcome.result.model("a").quality.accuracy                     # doctest: +SKIP
    """
    exp, base_dir = resolve_experiment(experiment, overrides)
    out = Path(out_dir) if out_dir is not None else None
    measure_speed_too = exp.speed.enabled if speed is None else speed
    device = resolve_device(exp.eval.device)
    if exp.eval.num_threads:
        import torch

        torch.set_num_threads(exp.eval.num_threads)
    seed_everything(exp.seed)
    splits = create_dataset(_absolute_data_paths(exp.data, base_dir), seed=exp.seed)
    for reason, count in splits.eval.skipped.items():
        log.warning("%s: skipped %d example(s): %s", splits.eval.source, count, reason)
    dataset = splits.eval
    plan = plan_batches(len(dataset), exp.eval.batch_size)
    predictions = Predictions(order=plan.order, y_true=dataset.labels[plan.order], label_names=dataset.label_names)
    result = RunResult(
        headtohead_version=_version(),
        name=exp.name,
        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        experiment=exp.model_dump(mode="json"),
        environment=capture_environment(base_dir),
        dataset=_dataset_record(splits),
        models=[],
    )
    context = LoadContext(label_names=dataset.label_names, modality=dataset.modality, device=device,
                          seed=exp.seed, base_dir=base_dir)
    kept: dict[str, tuple[ModelAdapter, float]] = {}  # loaded models, held for the speed pass
    records: list[ModelRecord] = []
    for model_cfg in exp.models:
        try:
            adapter, load_time = _load(model_cfg, context)
            evaluation = evaluate_model(adapter, dataset, plan, progress=progress) if quality else None
        except H2HError as exc:
            if records and out is not None:
                exc.args = (f"{exc.args[0]} (results of {', '.join(r.name for r in records)} are kept in {out})",)
            raise
        records.append(_model_record(model_cfg, adapter, load_time, plan, evaluation, predictions))
        for warning in adapter.warnings:
            log.warning("%s", warning)
        if measure_speed_too:
            kept[model_cfg.name] = (adapter, load_time)
        del adapter
        gc.collect()
        result = result.model_copy(update={"models": list(records)})
        if out is not None:
            _save(out, result, predictions if quality else None)
    if quality:
        result = result.model_copy(update={"stats": _analyse(exp, predictions)})
    if measure_speed_too:
        result = result.model_copy(update={"speed": _measure_speed(exp, kept, dataset, progress)})
    if out is not None:
        save_result(result, out / RESULTS_FILE)
    return Run(result=result, predictions=predictions, out_dir=out)


def _load(model_cfg: ModelConfig, context: LoadContext) -> tuple[ModelAdapter, float]:
    seed_everything(context.seed)  # the same random state for every model (fresh heads, dropout …)
    start = time.perf_counter()
    adapter = create_adapter(model_cfg, context)
    return adapter, time.perf_counter() - start


def _analyse(exp: Experiment, predictions: Predictions) -> StatsSummary:
    from headtohead.stats import analyse

    cfg = exp.stats
    return analyse(predictions, alpha=cfg.alpha, n_resamples=cfg.n_resamples, ci_method=cfg.ci_method,
                   ece_bins=cfg.ece_bins, seed=exp.seed)


def _measure_speed(exp: Experiment, kept: Mapping[str, tuple[ModelAdapter, float]], dataset: Dataset,
                   progress: ProgressCallback | None) -> SpeedSummary:
    from headtohead.engines.speed import measure_speed

    adapters = [adapter for adapter, _ in kept.values()]
    load_times = {name: load_time for name, (_, load_time) in kept.items()}
    return measure_speed(adapters, dataset, exp.speed, batch_size=exp.eval.batch_size, seed=exp.seed,
                         load_times=load_times, progress=progress)


def _model_record(model_cfg: ModelConfig, adapter: ModelAdapter, load_time: float, plan: BatchPlan,
                  evaluation: Evaluation | None, predictions: Predictions) -> ModelRecord:
    quality = None
    if evaluation is not None:
        predictions.add(model_cfg.name, evaluation.pred, evaluation.proba)
        quality = compute_quality(predictions.y_true, evaluation.pred, evaluation.proba, predictions.label_names)
    return ModelRecord(
        name=model_cfg.name,
        kind=model_cfg.kind,
        source=model_cfg.source,
        num_parameters=adapter.num_parameters(),
        parameter_bytes=adapter.parameter_bytes(),
        label_alignment=evaluation.alignment.how if evaluation else None,
        label_columns=[int(c) for c in evaluation.alignment.columns] if evaluation else None,
        index_order_hash=plan.hash(),
        batch_size=plan.batch_size,
        device=adapter.device,
        n_batches=len(plan),
        load_time_s=load_time,
        eval_time_s=evaluation.seconds if evaluation else None,
        quality=quality,
        warnings=list(adapter.warnings),
    )


def _dataset_record(splits: DataSplits) -> DatasetRecord:
    data = splits.eval
    return DatasetRecord(
        source=data.source,
        modality=data.modality,
        n_examples=len(data),
        label_names=list(data.label_names),
        class_counts=[int(c) for c in data.class_counts()],
        skipped=dict(data.skipped),
        fingerprint=data.fingerprint(),
        train_source=splits.train.source if splits.train is not None else None,
        n_train=len(splits.train) if splits.train is not None else None,
    )


def _save(out: Path, result: RunResult, predictions: Predictions | None) -> None:
    if predictions is not None:
        predictions.save(out / PREDICTIONS_FILE)
    save_result(result, out / RESULTS_FILE)


def _version() -> str:
    import headtohead

    return headtohead.__version__
