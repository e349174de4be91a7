"""One model's pass of a run, and the setup every model of the run shares.

:func:`prepare_run` resolves the device, seeds, loads the data and makes the one batch
plan; :func:`evaluate_one` loads one model and runs its quality pass, returning its
record and predictions. :mod:`headtohead.runner` sequences these (and saves after each
model); an executor that runs models in other processes needs exactly a
:class:`RunSetup` and a :class:`~headtohead.config.schema.ModelConfig` per call.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from headtohead.adapters import LoadContext, ModelAdapter, create_adapter
from headtohead.config import Experiment, experiment_from_dict, load_experiment
from headtohead.config.schema import DataConfig, ModelConfig
from headtohead.data import Dataset, DataSplits, create_dataset
from headtohead.data.hf import parse_hf_spec
from headtohead.determinism import recording_refusals, refusal_warning
from headtohead.devices import resolve_device
from headtohead.engines.batching import BatchPlan
from headtohead.engines.evaluate import Evaluation, ProgressCallback, evaluate_model
from headtohead.engines.planning import plan_evaluation
from headtohead.engines.seeding import seed_everything
from headtohead.errors import ModelError
from headtohead.faults import is_out_of_memory
from headtohead.metrics import compute_quality
from headtohead.results import DatasetRecord, ModelPredictions, ModelRecord

__all__ = ["RunSetup", "ModelOutcome", "prepare_run", "evaluate_one", "resolve_experiment", "load_model",
           "absolute_data_paths", "dataset_record"]

log = logging.getLogger("headtohead")


@dataclass(frozen=True)
class RunSetup:
    """Everything every model's pass shares: the experiment, the data, the batch plan, the device.

    Made once per run by :func:`prepare_run`; an executor that evaluates models elsewhere
    (another process) needs exactly this plus one :class:`ModelConfig`.
    """

    experiment: Experiment
    base_dir: Path
    data: DataConfig
    splits: DataSplits
    plan: BatchPlan
    context: LoadContext
    quality: bool = True
    deterministic: bool = False

    @property
    def dataset(self) -> Dataset:
        """The evaluation split."""
        return self.splits.eval

    @functools.cached_property
    def fingerprint(self) -> str:
        """SHA-256 of the evaluation data (computed once; hashing 100k texts takes a moment)."""
        return self.dataset.fingerprint()

    def key_facts(self) -> dict[str, Any]:
        """What the run contributes to each model's resume key (see :mod:`headtohead.resume`)."""
        return {"data": self.data.model_dump(mode="json"), "fingerprint": self.fingerprint,
                "seed": self.experiment.seed, "eval": self.experiment.eval.model_dump(mode="json"),
                "device": self.context.device, "plan": self.plan.hash(), "deterministic": self.deterministic,
                "version": self.version}

    @property
    def version(self) -> str:
        """The headtohead version (recorded in results and in resume keys)."""
        import headtohead

        return headtohead.__version__


@dataclass
class ModelOutcome:
    """One model's finished pass: its record, its predictions (``None`` without a quality pass),
    and the loaded adapter when it lives in this process (kept for the speed pass)."""

    record: ModelRecord
    predictions: ModelPredictions | None
    adapter: ModelAdapter | None = None


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


def absolute_data_paths(data: DataConfig, base_dir: Path) -> DataConfig:
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


def prepare_run(exp: Experiment, base_dir: Path, *, quality: bool = True, deterministic: bool = False) -> RunSetup:
    """Resolve the device, seed everything, load the data and make the batch plan every model shares."""
    device = resolve_device(exp.eval.device)
    if exp.eval.num_threads:
        import torch

        torch.set_num_threads(exp.eval.num_threads)
    seed_everything(exp.seed)
    data = absolute_data_paths(exp.data, base_dir)
    with _warnings_only_on_success():
        splits = create_dataset(data, seed=exp.seed)
    for reason, count in splits.eval.skipped.items():
        log.warning("%s: skipped %d example(s): %s", splits.eval.source, count, reason)
    dataset = splits.eval
    context = LoadContext(label_names=dataset.label_names, modality=dataset.modality, device=device,
                          seed=exp.seed, base_dir=base_dir)
    plan = plan_evaluation(dataset, exp.eval.batch_size, seed=exp.seed, models=exp.models, context=context)
    return RunSetup(exp, base_dir, data, splits, plan, context,
                    quality=quality, deterministic=deterministic)


@contextlib.contextmanager
def _warnings_only_on_success() -> Iterator[None]:
    """Hold back the warnings of a block and pass them on only if it succeeds.

    When loading fails, its error line already names what was skipped; a warning about
    skipped rows printed before it would turn one clear line into two.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for item in caught:
        warnings.warn_explicit(item.message, item.category, item.filename, item.lineno, source=item.source)


def evaluate_one(setup: RunSetup, model_cfg: ModelConfig, *, progress: ProgressCallback | None = None
                 ) -> ModelOutcome:
    """Load one model and run its quality pass over the shared batch plan.

    Parameters
    ----------
    setup : RunSetup
        The run's data, plan and device (:func:`prepare_run`).
    model_cfg : ModelConfig
        The model.
    progress : callable, optional
        ``progress(model_name, batches_done, batches_total)``.

    Returns
    -------
    ModelOutcome
        The record, the predictions (``None`` when ``setup.quality`` is off) and the adapter.

    Raises
    ------
    ModelError
        The model cannot be loaded, does not fit the data, or ran out of memory.
    """
    try:
        adapter, load_time = load_model(model_cfg, setup.context)
        evaluation = None
        if setup.quality:
            with recording_refusals(setup.deterministic) as refused:
                evaluation = evaluate_model(adapter, setup.dataset, setup.plan, progress=progress)
            for op in refused:
                adapter.warn(refusal_warning(model_cfg.name, op))
    except Exception as exc:
        if is_out_of_memory(exc):
            raise _out_of_memory(model_cfg, setup, exc) from exc
        raise
    predictions = ModelPredictions(evaluation.pred, evaluation.proba) if evaluation is not None else None
    record = model_record(model_cfg, adapter, load_time, setup, evaluation)
    return ModelOutcome(record, predictions, adapter)


def _out_of_memory(model_cfg: ModelConfig, setup: RunSetup, exc: BaseException) -> ModelError:
    size = setup.plan.batch_size
    smaller = f" (e.g. --set eval.batch_size={max(1, size // 2)})" if size > 1 else ""
    return ModelError(f"model '{model_cfg.name}' ran out of memory on {setup.context.device} at eval.batch_size="
                      f"{size} ({type(exc).__name__}); lower the batch size{smaller} and run again with --resume")


def load_model(model_cfg: ModelConfig, context: LoadContext) -> tuple[ModelAdapter, float]:
    seed_everything(context.seed)  # the same random state for every model (fresh heads, dropout …)
    start = time.perf_counter()
    adapter = create_adapter(model_cfg, context)
    return adapter, time.perf_counter() - start


def model_record(model_cfg: ModelConfig, adapter: ModelAdapter, load_time: float, setup: RunSetup,
                  evaluation: Evaluation | None) -> ModelRecord:
    quality = None
    plan, dataset = setup.plan, setup.dataset
    if evaluation is not None:
        y_true = dataset.labels[plan.order]
        quality = compute_quality(y_true, evaluation.pred, evaluation.proba, dataset.label_names)
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


def dataset_record(splits: DataSplits, fingerprint: str) -> DatasetRecord:
    data = splits.eval
    return DatasetRecord(
        source=data.source,
        modality=data.modality,
        n_examples=len(data),
        label_names=list(data.label_names),
        class_counts=[int(c) for c in data.class_counts()],
        skipped=dict(data.skipped),
        fingerprint=fingerprint,
        train_source=splits.train.source if splits.train is not None else None,
        n_train=len(splits.train) if splits.train is not None else None,
    )
