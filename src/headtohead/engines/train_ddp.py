"""Data-parallel training (``torch.distributed`` DDP), launched the torchrun way.

See ``docs/architecture.md``, the section of this title.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import cast

import numpy as np

from headtohead.errors import DeviceError
from headtohead.runtime.devices import is_cuda

__all__ = [
    "DistContext",
    "dist_context_from_env",
    "init_process_group",
    "shutdown_process_group",
    "rank_share",
    "all_reduce_sum",
    "barrier",
]


@dataclass(frozen=True)
class DistContext:
    """This process's place in a data-parallel group."""

    rank: int
    world_size: int
    local_rank: int
    backend: str = "gloo"

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def dist_context_from_env(backend: str = "auto", device: str = "cpu") -> DistContext | None:
    """The group torchrun started this process in, or ``None`` outside torchrun (or with one process).

    Parameters
    ----------
    backend : {"auto", "gloo", "nccl"}
        ``auto`` picks nccl for CUDA devices and gloo otherwise.
    device : str
        The training device.
    """
    world = int(os.environ.get("WORLD_SIZE", "1") or 1)
    if world <= 1:
        return None
    chosen = backend if backend != "auto" else ("nccl" if is_cuda(device) else "gloo")
    return DistContext(
        rank=int(os.environ.get("RANK", "0")),
        world_size=world,
        local_rank=int(os.environ.get("LOCAL_RANK", "0")),
        backend=chosen,
    )


def init_process_group(ctx: DistContext) -> None:
    """Join the group (``env://`` rendezvous, as torchrun sets it up) unless already joined."""
    import torch.distributed as dist

    if dist.is_initialized():
        return
    if not dist.is_available():
        raise DeviceError("train.nproc > 1 needs torch.distributed, which this torch build lacks; use nproc: 1")
    if ctx.backend == "nccl":
        import torch

        torch.cuda.set_device(ctx.local_rank)  # NCCL talks to the current device: make it this process's GPU
    dist.init_process_group(backend=ctx.backend, rank=ctx.rank, world_size=ctx.world_size)


def shutdown_process_group() -> None:
    """Leave the group (idempotent)."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def rank_share(global_batch: np.ndarray, ctx: DistContext | None) -> np.ndarray:
    """This process's contiguous part of a global batch (all of it without a group).

    Examples
    --------
    >>> rank_share(np.arange(5), DistContext(rank=1, world_size=2, local_rank=1)).tolist()
    [3, 4]
    """
    if ctx is None:
        return global_batch
    return np.array_split(global_batch, ctx.world_size)[ctx.rank]


def all_reduce_sum(values: np.ndarray, ctx: DistContext | None) -> np.ndarray:
    """Sum ``values`` (float64) over all processes; unchanged without a group."""
    if ctx is None:
        return values
    import torch
    import torch.distributed as dist

    tensor = torch.as_tensor(np.asarray(values, dtype=np.float64))
    if ctx.backend == "nccl":
        tensor = tensor.to(f"cuda:{ctx.local_rank}")
    dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
    return cast(np.ndarray, tensor.cpu().numpy())


def barrier(ctx: DistContext | None) -> None:
    """Wait for every process (no-op without a group)."""
    if ctx is not None:
        import torch.distributed as dist

        dist.barrier()
