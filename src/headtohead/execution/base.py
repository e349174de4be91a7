"""The executor interface: evaluate every model of a run somewhere, get one outcome per model back.

An :class:`Executor` turns a run (:class:`~headtohead.execution.jobs.EvalJob`) into tasks —
one per model and shard — runs them (:meth:`Executor._run`, the one method a new executor
implements), and merges each model's shards back into one
:class:`~headtohead.engines.evaluate.Evaluation` in the plan's order. A failing task fails
only its model: the outcome carries the failure, the other models' outcomes are complete.

The runner consumes :class:`ExecutionOutcome` like a loaded adapter: ``outcome.model`` answers
``num_parameters()``, ``parameter_bytes()``, ``device`` and ``warnings``, so the record of a
model evaluated in a worker is built by the same code as one evaluated in-process.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from headtohead.adapters.labels import LabelAlignment
from headtohead.config.execution import ExecutionConfig
from headtohead.engines.evaluate import Evaluation
from headtohead.errors import H2HError
from headtohead.execution.fairness import shared_devices
from headtohead.execution.jobs import EvalJob, Task, TaskFailure, TaskResult
from headtohead.execution.provenance import environment_fingerprint
from headtohead.execution.sharding import ShardMismatch, merge_shards, plan_shards
from headtohead.results.records import Environment

__all__ = ["Executor", "ExecutionOutcome", "LoadedModel", "WorkerInfo", "TaskProgress", "failure_summary"]

#: ``progress(task_label, done, total)``: per batch in-process, per finished task in workers.
TaskProgress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class LoadedModel:
    """What the runner's record needs from a model that was loaded in a worker (adapter-shaped)."""

    name: str
    device: str
    n_parameters: int
    n_parameter_bytes: int
    warnings: tuple[str, ...] = ()

    def num_parameters(self) -> int:
        return self.n_parameters

    def parameter_bytes(self) -> int:
        return self.n_parameter_bytes


@dataclass(frozen=True)
class WorkerInfo:
    """Where one shard of a model ran, with that worker's environment fingerprint.

    :meth:`as_record` gives the fields of the ``WorkerRecord`` stored with the model's result.
    """

    mode: str
    worker: str
    device: str
    shard: int
    n_shards: int
    environment: Environment

    @property
    def fingerprint(self) -> str:
        return environment_fingerprint(self.environment)

    def as_record(self) -> dict[str, Any]:
        """Plain fields for ``results.records.WorkerRecord(**info.as_record())``."""
        return {"mode": self.mode, "worker": self.worker, "device": self.device, "shard": self.shard,
                "n_shards": self.n_shards, "environment_fingerprint": self.fingerprint,
                "environment": self.environment}


@dataclass(frozen=True)
class ExecutionOutcome:
    """One model's merged result, or its failure.

    Attributes
    ----------
    name : str
    evaluation : Evaluation or None
        Merged over shards, aligned with the run's plan order; ``None`` if a task failed.
    model : LoadedModel or None
        Parameter counts, device(s) and warnings of the loaded model.
    load_time_s : float or None
        Load time in the worker of the first shard (each shard's worker loads the model).
    workers : tuple of WorkerInfo
        One per shard that finished.
    speed : dict or None
        The worker's ``SpeedSummary`` as a dict (``execution.speed: workers`` only).
    concurrent_speed : bool
        ``speed`` was measured while other workers shared the device (forced): marked "concurrent".
    failure : TaskFailure or None
        The first failing task of this model.
    """

    name: str
    evaluation: Evaluation | None
    model: LoadedModel | None
    load_time_s: float | None
    workers: tuple[WorkerInfo, ...] = ()
    speed: dict[str, Any] | None = None
    concurrent_speed: bool = False
    failure: TaskFailure | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None

    def error(self) -> H2HError:
        """The failure as the exception to raise (one line); only for failed outcomes."""
        if self.failure is None:
            raise ValueError(f"model '{self.name}' did not fail")
        return self.failure.to_exception()


class Executor(ABC):
    """Runs a run's tasks somewhere; subclasses implement :meth:`_run` (and :meth:`close` if they hold workers).

    Parameters
    ----------
    config : ExecutionConfig
        The ``execution:`` section.
    eval_device : str
        ``eval.device`` of the experiment (``auto`` …), the device when ``devices`` is not set.
    """

    #: The ``execution.mode`` this executor implements.
    mode: ClassVar[str]
    #: Whether tasks run at the same time (a sharded model's wall time is then its slowest shard's).
    concurrent: ClassVar[bool] = True

    def __init__(self, config: ExecutionConfig, *, eval_device: str = "auto") -> None:
        self.config = config
        self.eval_device = eval_device

    def evaluate(self, job: EvalJob, models: Sequence[str] | None = None, *, shards: int | None = None,
                 progress: TaskProgress | None = None) -> list[ExecutionOutcome]:
        """Evaluate ``models`` (default: all of the job's) and return one outcome each, in that order.

        Parameters
        ----------
        job : EvalJob
            The run, built with :meth:`EvalJob.build`.
        models : sequence of str, optional
            Names of the models to evaluate (a subset, e.g. when resuming).
        shards : int, optional
            Parts to cut each model's evaluation into; default ``execution.shards``.
        progress : callable, optional
            ``progress(task_label, done, total)``.

        Returns
        -------
        list of ExecutionOutcome
            Failed models have ``failure`` set; the others are complete.
        """
        names = list(job.model_names() if models is None else models)
        tasks = self.tasks(job, names, shards=shards)
        results = self._run(job, tasks, progress)
        concurrent = job.measure_speed and bool(shared_devices(self.config, eval_device=self.eval_device,
                                                               n_tasks=len(tasks)))
        by_model: dict[str, list[TaskResult | TaskFailure]] = {name: [] for name in names}
        for outcome in results:
            by_model[outcome.task.model].append(outcome)
        return [self._merge(job, name, by_model[name], concurrent) for name in names]

    def tasks(self, job: EvalJob, models: Sequence[str], *, shards: int | None = None) -> list[Task]:
        """One task per model and shard, model by model (shard 0 measures speed when asked)."""
        unknown = [name for name in models if name not in job.model_names()]
        if unknown:
            raise ValueError(f"models {unknown} are not in the job (it has {job.model_names()})")
        parts = plan_shards(len(job.order), job.batch_size, shards or self.config.shards)
        return [Task(model=name, shard=shard, measure_speed=job.measure_speed and shard.index == 0)
                for name in models for shard in parts]

    @abstractmethod
    def _run(self, job: EvalJob, tasks: Sequence[Task], progress: TaskProgress | None,
             ) -> list[TaskResult | TaskFailure]:
        """Run every task; return one result or failure per task (any order). Must not raise for a task's error."""

    def close(self) -> None:
        """Release the workers (no-op unless the executor holds some)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _merge(self, job: EvalJob, name: str, parts: list[TaskResult | TaskFailure], concurrent: bool,
               ) -> ExecutionOutcome:
        failures = [p for p in parts if isinstance(p, TaskFailure)]
        done = sorted((p for p in parts if isinstance(p, TaskResult)), key=lambda r: r.task.shard.index)
        workers = tuple(WorkerInfo(self.mode, r.worker, r.device, r.task.shard.index, r.task.shard.count,
                                   r.environment) for r in done)
        if failures or not done:
            failure = failures[0] if failures else TaskFailure(
                task=Task(name, plan_shards(len(job.order), job.batch_size, 1)[0]), error_type="NoResult",
                message=f"no worker returned a result for model '{name}'", worker=self.mode)
            return ExecutionOutcome(name=name, evaluation=None, model=None, load_time_s=None, workers=workers,
                                failure=failure)
        plan = job.plan
        try:
            pred, proba = merge_shards(plan, [(r.task.shard, r.order, r.pred, r.proba) for r in done])
            alignment = _common_alignment(name, [r.alignment for r in done])
        except ShardMismatch as exc:
            first = done[0]
            broken = TaskFailure(task=first.task, error_type=type(exc).__name__, message=str(exc), worker=first.worker)
            return ExecutionOutcome(name=name, evaluation=None, model=None, load_time_s=None, workers=workers,
                                failure=broken)
        evaluation = Evaluation(pred=pred, proba=proba, alignment=alignment, plan_hash=plan.hash(),
                                n_batches=sum(r.n_batches for r in done), seconds=self._pass_seconds(done))
        devices = ",".join(dict.fromkeys(r.device for r in done))
        warnings = tuple(dict.fromkeys(w for r in done for w in r.warnings))
        model = LoadedModel(name=name, device=devices, n_parameters=done[0].num_parameters,
                            n_parameter_bytes=done[0].parameter_bytes, warnings=warnings)
        speed = next((r.speed for r in done if r.speed is not None), None)
        return ExecutionOutcome(name=name, evaluation=evaluation, model=model, load_time_s=done[0].load_time_s,
                            workers=workers, speed=speed, concurrent_speed=speed is not None and concurrent)

    def _pass_seconds(self, done: list[TaskResult]) -> float:
        """Wall time of a model's pass: the sum of its shards in-process, first start to last end in workers."""
        if not self.concurrent or len(done) == 1:
            return sum(r.seconds for r in done)
        return max(r.started_at + r.seconds for r in done) - min(r.started_at for r in done)


def _common_alignment(name: str, alignments: list[LabelAlignment]) -> LabelAlignment:
    """The label alignment all shards found (a model loaded twice must align the same way)."""
    first = alignments[0]
    for other in alignments[1:]:
        if not np.array_equal(other.columns, first.columns):
            raise ShardMismatch(f"model '{name}' aligned its labels differently in two workers "
                                f"({first.columns.tolist()} vs {other.columns.tolist()})")
    return first


def failure_summary(outcomes: Sequence[ExecutionOutcome]) -> str | None:
    """One line naming every failed model and why (``None`` when all succeeded).

    Examples
    --------
    ``model 'broken': module 'nope' not found ...; kept: bert, roberta``
    """
    failed = [o for o in outcomes if not o.ok]
    if not failed:
        return None
    kept = [o.name for o in outcomes if o.ok]
    parts = [str(o.error()) for o in failed]
    return "; ".join(parts) + (f"; kept: {', '.join(kept)}" if kept else "; no model finished")
