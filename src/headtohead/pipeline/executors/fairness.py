"""Which worker gets which device, and the fairness guard on timing models side by side.

Two models timed at the same time on one device slow each other down — they compete for
the GPU's SMs and memory bandwidth, or for the CPU's cores, caches and memory bus — and
both timings come out distorted by an amount that depends on the other model. Parallel
execution is therefore for quality passes, and for speed only when every worker has a
device of its own and those devices are identical. :func:`check_fairness` refuses anything
else unless forced, and the forced timings are marked ``concurrent``.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Sequence

from headtohead.config.execution import ExecutionConfig, parse_cpu_set
from headtohead.errors import ConfigError, DeviceError
from headtohead.pipeline.executors.jobs import WorkerSettings
from headtohead.runtime.devices import get_backend, is_cuda, resolve_device

__all__ = ["plan_workers", "available_cores", "shared_devices", "check_fairness"]


def available_cores() -> list[int]:
    """The cores this process may run on (its affinity mask on Linux, else all of them)."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


def _worker_devices(config: ExecutionConfig, eval_device: str) -> list[str]:
    if config.devices is not None:
        base = list(config.devices)
    else:
        resolved = resolve_device(eval_device)
        count = get_backend().cuda_device_count() if is_cuda(resolved) else 0
        spread = is_cuda(resolved) and eval_device in ("auto", "cuda") and count > 1
        base = [f"cuda:{i}" for i in range(count)] if spread else [resolved]
    n = config.num_workers or (len(base) if config.devices is not None or len(base) > 1 else 2)
    return [base[i % len(base)] for i in range(n)]


def plan_workers(
    config: ExecutionConfig,
    *,
    eval_device: str = "auto",
    n_tasks: int | None = None,
) -> list[WorkerSettings]:
    """The workers of ``processes`` mode: one per device, CPU workers on disjoint core sets.

    Parameters
    ----------
    config : ExecutionConfig
        ``devices``, ``num_workers`` and ``threads_per_worker`` are read.
    eval_device : str
        ``eval.device``; the workers' device when ``devices`` is not given (every GPU
        when it is ``auto``/``cuda`` and there are several).
    n_tasks : int, optional
        Tasks to run; no more workers than tasks are started.

    Returns
    -------
    list of WorkerSettings
        Plain ``cpu`` workers share out the cores no CPU set claims (contiguous blocks,
        one thread per core); GPU workers get ``cores / workers`` threads for preprocessing.

    Raises
    ------
    DeviceError
        A GPU that does not exist here, or a CPU set naming cores this process cannot use.

    Examples
    --------
    >>> plan_workers(ExecutionConfig(mode="processes", devices=["cpu:0", "cpu:1"]))  # doctest: +SKIP
    [WorkerSettings(device='cpu', cpu_set=(0,), threads=1), WorkerSettings(device='cpu', cpu_set=(1,), threads=1)]
    """
    devices = _worker_devices(config, eval_device)
    if n_tasks is not None:
        devices = devices[: max(1, n_tasks)]
    cores = available_cores()
    explicit = {i: parse_cpu_set(d) for i, d in enumerate(devices) if d.startswith("cpu:")}
    for i, cpu_set in explicit.items():
        outside = sorted(set(cpu_set or ()) - set(cores))
        if outside:
            raise DeviceError(
                f"execution.devices entry '{devices[i]}' names cores {outside} this process cannot "
                f"use (available: {cores[0]}-{cores[-1]}); pick cores from that range"
            )
    plain = [i for i, d in enumerate(devices) if d == "cpu"]
    claimed = {c for s in explicit.values() for c in (s or ())}
    pool = [c for c in cores if c not in claimed] or cores
    blocks = _split(pool, len(plain))
    settings: list[WorkerSettings] = []
    for i, device in enumerate(devices):
        if device.startswith("cpu"):
            cores_of: Sequence[int] = explicit.get(i) or blocks[plain.index(i)]
            settings.append(WorkerSettings("cpu", tuple(cores_of), config.threads_per_worker or len(cores_of)))
        else:
            threads = config.threads_per_worker or max(1, len(cores) // len(devices))
            settings.append(WorkerSettings(resolve_device(device), None, threads))
    return settings


def _split(cores: list[int], parts: int) -> list[list[int]]:
    """``parts`` contiguous blocks of ``cores``; with more parts than cores, cores are shared round-robin."""
    if parts == 0:
        return []
    if parts > len(cores):
        return [[cores[i % len(cores)]] for i in range(parts)]
    size, extra = divmod(len(cores), parts)
    blocks, start = [], 0
    for i in range(parts):
        stop = start + size + (1 if i < extra else 0)
        blocks.append(cores[start:stop])
        start = stop
    return blocks


def shared_devices(config: ExecutionConfig, *, eval_device: str = "auto", n_tasks: int | None = None) -> list[str]:
    """Devices on which two workers would run at the same time (empty: every worker is alone).

    CPU workers on one machine count as sharing the CPU even on disjoint core sets: they
    still share caches, the memory bus and the power budget.

    Examples
    --------
    >>> shared_devices(ExecutionConfig(mode="ray", num_gpus=1))
    []
    """
    if config.mode == "local" or (n_tasks is not None and n_tasks <= 1):
        return []
    if config.mode == "ray":
        if config.num_gpus == 0:
            return ["the CPUs of each Ray node (tasks with num_gpus: 0 share them)"]
        if config.num_gpus < 1:
            return [
                (f"a GPU shared by up to {math.floor(1 / config.num_gpus)} Ray tasks (num_gpus: {config.num_gpus:g})")
            ]
        return []
    workers = plan_workers(config, eval_device=eval_device, n_tasks=n_tasks)
    counts = Counter(w.device for w in workers)
    return [f"{device} ({count} workers)" for device, count in counts.items() if count > 1]


def _different_gpus(config: ExecutionConfig, eval_device: str, n_tasks: int | None) -> list[str]:
    """Names of the distinct GPU models the ``processes`` workers would use (empty when all match)."""
    if config.mode != "processes":
        return []
    from headtohead.runtime.devices import gpu_info

    indices = {
        int(w.device.split(":")[1])
        for w in plan_workers(config, eval_device=eval_device, n_tasks=n_tasks)
        if is_cuda(w.device)
    }
    names = {g.name for g in gpu_info() if g.index in indices}
    return sorted(names) if len(names) > 1 else []


def check_fairness(
    execution: ExecutionConfig,
    speed_enabled: bool,
    force: bool = False,
    *,
    eval_device: str = "auto",
    n_tasks: int | None = None,
) -> list[str]:
    """Refuse timing models concurrently on a shared device; return warnings for what is allowed.

    Parameters
    ----------
    execution : ExecutionConfig
        The ``execution:`` section.
    speed_enabled : bool
        Whether this run measures speed.
    force : bool
        ``--force``: accept concurrent timings (also ``execution.force``); they are marked
        ``concurrent`` and a warning says why they are not to be trusted.
    eval_device : str
        ``eval.device`` (the workers' default device).
    n_tasks : int, optional
        Tasks of the run (models × shards); a single task cannot overlap another.

    Returns
    -------
    list of str
        Warnings to show and keep with the results (empty when nothing is in doubt).

    Raises
    ------
    ConfigError
        Speed would be measured in workers sharing a device, or on different GPU models,
        and neither ``force`` nor ``execution.force`` is set.

    Examples
    --------
    >>> check_fairness(ExecutionConfig(mode="processes"), speed_enabled=True)  # speed: main (default)
    []
    """
    if not speed_enabled or execution.mode == "local" or execution.speed == "main":
        return []
    shared = shared_devices(execution, eval_device=eval_device, n_tasks=n_tasks)
    mixed = _different_gpus(execution, eval_device, n_tasks)
    notes = (
        [
            (
                "with Ray, workers may land on different kinds of node: compare timings only between models with "
                "the same environment fingerprint"
            )
        ]
        if execution.mode == "ray"
        else []
    )
    if not shared and not mixed:
        return notes
    where = ", ".join(shared) if shared else f"different GPU models ({', '.join(mixed)})"
    if not (force or execution.force):
        raise ConfigError(
            f"execution.speed is 'workers' but models would be timed at the same time on {where}, "
            f"which slows each down and distorts both timings; set execution.speed: main (models "
            f"timed one after another afterwards), give each worker its own identical device, or "
            f"pass --force to keep timings marked 'concurrent'"
        )
    return notes + [
        (
            f"speed measured concurrently on {where} (forced): the timings are marked 'concurrent' and "
            f"each includes slowdown from the other workers; do not read them as isolated speeds"
        )
    ]
