"""The ``execution:`` section: where the models run — in-process, spawned processes or Ray (no torch import).

See ``docs/distributed.md``, "Running on several devices, processes or a Ray cluster".
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from headtohead.config.base import Section as _Section

__all__ = ["ExecutionConfig", "EXECUTION_MODES", "parse_cpu_set", "WORKER_DEVICE_PATTERN"]

#: The executors, by ``execution.mode``.
EXECUTION_MODES: tuple[str, ...] = ("local", "processes", "ray")

#: ``cpu``, a CPU set (``cpu:0-3``, ``cpu:0,2,4-7``), ``cuda``, ``cuda:N`` or ``mps``.
WORKER_DEVICE_PATTERN = re.compile(r"^(cpu(:\d+(-\d+)?(,\d+(-\d+)?)*)?|cuda(:\d+)?|mps)$")


def parse_cpu_set(device: str) -> tuple[int, ...] | None:
    """The cores of a CPU-set device (``cpu:0-3,8`` → ``(0, 1, 2, 3, 8)``); ``None`` for other devices.

    Parameters
    ----------
    device : str
        One entry of ``execution.devices``.

    Returns
    -------
    tuple of int or None
        Sorted, unique core ids; ``None`` for ``cpu`` (cores assigned automatically) and GPUs.

    Examples
    --------
    >>> parse_cpu_set("cpu:0-2,5")
    (0, 1, 2, 5)
    >>> parse_cpu_set("cuda:1") is None
    True
    """
    if not device.startswith("cpu:"):
        return None
    cores: set[int] = set()
    for part in device[len("cpu:") :].split(","):
        low, _, high = part.partition("-")
        first, last = int(low), int(high or low)
        if last < first:
            raise ValueError(f"CPU range '{part}' in '{device}' runs backwards; write it low-high (e.g. 0-3)")
        cores.update(range(first, last + 1))
    return tuple(sorted(cores))


class ExecutionConfig(_Section):
    """Where and how the models' passes run (see the module docstring for examples)."""

    mode: Literal["local", "processes", "ray"] = Field(
        default="local",
        description="local: in this process, one model after another; processes: one spawned "
        "process per device; ray: one Ray task per model (and shard).",
    )
    devices: list[str] | None = Field(
        default=None,
        description="processes: one worker per entry (cpu, a CPU set like cpu:0-7, cuda:N, mps). "
        "Default: every GPU when eval.device is auto/cuda and there are several, else num_workers × eval.device.",
    )
    num_workers: int | None = Field(
        default=None,
        gt=0,
        description="processes: number of workers (default: one per device, or 2); devices are repeated to fill them.",
    )
    threads_per_worker: int | None = Field(
        default=None, gt=0, description="torch threads in each worker (default: the worker's share of the cores)."
    )
    shards: int = Field(
        default=1,
        gt=0,
        description="Split each model's evaluation set into this many parts "
        "(whole batches) evaluated by different workers and merged in the original order "
        "(an endpoint model side by side: at most its max_concurrency parts, sharing it).",
    )
    speed: Literal["main", "workers"] = Field(
        default="main",
        description="main: speed is measured afterwards in the main process, models interleaved "
        "on one device (fair); workers: each worker times its own models at the same time as the others (fair "
        "only on separate identical devices).",
    )
    address: str | None = Field(
        default=None,
        description="ray: cluster address for ray.init ('auto', "
        "'ray://head:10001'); default: start a local Ray instance.",
    )
    num_cpus: float = Field(default=1.0, gt=0.0, description="ray: CPUs reserved by each task (its torch threads).")
    num_gpus: float = Field(
        default=0.0,
        ge=0.0,
        description="ray: GPUs reserved by each task (1: a whole GPU; a fraction shares one GPU between tasks).",
    )
    ray_init_cpus: int | None = Field(
        default=None, gt=0, description="ray: CPUs of the local instance when no address is given (default: all cores)."
    )
    force: bool = Field(
        default=False,
        description="Accept speed measured concurrently on a shared device "
        "(results are marked 'concurrent'); same as --force.",
    )

    @field_validator("devices")
    @classmethod
    def _device_syntax(cls, devices: list[str] | None) -> list[str] | None:
        if devices is None:
            return None
        if not devices:
            raise ValueError("execution.devices is empty; list at least one device (e.g. [cuda:0, cuda:1]) or omit it")
        for device in devices:
            if not WORKER_DEVICE_PATTERN.match(device):
                raise ValueError(
                    f"unknown worker device '{device}' (use cpu, a CPU set like cpu:0-3, cuda, cuda:N or mps)"
                )
            parse_cpu_set(device)
        return devices

    @model_validator(mode="after")
    def _options_fit_mode(self) -> ExecutionConfig:
        ray_only = {
            "address": self.address is not None,
            "ray_init_cpus": self.ray_init_cpus is not None,
            "num_gpus": self.num_gpus != 0.0,
            "num_cpus": self.num_cpus != 1.0,
        }
        if self.mode != "ray" and any(ray_only.values()):
            used = ", ".join(k for k, v in ray_only.items() if v)
            raise ValueError(
                f"execution.{used} only apply to mode: ray (mode is '{self.mode}'); set mode: ray or remove them"
            )
        worker_options = [k for k in ("devices", "num_workers", "threads_per_worker") if getattr(self, k) is not None]
        if self.mode == "local" and worker_options:
            raise ValueError(
                f"execution.{', '.join(worker_options)} apply to mode: processes (mode is 'local', which "
                f"runs in this process on eval.device); set mode: processes or remove them"
            )
        if self.mode == "ray" and (self.devices is not None or self.num_workers is not None):
            raise ValueError(
                "execution.devices/num_workers apply to mode: processes; with mode: ray give num_gpus/"
                "num_cpus per task and let Ray place the tasks"
            )
        if self.mode == "ray" and self.num_gpus > 1 and not self.num_gpus.is_integer():
            raise ValueError(f"execution.num_gpus {self.num_gpus:g} must be a fraction below 1 or a whole number")
        return self
