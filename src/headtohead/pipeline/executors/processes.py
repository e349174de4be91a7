"""``execution.mode: processes`` — one spawned worker process per device, each pinned to it.

Every worker is a ``concurrent.futures.ProcessPoolExecutor`` of one process started with the
``spawn`` method (a fresh interpreter: no CUDA context or thread pool inherited from the
parent), set up by :func:`~headtohead.pipeline.executors.worker.setup_process` before torch loads —
its cores (``sched_setaffinity``) and torch threads. One thread per worker in the main
process hands it the next task as soon as it is free, so a fast model's worker picks up the
next model instead of waiting. A worker process that dies (out of memory, a crash in native
code) fails only the task it was running; it is restarted for the rest.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections import deque
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from headtohead.config.execution import ExecutionConfig
from headtohead.pipeline.executors.base import Executor, TaskProgress
from headtohead.pipeline.executors.fairness import plan_workers
from headtohead.pipeline.executors.jobs import EvalJob, Task, TaskFailure, TaskResult, WorkerSettings
from headtohead.pipeline.executors.worker import run_task, setup_process
from headtohead.pipeline.setup import RunSetup

__all__ = ["ProcessExecutor"]


class ProcessExecutor(Executor):
    """Runs tasks in spawned processes, one per device of ``execution.devices`` (see :func:`plan_workers`).

    Workers are started on the first :meth:`evaluate` and kept until :meth:`close`, so a
    second run with the same workers does not pay the start-up (interpreter, torch import) again.

    Examples
    --------
    >>> with ProcessExecutor(ExecutionConfig(mode="processes", devices=["cuda:0", "cuda:1"])) as ex:  # doctest: +SKIP
    ...     outcomes = list(ex.evaluate(setup))
    """

    mode = "processes"

    def __init__(self, config: ExecutionConfig, *, eval_device: str = "auto") -> None:
        super().__init__(config, eval_device=eval_device)
        self._workers: list[tuple[WorkerSettings, ProcessPoolExecutor]] = []

    @property
    def workers(self) -> list[WorkerSettings]:
        """The settings of the workers started so far."""
        return [settings for settings, _ in self._workers]

    def _start(self, slots: list[WorkerSettings]) -> None:
        if [s for s, _ in self._workers] == slots:
            return
        self.close()
        self._workers = [(settings, _spawn(settings)) for settings in slots]

    def _run(
        self,
        setup: RunSetup,
        job: EvalJob,
        tasks: Sequence[Task],
        progress: TaskProgress | None,
    ) -> list[TaskResult | TaskFailure]:
        self._start(plan_workers(self.config, eval_device=self.eval_device, n_tasks=len(tasks)))
        queue = deque(enumerate(tasks))
        results: list[TaskResult | TaskFailure | None] = [None] * len(tasks)
        lock = threading.Lock()
        finished = [0]

        def drive(slot: int) -> None:
            while True:
                with lock:
                    if not queue:
                        return
                    index, task = queue.popleft()
                results[index] = self._run_one(slot, job, task)
                with lock:
                    finished[0] += 1
                    if progress is not None:
                        progress(task.label, finished[0], len(tasks))

        threads = [
            threading.Thread(target=drive, args=(slot,), name=f"h2h-worker-{slot}", daemon=True)
            for slot in range(len(self._workers))
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return [r for r in results if r is not None]

    def _run_one(self, slot: int, job: EvalJob, task: Task) -> TaskResult | TaskFailure:
        settings, pool = self._workers[slot]
        try:
            return pool.submit(run_task, job, task, settings).result()
        except BrokenProcessPool:
            # The process died mid-task; a fresh one serves the remaining tasks of this slot.
            pool.shutdown(wait=False, cancel_futures=True)
            self._workers[slot] = (settings, _spawn(settings))
            return TaskFailure(
                task=task,
                error_type="WorkerDied",
                message=f"the worker process on {settings.describe()} died while evaluating "
                f"{task.label} (out of memory, or a crash in native code); give it more "
                f"memory or a smaller eval.batch_size",
                worker=f"process on {settings.describe()}",
            )
        except Exception as exc:  # e.g. a result that cannot be sent back; the other tasks go on
            return TaskFailure(
                task=task,
                error_type=type(exc).__name__,
                message=str(exc).splitlines()[0] if str(exc) else "",
                worker=f"process on {settings.describe()}",
            )

    def close(self, *, wait: bool = True) -> None:
        """Stop the worker processes (``wait=False``: do not wait for the tasks they are running)."""
        for _, pool in self._workers:
            pool.shutdown(wait=wait, cancel_futures=True)
        self._workers = []

    def __exit__(self, *exc_info: object) -> None:
        # After an error or Ctrl-C do not wait for a long model to finish; the workers get the
        # interrupt too, or exit when their task ends.
        self.close(wait=not exc_info or exc_info[0] is None)


def _spawn(settings: WorkerSettings) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(
        max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=setup_process, initargs=(settings,)
    )
