"""``execution.mode: ray`` — one Ray task per model (and shard), placed by Ray's resource scheduler.

See ``docs/distributed.md``, the section of this title.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from headtohead.config.execution import ExecutionConfig
from headtohead.errors import ConfigError
from headtohead.pipeline.executors.base import Executor, TaskProgress
from headtohead.pipeline.executors.jobs import EvalJob, Task, TaskFailure, TaskResult, WorkerSettings
from headtohead.pipeline.setup import RunSetup

__all__ = ["RayExecutor", "import_ray", "ray_task"]

log = logging.getLogger("headtohead")


def import_ray() -> Any:
    """Import ray, or say which extra installs it.

    Raises
    ------
    ConfigError
        Ray is not installed.
    """
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "execution.mode is 'ray' but Ray is not installed; pip install \"headtohead[ray]\" (on "
            "every node of the cluster) or use mode: processes"
        ) from None
    return ray


def ray_task(job: EvalJob, task: Task, num_cpus: float, num_gpus: float) -> TaskResult | TaskFailure:
    """The body of one Ray task: threads and device from the reserved resources, then :func:`run_task`."""
    import ray
    import torch

    from headtohead.pipeline.executors.worker import run_task

    threads = max(1, int(num_cpus))
    torch.set_num_threads(threads)  # Ray reuses worker processes: set it for every task
    device = "cuda:0" if num_gpus > 0 else "cpu"  # Ray leaves only the reserved GPU(s) visible
    result = run_task(job, task, WorkerSettings(device=device, threads=threads))
    if num_gpus > 0:  # name the node's physical GPU(s): cuda:0 alone would not tell them apart
        gpus = ",".join(str(g) for g in ray.get_gpu_ids())
        result = replace(result, worker=f"{result.worker} (node GPU {gpus})")
    return result


class RayExecutor(Executor):
    """Runs every task as a Ray task; see the module docstring.

    Examples
    --------
    >>> config = ExecutionConfig(mode="ray", address="auto", num_gpus=1, num_cpus=4)   # doctest: +SKIP
    >>> with RayExecutor(config) as executor:                                           # doctest: +SKIP
    ...     outcomes = list(executor.evaluate(setup))
    """

    mode = "ray"

    def __init__(self, config: ExecutionConfig, *, eval_device: str = "auto") -> None:
        super().__init__(config, eval_device=eval_device)
        self._started_here = False

    def connect(self) -> Any:
        """Join the cluster at ``execution.address``, or start a local instance; reuse one already joined."""
        ray = import_ray()
        if ray.is_initialized():
            return ray
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage reports leave the machine
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if self.config.address is not None:
            try:
                ray.init(address=self.config.address, **options)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ConfigError(
                    f"execution.address '{self.config.address}': cannot connect to a Ray cluster "
                    f"({str(exc).splitlines()[0]}); start it with 'ray start --head' or fix the "
                    f"address"
                ) from exc
        else:
            ray.init(num_cpus=self.config.ray_init_cpus, **options)
            self._started_here = True
        return ray

    def _run(
        self,
        setup: RunSetup,
        job: EvalJob,
        tasks: Sequence[Task],
        progress: TaskProgress | None,
    ) -> list[TaskResult | TaskFailure]:
        ray = self.connect()
        cfg = self.config
        self._check_feasible(ray)
        remote = ray.remote(num_cpus=cfg.num_cpus, num_gpus=cfg.num_gpus, max_retries=0)(ray_task)
        job_ref = ray.put(job)  # shipped once to the object store, not once per task
        pending = {remote.remote(job_ref, task, cfg.num_cpus, cfg.num_gpus): task for task in tasks}
        results: list[TaskResult | TaskFailure] = []
        waiting = list(pending)
        while waiting:
            ready, waiting = ray.wait(waiting, num_returns=1)
            task = pending[ready[0]]
            try:
                results.append(ray.get(ready[0]))
            except ray.exceptions.RayError as exc:  # the worker or its node died; the task's own errors come back
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                results.append(TaskFailure(task=task, error_type=type(exc).__name__, message=first, worker="ray"))
            if progress is not None:
                progress(task.label, len(results), len(tasks))
        return results

    def _check_feasible(self, ray: Any) -> None:
        """Refuse tasks no node can ever run (Ray would wait for them forever on a local instance)."""
        cfg = self.config
        nodes = [n.get("Resources", {}) for n in ray.nodes() if n.get("Alive")]
        if any(r.get("CPU", 0) >= cfg.num_cpus and r.get("GPU", 0) >= cfg.num_gpus for r in nodes):
            return
        largest: dict[str, float] = max(nodes, key=lambda r: (r.get("GPU", 0), r.get("CPU", 0)), default={})
        problem = (
            f"execution asks for num_cpus {cfg.num_cpus:g} and num_gpus {cfg.num_gpus:g} per task but no Ray "
            f"node has that much (the largest: {largest.get('CPU', 0):g} CPUs, {largest.get('GPU', 0):g} GPUs)"
        )
        if self._started_here:
            raise ConfigError(f"{problem}; lower them, or connect to a cluster with such nodes (execution.address)")
        log.warning("%s; the tasks wait until the cluster's autoscaler adds such a node", problem)

    def close(self) -> None:
        """Shut down the local Ray instance if this executor started it (a cluster is left running)."""
        if self._started_here:
            import ray

            ray.shutdown()
            self._started_here = False
