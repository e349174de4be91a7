"""``execution.mode: local`` — every task in this process, one after another (the default).

The same worker code as the parallel executors (:func:`~headtohead.execution.worker.run_task`)
on the same batches, so a ``local`` run is the reference the others must equal exactly.
Batch-level progress is passed through, as an in-process run shows it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from headtohead.execution.base import Executor, TaskProgress
from headtohead.execution.jobs import EvalJob, Task, TaskFailure, TaskResult, WorkerSettings
from headtohead.execution.worker import remember_dataset, run_task

__all__ = ["LocalExecutor"]


class LocalExecutor(Executor):
    """Runs the tasks sequentially in this process on ``eval.device``.

    Parameters
    ----------
    config : ExecutionConfig
    eval_device : str
        ``eval.device`` of the experiment.
    splits : DataSplits, optional
        The data already loaded by the caller (``RunSetup.splits``); reused instead of read again.
    """

    mode = "local"
    concurrent = False

    def __init__(self, config, *, eval_device: str = "auto", splits: Any = None) -> None:  # noqa: ANN001
        super().__init__(config, eval_device=eval_device)
        self._splits = splits

    def _run(self, job: EvalJob, tasks: Sequence[Task], progress: TaskProgress | None,
             ) -> list[TaskResult | TaskFailure]:
        if self._splits is not None:
            remember_dataset(job, self._splits)
        settings = WorkerSettings(device=self.eval_device)
        return [run_task(job, task, settings, progress) for task in tasks]
