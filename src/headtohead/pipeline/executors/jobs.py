"""The plain, picklable data that travels between the main process and the workers.

A worker receives an :class:`EvalJob` (the run: the resolved experiment as a dict, the base
folder, the batch plan's order) and a :class:`Task` (which model, which shard) and sends back a
:class:`TaskResult` (arrays and numbers) or a :class:`TaskFailure`. Nothing here holds a
model, a tensor or an open file, so the same objects go through ``multiprocessing`` pipes
and Ray's object store alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from headtohead.adapters.labels import LabelAlignment
from headtohead.config.schema import DataConfig, Experiment
from headtohead.data.base import Dataset
from headtohead.engines.batching import BatchPlan
from headtohead.errors import ConfigError, DataError, DeviceError, H2HError, ModelError, ResultsError
from headtohead.pipeline.executors.sharding import Shard
from headtohead.results.records import Environment

if TYPE_CHECKING:
    from headtohead.pipeline.setup import RunSetup

__all__ = ["EvalJob", "Unit", "run_units", "Task", "WorkerSettings", "TaskResult", "TaskFailure", "error_from_name"]

_ERRORS: dict[str, type[H2HError]] = {
    c.__name__: c for c in (H2HError, ConfigError, DataError, ModelError, DeviceError, ResultsError)
}


@dataclass(frozen=True, eq=False)  # holds arrays: compared and hashed by identity
class EvalJob:
    """What every task of one run shares.

    Attributes
    ----------
    experiment : dict
        ``Experiment.model_dump(mode="json")`` with ``data`` paths already absolute: each
        worker re-creates the dataset from these paths (data reaches workers by path).
    base_dir : str
        Folder relative model paths are read from (the experiment file's folder).
    order : ndarray of int64
        The batch plan's example order; shards are slices of it.
    batch_size : int
        The batch plan's batch size.
    dataset_fingerprint : str or None
        :meth:`Dataset.fingerprint` of the main process's data; a worker that reads
        different data (another file at the same path on another node) refuses to go on.
    measure_speed : bool
        Time each model in its worker (``execution.speed: workers``; see
        :func:`~headtohead.pipeline.executors.fairness.check_fairness` first).
    deterministic : bool
        Run under torch's deterministic algorithms (``--deterministic``), as the main process does.
    offline : bool
        No network attempt in the worker (``--offline``): a Ray worker does not inherit the
        main process's environment, so the switch travels with the job.
    """

    experiment: dict[str, Any]
    base_dir: str
    order: np.ndarray
    batch_size: int
    dataset_fingerprint: str | None = None
    measure_speed: bool = False
    deterministic: bool = False
    offline: bool = False

    @classmethod
    def from_setup(cls, setup: RunSetup, *, measure_speed: bool = False, offline: bool = False) -> EvalJob:
        """The job of a run prepared by :func:`headtohead.pipeline.setup.prepare_run` (absolute data paths, plan,
        fingerprint, ``deterministic``).

        Parameters
        ----------
        setup : RunSetup
            The run's setup in the main process.
        measure_speed, offline : bool
            See the class attributes.

        Returns
        -------
        EvalJob
        """
        job = cls.build(setup.experiment, setup.base_dir, setup.plan, data=setup.data, measure_speed=measure_speed)
        return replace(job, dataset_fingerprint=setup.fingerprint, deterministic=setup.deterministic, offline=offline)

    @classmethod
    def build(
        cls,
        experiment: Experiment,
        base_dir: str | Path,
        plan: BatchPlan,
        *,
        data: DataConfig | None = None,
        dataset: Dataset | None = None,
        measure_speed: bool = False,
    ) -> EvalJob:
        """Make the job of a run the way :func:`headtohead.run` sets it up.

        Parameters
        ----------
        experiment : Experiment
            The validated experiment.
        base_dir : str or Path
            The experiment file's folder.
        plan : BatchPlan
            The run's one batch plan.
        data : DataConfig, optional
            ``experiment.data`` with absolute paths (the runner's resolved copy); default
            ``experiment.data``, whose paths must then be absolute already.
        dataset : Dataset, optional
            The evaluation split the main process loaded; its fingerprint is checked in every worker.
        measure_speed : bool
            See the class attributes.

        Returns
        -------
        EvalJob
        """
        exp = experiment if data is None else experiment.model_copy(update={"data": data})
        return cls(
            experiment=exp.model_dump(mode="json"),
            base_dir=str(Path(base_dir).resolve()),
            order=np.asarray(plan.order, dtype=np.int64),
            batch_size=int(plan.batch_size),
            dataset_fingerprint=dataset.fingerprint() if dataset is not None else None,
            measure_speed=measure_speed,
        )

    @property
    def plan(self) -> BatchPlan:
        """The run's batch plan."""
        return BatchPlan(self.order, self.batch_size)

    def model_names(self) -> list[str]:
        """The experiment's model names, in order."""
        return [str(m["name"]) for m in self.experiment["models"]]


@dataclass(frozen=True)
class Unit:
    """One unit of work of a run: a model measured once, or one pass of a model measured several ways.

    Each is run as a model is (the same plan and order, seeds reset before it loads), saved when it
    finishes and re-used by ``--resume`` on its own.
    """

    model: str
    #: The pass (from 0) of a model measured several ways; ``None``: the model is measured once.
    pass_index: int | None = None
    #: The pass's key (``p1`` …).
    key: str | None = None

    @property
    def label(self) -> str:
        """``bert``, or ``llm@p2`` for a pass, for messages and file names."""
        return self.model if self.key is None else f"{self.model}@{self.key}"


def run_units(experiment: Experiment, models: Sequence[str] | None = None) -> list[Unit]:
    """The units of work of ``models`` (default: all of the experiment's), model by model, each's passes in order.

    A model built from others (a cascade, ``ModelConfig.parts``) is no unit: nothing runs it.
    """
    names = [m.name for m in experiment.models] if models is None else list(models)
    units = []
    for name in names:
        if experiment.model(name).parts():  # built from other models once they ran (pipeline/cascade.py)
            continue
        specs = experiment.model(name).pass_specs()
        units.extend([Unit(name, p.index, p.key) for p in specs] if specs else [Unit(name)])
    return units


@dataclass(frozen=True)
class Task:
    """One piece of work: one model (or one pass of it) over one shard of the plan."""

    model: str
    shard: Shard
    measure_speed: bool = False
    #: This shard's share of its model's bound on requests in flight (see :mod:`.concurrency`); ``None`` for a
    #: model that sends none.
    request_share: int | None = None
    #: The pass of a model measured several ways (from 0; ``None``: measured once).
    pass_index: int | None = None
    pass_key: str | None = None

    @property
    def unit(self) -> Unit:
        """The unit of work this task is (a part of)."""
        return Unit(self.model, self.pass_index, self.pass_key)

    @property
    def label(self) -> str:
        """``bert``, ``llm@p2`` or ``bert [shard 2/4]``, for messages."""
        if self.shard.count == 1:
            return self.unit.label
        return f"{self.unit.label} [shard {self.shard.index + 1}/{self.shard.count}]"


@dataclass(frozen=True)
class WorkerSettings:
    """How a worker is set up: its device, its CPU cores and its torch threads.

    Attributes
    ----------
    device : str
        ``cpu``, ``cuda:N``, ``mps`` (or ``auto`` for the local executor).
    cpu_set : tuple of int, optional
        Cores the worker process is pinned to (Linux ``sched_setaffinity``).
    threads : int, optional
        torch intra-op threads; ``None`` leaves torch's setting.
    """

    device: str = "cpu"
    cpu_set: tuple[int, ...] | None = None
    threads: int | None = None

    def describe(self) -> str:
        """``cuda:1`` or ``cpu (cores 0-3, 4 threads)``."""
        parts = []
        if self.cpu_set is not None:
            parts.append(f"cores {_ranges(self.cpu_set)}")
        if self.threads is not None:
            parts.append(f"{self.threads} thread{'s' if self.threads != 1 else ''}")
        return f"{self.device} ({', '.join(parts)})" if parts else self.device


@dataclass(frozen=True, eq=False)  # holds arrays: compared and hashed by identity
class TaskResult:
    """What a worker sends back after a task: plain arrays and numbers.

    ``order`` is the indices the worker evaluated (the shard's slice of the plan), ``pred``
    and ``proba`` its predictions in that order and dataset label order; ``started_at`` the
    wall-clock time (``time.time()``) its pass began, ``seconds`` how long the pass took;
    ``environment`` the worker's fingerprint (``None`` in this process: the run records its own).
    """

    task: Task
    order: np.ndarray
    pred: np.ndarray
    proba: np.ndarray | None  # None: the model stored no probabilities (kind predictions)
    alignment: LabelAlignment
    n_batches: int
    seconds: float
    started_at: float
    load_time_s: float
    num_parameters: int | None
    parameter_bytes: int | None
    device: str
    worker: str
    environment: Environment | None
    warnings: tuple[str, ...] = ()
    #: Out-of-memory back-offs of the pass (batch positions within the shard's plan).
    backoff: tuple[Any, ...] = ()
    speed: dict[str, Any] | None = field(default=None, repr=False)
    #: The loaded model itself, only when the task ran in this process (``local``): kept for the speed pass.
    adapter: Any = field(default=None, repr=False)
    #: An LLM's answers on the shard: what could not be read, tokens, an endpoint's requests (an ``AnswersRecord``).
    answers: Any = field(default=None, repr=False)


@dataclass(frozen=True)
class TaskFailure:
    """A task that raised: the error's class name and one-line message, and where it ran."""

    task: Task
    error_type: str
    message: str
    worker: str

    @property
    def user_error(self) -> bool:
        """Whether the worker raised one of headtohead's user errors (else it crashed)."""
        return self.error_type in _ERRORS

    def to_exception(self) -> H2HError:
        """The error to raise in the main process: the worker's own class for user errors, else a ModelError."""
        if self.user_error:
            return error_from_name(self.error_type, self.message)
        return ModelError(
            f"model '{self.task.unit.label}' failed in worker {self.worker}: {self.error_type}: {self.message}"
        )


def error_from_name(name: str, message: str) -> H2HError:
    """Re-create a headtohead error from its class name (``ModelError``) and message."""
    return _ERRORS.get(name, H2HError)(message)


def _ranges(cores: tuple[int, ...]) -> str:
    """``(0, 1, 2, 5)`` → ``0-2,5``."""
    spans: list[str] = []
    start = prev = cores[0]
    for core in (*cores[1:], None):
        if core is not None and core == prev + 1:
            prev = core
            continue
        spans.append(f"{start}-{prev}" if prev != start else str(start))
        if core is not None:
            start = prev = core
    return ",".join(spans)
