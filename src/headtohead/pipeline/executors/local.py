"""``execution.mode: local`` — every task in this process, one after another (the default).

The same task body as the parallel executors (:func:`~headtohead.pipeline.executors.worker.evaluate_task`)
on the same batches, over the data the run already loaded, so a ``local`` run is the reference
the others must equal exactly. Batch-level progress is passed through; the loaded models are
kept for the speed pass; an error propagates at once with its traceback.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

from headtohead.pipeline.executors.base import Executor, TaskProgress
from headtohead.pipeline.executors.jobs import EvalJob, Task, TaskResult
from headtohead.pipeline.executors.sharding import shard_plan
from headtohead.pipeline.executors.worker import evaluate_task
from headtohead.pipeline.setup import RunSetup

__all__ = ["LocalExecutor"]


class LocalExecutor(Executor):
    """Runs the tasks sequentially in this process, on the run's device, yielding each as it finishes."""

    mode = "local"
    concurrent = False

    def _run(
        self,
        setup: RunSetup,
        job: EvalJob,
        tasks: Sequence[Task],
        progress: TaskProgress | None,
    ) -> Iterator[TaskResult]:
        for task in tasks:
            shard = setup if task.shard.count == 1 else replace(setup, plan=shard_plan(setup.plan, task.shard))
            yield evaluate_task(shard, task, progress, measure_speed=task.measure_speed)
