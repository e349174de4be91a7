"""The executor interface: run every model's pass somewhere, get each model's finished outcome back.

See ``docs/architecture.md``, the section of this title.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from headtohead.adapters.labels import LabelAlignment
from headtohead.config.execution import ExecutionConfig
from headtohead.engines.answers import merge_answers_records
from headtohead.engines.evaluate import Evaluation
from headtohead.errors import H2HError, listing
from headtohead.pipeline.executors.concurrency import request_bound, shard_bounds, shard_count
from headtohead.pipeline.executors.fairness import shared_devices
from headtohead.pipeline.executors.jobs import EvalJob, Task, TaskFailure, TaskResult, Unit, run_units
from headtohead.pipeline.executors.sharding import ShardMismatch, merge_shards, plan_shards
from headtohead.pipeline.model_pass import ModelOutcome, model_record
from headtohead.pipeline.setup import RunSetup
from headtohead.results import ModelPredictions
from headtohead.results.environment import environment_fingerprint
from headtohead.results.records import WorkerRecord

__all__ = ["Executor", "ModelFailure", "LoadedModel", "TaskProgress", "failure_summary"]

#: ``progress(task_label, done, total)``: per batch in-process, per finished task in workers.
TaskProgress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class LoadedModel:
    """What a model's record needs from a model loaded in a worker (shaped like an adapter)."""

    name: str
    device: str
    n_parameters: int | None  # None: unknown (a callable, an estimator without coefficients)
    n_parameter_bytes: int | None
    warnings: tuple[str, ...] = ()

    def num_parameters(self) -> int | None:
        return self.n_parameters

    def parameter_bytes(self) -> int | None:
        return self.n_parameter_bytes

    def answer_record(self) -> None:
        return None  # the shards' answer records come back from the workers as records, merged


@dataclass(frozen=True)
class ModelFailure:
    """A model whose pass failed in a worker: the first failing task's error."""

    name: str
    failure: TaskFailure
    #: Always false (a finished model is a ``ModelOutcome``).
    ok = False

    def error(self) -> H2HError:
        """The failure as the exception to raise (one line)."""
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

    def evaluate(
        self,
        setup: RunSetup,
        models: Sequence[str | Unit] | None = None,
        *,
        shards: int | None = None,
        progress: TaskProgress | None = None,
        measure_speed: bool = False,
        offline: bool = False,
    ) -> Iterator[ModelOutcome | ModelFailure]:
        """Run the pass of ``models`` (default: all of the run's); yield each unit's outcome as it is ready.

        A model measured several ways (its passes: prompts …) is one unit of work per pass, each run
        as a model is (:class:`~.jobs.Unit`); its outcomes carry the pass (``ModelOutcome.pass_index``).

        Parameters
        ----------
        setup : RunSetup
            The run, from :func:`~headtohead.pipeline.setup.prepare_run`.
        models : sequence of str or Unit, optional
            The models (each with all its passes) or units to evaluate (a subset, e.g. when resuming).
        shards : int, optional
            Parts to cut each model's evaluation into; default ``execution.shards`` (an
            endpoint model's shards side by side: at most its request bound, sharing it).
        progress : callable, optional
            ``progress(task_label, done, total)``.
        measure_speed : bool
            Time each model in its worker too (``execution.speed: workers``).
        offline : bool
            No network attempt in the workers (``--offline``).

        Yields
        ------
        ModelOutcome or ModelFailure
            One per unit (a model, or one pass of it), in the order of ``models``, each as soon as its
            tasks (and those of the units before it) are done.
        """
        units = _units(setup, models)
        job = EvalJob.from_setup(setup, measure_speed=measure_speed, offline=offline)
        bounds = {u.model: request_bound(setup.experiment.model(u.model)) for u in units}
        tasks = self.tasks(job, units, shards=shards, bounds=bounds)
        concurrent = measure_speed and bool(
            shared_devices(self.config, eval_device=self.eval_device, n_tasks=len(tasks))
        )
        expected = {unit: sum(t.unit == unit for t in tasks) for unit in units}
        parts: dict[Unit, list[TaskResult | TaskFailure]] = {unit: [] for unit in units}
        ready = 0
        for result in self._run(setup, job, tasks, progress):
            parts[result.task.unit].append(result)
            while ready < len(units) and len(parts[units[ready]]) == expected[units[ready]]:
                yield self._merge(setup, units[ready], parts.pop(units[ready]), concurrent)
                ready += 1
        for unit in units[ready:]:  # an executor that lost tasks: those units failed
            yield self._merge(setup, unit, parts.get(unit, []), concurrent)

    def tasks(
        self,
        job: EvalJob,
        models: Sequence[str | Unit],
        *,
        shards: int | None = None,
        bounds: Mapping[str, int | None] | None = None,
    ) -> list[Task]:
        """One task per unit (a model, or one pass of it) and shard, unit by unit (shard 0 of a model's first
        pass measures speed when asked).

        ``bounds`` gives a model's request bound (:func:`.concurrency.request_bound`): its
        shards share it when they run side by side, each with its own part (:mod:`.concurrency`).
        """
        unknown = [m for m in models if (m.model if isinstance(m, Unit) else m) not in job.model_names()]
        if unknown:
            raise ValueError(f"models {unknown} are not in the job (it has {job.model_names()})")
        units = [m if isinstance(m, Unit) else Unit(m) for m in models]
        tasks: list[Task] = []
        for unit in units:
            bound = (bounds or {}).get(unit.model)
            wanted = shard_count(shards or self.config.shards, bound, side_by_side=self.concurrent)
            parts = plan_shards(len(job.order), job.batch_size, wanted)
            shares = shard_bounds(bound, len(parts), side_by_side=self.concurrent)
            timed = job.measure_speed and not unit.pass_index  # a model is timed once: on its first pass
            tasks.extend(
                Task(unit.model, shard, timed and shard.index == 0, share, unit.pass_index, unit.key)
                for shard, share in zip(parts, shares, strict=True)
            )
        return tasks

    @abstractmethod
    def _run(
        self,
        setup: RunSetup,
        job: EvalJob,
        tasks: Sequence[Task],
        progress: TaskProgress | None,
    ) -> Iterable[TaskResult | TaskFailure]:
        """Run every task; give one result or failure per task (any order; lazily, as they finish, if it can)."""

    def close(self) -> None:  # noqa: B027 - an optional hook, not abstract: most executors hold nothing
        """Release the workers (no-op unless the executor holds some)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _worker_records(self, done: list[TaskResult]) -> list[WorkerRecord]:
        return [
            WorkerRecord(
                mode=self.mode,
                worker=r.worker,
                device=r.device,
                shard=r.task.shard.index,
                n_shards=r.task.shard.count,
                environment_fingerprint=environment_fingerprint(r.environment),
                environment=r.environment,
            )
            for r in done
            if r.environment is not None
        ]

    def _merge(
        self,
        setup: RunSetup,
        unit: Unit,
        parts: list[TaskResult | TaskFailure],
        concurrent: bool,
    ) -> ModelOutcome | ModelFailure:
        name = unit.model
        failures = [p for p in parts if isinstance(p, TaskFailure)]
        done = sorted((p for p in parts if isinstance(p, TaskResult)), key=lambda r: r.task.shard.index)
        if failures or not done:
            whole = plan_shards(len(setup.plan.order), setup.plan.batch_size, 1)[0]
            return ModelFailure(
                unit.label,
                failures[0]
                if failures
                else TaskFailure(
                    task=Task(name, whole, pass_index=unit.pass_index, pass_key=unit.key),
                    error_type="NoResult",
                    message=f"no worker returned a result for model '{unit.label}'",
                    worker=self.mode,
                ),
            )
        plan = setup.plan
        try:
            pred, proba = merge_shards(plan, [(r.task.shard, r.order, r.pred, r.proba) for r in done])
            alignment = _common_alignment(name, [r.alignment for r in done])
        except ShardMismatch as exc:
            first = done[0]
            return ModelFailure(
                name, TaskFailure(task=first.task, error_type=type(exc).__name__, message=str(exc), worker=first.worker)
            )
        backoff = tuple(
            event.model_copy(update={"batch": event.batch + r.task.shard.start // plan.batch_size})
            for r in done
            for event in r.backoff
        )  # batch positions in the whole plan
        evaluation = Evaluation(
            pred=pred,
            proba=proba,
            alignment=alignment,
            plan_hash=plan.hash(),
            n_batches=sum(r.n_batches for r in done),
            seconds=self._pass_seconds(done),
            backoff=backoff,
        )
        model = LoadedModel(
            name=name,
            device=",".join(dict.fromkeys(r.device for r in done)),
            n_parameters=done[0].num_parameters,
            n_parameter_bytes=done[0].parameter_bytes,
            warnings=tuple(dict.fromkeys(w for r in done for w in r.warnings)),
        )
        speed = next((r.speed for r in done if r.speed is not None), None)
        record = model_record(
            setup.experiment.model(name),
            model,
            done[0].load_time_s,
            setup,
            evaluation,
            execution_mode=self.mode,
            workers=self._worker_records(done),
            speed_concurrent=speed is not None and concurrent,
            answers=merge_answers_records(
                [r.answers for r in done], concurrency=request_bound(setup.experiment.model(name))
            ),
        )
        return ModelOutcome(
            record,
            ModelPredictions(pred, proba),
            adapter=done[0].adapter if len(done) == 1 else None,
            speed=speed,
            concurrent_speed=speed is not None and concurrent,
            pass_index=unit.pass_index,
        )

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
            raise ShardMismatch(
                f"model '{name}' aligned its labels differently in two workers "
                f"({first.columns.tolist()} vs {other.columns.tolist()})"
            )
    return first


def failure_summary(outcomes: Sequence[ModelOutcome | ModelFailure]) -> str | None:
    """One line naming every failed model and why (``None`` when all succeeded).

    Examples
    --------
    ``model 'broken': module 'nope' not found ...; kept: bert, roberta``
    """
    failed = [o for o in outcomes if isinstance(o, ModelFailure)]
    if not failed:
        return None
    kept = [o.name for o in outcomes if isinstance(o, ModelOutcome)]
    parts = [str(o.error()) for o in failed]
    return "; ".join(parts) + (f"; kept: {listing(kept)}" if kept else "; no model finished")


def _units(setup: RunSetup, models: Sequence[str | Unit] | None) -> list[Unit]:
    """The units of work asked for: every pass of each model named, or the units given."""
    if models is None:
        return run_units(setup.experiment)
    units: list[Unit] = []
    for m in models:
        known = isinstance(m, Unit) or m in setup.experiment_model_names()  # an unknown name: refused by tasks()
        if isinstance(m, Unit):
            units.append(m)
        else:
            units.extend(run_units(setup.experiment, [m]) if known else [Unit(m)])
    return units
