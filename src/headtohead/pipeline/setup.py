"""What every model of a run shares: the experiment (validated once), the data, the batch plan, the device.

:func:`resolve_experiment` validates an experiment given as a file, a dict or a record, once
per command; :func:`prepare_run` loads the data, checks the models' input files against it
(:func:`check_model_inputs`, before anything imports torch), resolves the device, seeds, and makes
the one batch plan. An executor that evaluates models in other processes needs exactly a
:class:`RunSetup` (as plain data: :class:`~headtohead.pipeline.executors.jobs.EvalJob`) and a
:class:`~headtohead.config.schema.ModelConfig` per task.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from headtohead.adapters import LoadContext, adapter_class
from headtohead.adapters.prompting import check_prompt_data
from headtohead.config import Experiment, experiment_from_dict, load_experiment
from headtohead.config.models import ModelConfig, family
from headtohead.config.models.prompting import PromptSettings
from headtohead.config.schema import DataConfig
from headtohead.data import Dataset, DataSplits
from headtohead.data.hf import parse_hf_spec
from headtohead.data.logged import is_logs
from headtohead.engines.batching import BatchPlan
from headtohead.engines.planning import plan_evaluation
from headtohead.engines.seeding import seed_everything
from headtohead.pipeline.logged_data import run_splits
from headtohead.results import DatasetRecord
from headtohead.runtime.devices import resolve_device
from headtohead.version import __version__

__all__ = [
    "RunSetup",
    "InMemory",
    "prepare_run",
    "resolve_experiment",
    "absolute_data_paths",
    "dataset_record",
    "load_context",
    "check_model_inputs",
]

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

    def experiment_model_names(self) -> list[str]:
        """The experiment's model names, in order."""
        return [m.name for m in self.experiment.models]

    @functools.cached_property
    def fingerprint(self) -> str:
        """SHA-256 of the evaluation data (computed once; hashing 100k texts takes a moment)."""
        return self.dataset.fingerprint()

    def key_facts(self) -> dict[str, Any]:
        """What the run contributes to each model's resume key (see :mod:`headtohead.pipeline.resume`)."""
        return {
            "data": self.data.model_dump(mode="json"),
            "fingerprint": self.fingerprint,
            "seed": self.experiment.seed,
            "eval": self.experiment.eval.model_dump(mode="json"),
            "device": self.context.device,
            "plan": self.plan.hash(),
            "deterministic": self.deterministic,
            "version": self.version,
        }

    @property
    def version(self) -> str:
        """The headtohead version (recorded in results and in resume keys)."""
        return __version__


@dataclass(frozen=True)
class InMemory:
    """Data and models handed over as Python objects (:func:`headtohead.compare`) instead of files.

    Attributes
    ----------
    splits : DataSplits, optional
        The data, used instead of reading ``data.path``.
    objects : mapping of str to object
        Models by name (a torch module, a callable, a fitted estimator, a table of predictions),
        used instead of reading their ``source`` (see :class:`~headtohead.adapters.base.LoadContext`).
    """

    splits: DataSplits | None = None
    objects: Mapping[str, Any] = dataclasses.field(default_factory=dict)


def load_context(
    dataset: Dataset,
    data: DataConfig,
    *,
    device: str,
    seed: int,
    base_dir: Path,
    objects: Mapping[str, Any] | None = None,
    train: Dataset | None = None,
    response_cache: bool = True,
) -> LoadContext:
    """What every model of a run may know when it loads (in this process or in a worker)."""
    return LoadContext(
        label_names=dataset.label_names,
        modality=dataset.modality,
        device=device,
        seed=seed,
        base_dir=base_dir,
        id_column=data.id_column or "id",
        partial_data=data.limit is not None or data.split is not None,
        objects=dict(objects or {}),
        train=train,
        response_cache=response_cache,
    )


def resolve_experiment(
    experiment: Experiment | str | Path | Mapping[str, Any],
    overrides: Sequence[str] = (),
    base_dir: str | Path | None = None,
) -> tuple[Experiment, Path]:
    """Validate ``experiment`` and return it with the folder its relative paths are read from.

    Parameters
    ----------
    experiment : Experiment, path or mapping
        A YAML file, a dict of the same shape, or a validated record.
    overrides : sequence of str
        ``key.path=value`` strings (``--set``).
    base_dir : str or Path, optional
        The folder of relative paths for a dict or a record (default: the current
        directory); a YAML file's paths are always read from its own folder.

    Returns
    -------
    (Experiment, Path)
    """
    if isinstance(experiment, (str, Path)):
        path = Path(experiment)
        return load_experiment(path, overrides), path.resolve().parent
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    if isinstance(experiment, Experiment):
        if overrides:
            return experiment_from_dict(experiment.model_dump(), overrides=overrides), base
        return experiment, base
    return experiment_from_dict(experiment, overrides=overrides), base


def absolute_data_paths(data: DataConfig, base_dir: Path) -> DataConfig:
    """Make file paths in ``data`` absolute against ``base_dir`` (schemes like ``sklearn:`` pass)."""

    def absolute(spec: str | None) -> str | None:
        if spec is None or spec.startswith("sklearn:") or is_logs(spec):
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


def prepare_run(
    exp: Experiment,
    base_dir: Path,
    *,
    quality: bool = True,
    deterministic: bool = False,
    in_memory: InMemory | None = None,
    response_cache: bool = True,
) -> RunSetup:
    """Load the data and check the models' input files against it; then resolve the device, seed everything
    and make the batch plan every model shares.

    The inputs come first: a mistake in the data or in a prediction file is one line before the
    automatic device and the random state import torch (a GPU asked for by name is checked at once).
    ``in_memory`` gives the data and models as objects (:func:`headtohead.compare`);
    ``response_cache=False`` asks endpoints again instead of reading their cached answers.
    """
    named = None if exp.eval.device == "auto" else resolve_device(exp.eval.device)
    data = absolute_data_paths(exp.data, base_dir)
    if in_memory is not None and in_memory.splits is not None:
        splits = in_memory.splits
    else:
        with _warnings_only_on_success():
            splits = run_splits(exp, data, base_dir)
    for reason, count in splits.eval.skipped.items():
        log.warning("%s: skipped %d example(s): %s", splits.eval.source, count, reason)
    dataset = splits.eval
    for model in exp.models:  # label_display and the columns a template reads, before any model runs
        if isinstance(model, PromptSettings):
            check_prompt_data(model, dataset, splits.train)
    context = load_context(
        dataset,
        exp.data,
        device=named or "cpu",  # the run's device once resolved, below; the input checks use none
        seed=exp.seed,
        base_dir=base_dir,
        objects=in_memory.objects if in_memory is not None else None,
        train=splits.train,
        response_cache=response_cache,
    )
    check_model_inputs(exp.models, context, dataset)
    context = dataclasses.replace(context, device=named or resolve_device(exp.eval.device))
    if exp.eval.num_threads:
        import torch

        torch.set_num_threads(exp.eval.num_threads)
    seed_everything(exp.seed)
    plan = plan_evaluation(dataset, exp.eval.batch_size, seed=exp.seed, models=exp.models, context=context)
    return RunSetup(exp, base_dir, data, splits, plan, context, quality=quality, deterministic=deterministic)


def check_model_inputs(models: Sequence[ModelConfig], context: LoadContext, dataset: Dataset) -> None:
    """Each family's check of its models' input files against the data (``ModelAdapter.check_inputs``), every pass.

    The families of the base install come first: their adapters import no torch, so a bad prediction
    file is named before another family's adapter module brings it in. A model that cannot read the
    data's modality is left to its load, which says so.
    """
    for model in sorted(models, key=lambda m: family(m.kind).extra is not None):  # stable: the run's order within
        if context.modality not in family(model.kind).modalities:
            continue
        passes: list[int | None] = [spec.index for spec in model.pass_specs()] or [None]
        for index in passes:
            adapter_class(model.kind).check_inputs(model, dataclasses.replace(context, pass_index=index), dataset)


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
