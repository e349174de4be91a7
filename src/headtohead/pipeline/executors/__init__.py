"""Executors: where the models' passes run — in-process, spawned processes, or a Ray cluster.

See ``docs/architecture.md``, the section of this title.
"""

from __future__ import annotations

import importlib

from headtohead.config.execution import ExecutionConfig
from headtohead.errors import ConfigError, did_you_mean
from headtohead.pipeline.executors.base import Executor, LoadedModel, ModelFailure, failure_summary
from headtohead.pipeline.executors.fairness import check_fairness, plan_workers, shared_devices
from headtohead.pipeline.executors.jobs import EvalJob, Task, TaskFailure, TaskResult, WorkerSettings
from headtohead.pipeline.executors.sharding import Shard, merge_shards, plan_shards, shard_plan
from headtohead.pipeline.executors.speed_merge import CONCURRENT_MARK, merge_worker_speed

__all__ = [
    "EXECUTORS",
    "create_executor",
    "Executor",
    "ModelFailure",
    "LoadedModel",
    "EvalJob",
    "Task",
    "TaskResult",
    "TaskFailure",
    "WorkerSettings",
    "Shard",
    "plan_shards",
    "shard_plan",
    "merge_shards",
    "check_fairness",
    "shared_devices",
    "plan_workers",
    "merge_worker_speed",
    "CONCURRENT_MARK",
    "failure_summary",
]

EXECUTORS: dict[str, str] = {
    "local": "headtohead.pipeline.executors.local:LocalExecutor",
    "processes": "headtohead.pipeline.executors.processes:ProcessExecutor",
    "ray": "headtohead.pipeline.executors.ray_executor:RayExecutor",
}


def create_executor(config: ExecutionConfig, *, eval_device: str = "auto") -> Executor:
    """The executor of ``config.mode``.

    Parameters
    ----------
    config : ExecutionConfig
        The ``execution:`` section.
    eval_device : str
        ``eval.device`` of the experiment: the local executor's device and the default of
        the process workers.

    Returns
    -------
    Executor
        Use it as a context manager (or call ``close()``) to release its workers.

    Examples
    --------
    >>> create_executor(ExecutionConfig()).mode
    'local'
    """
    if config.mode not in EXECUTORS:
        raise ConfigError(
            f"unknown execution.mode '{config.mode}'{did_you_mean(config.mode, EXECUTORS)} "
            f"(choose one of: {', '.join(EXECUTORS)})"
        )
    module_name, class_name = EXECUTORS[config.mode].split(":")
    cls: type[Executor] = getattr(importlib.import_module(module_name), class_name)
    return cls(config, eval_device=eval_device)
