"""Batches to the model's device and scores back, without stalling the device.

On a CUDA device (:class:`~headtohead.runtime.devices.TransferStreams`): batches arrive page-locked
from the preprocessing thread, are copied on a side stream one batch ahead of the forward
pass, and the compute stream waits on the copy's event — never the host. Scores stay on
the device and come back in a few large asynchronous copies, so the host waits for the GPU
only when the results are needed. On the CPU all of this reduces to writing each batch's
scores into one preallocated array.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from headtohead.adapters.base import ModelAdapter
from headtohead.engines.prefetch import map_tensors
from headtohead.runtime.devices import TransferStreams, get_backend, is_cuda

__all__ = ["DeviceFeeder", "ScoreCollector", "transfer_streams", "is_tensor"]

#: Scores gathered on the device before one copy to the host (16 MiB of float32).
FLUSH_ELEMENTS = 4 * 2**20


def is_tensor(value: Any) -> bool:
    """Whether ``value`` is a torch tensor (without importing torch)."""
    return hasattr(value, "detach") and hasattr(value, "device")


def transfer_streams(adapter: ModelAdapter) -> TransferStreams | None:
    """Side-stream transfers for an adapter on a CUDA device; ``None`` elsewhere (and for
    families without a torch module, which move their own data)."""
    if adapter.module is None or not is_cuda(str(adapter.device)):
        return None
    return get_backend().transfer_streams(str(adapter.device))


@dataclass
class _Sent:
    inputs: Any
    event: Any = None


class DeviceFeeder:
    """Moves preprocessed batches to the adapter's device (see the module docstring)."""

    def __init__(self, adapter: ModelAdapter, streams: TransferStreams | None) -> None:
        self.adapter, self.streams = adapter, streams

    @property
    def ahead(self) -> bool:
        """Whether batches should be sent one ahead of the forward pass (asynchronous copies)."""
        return self.streams is not None

    def send(self, inputs: Any) -> _Sent:
        """Start moving a batch: on the side stream with CUDA, at once elsewhere."""
        if self.streams is None:
            return _Sent(self.adapter.to_device(inputs))
        with self.streams.on_side():
            moved = self.adapter.to_device(inputs)
        return _Sent(moved, self.streams.record_side())

    def receive(self, sent: _Sent) -> Any:
        """The batch, usable by the forward pass (the compute stream waits for its copy)."""
        if self.streams is not None:
            self.streams.compute_waits(sent.event)
            map_tensors(sent.inputs, self._keep_for_compute)
        return sent.inputs

    def _keep_for_compute(self, tensor: Any) -> Any:
        assert self.streams is not None
        self.streams.used_on_compute(tensor)
        return tensor


class ScoreCollector:
    """Every batch's scores, in plan order, as one host array at the end.

    Torch scores are kept as float32 (as the model's own ``.float()`` would give), NumPy
    scores as float64; rows are written in the order batches are added.

    Parameters
    ----------
    n_rows : int
        Examples in the plan.
    streams : TransferStreams, optional
        For CUDA: scores stay on the device and come back in chunks of ``flush_elements``.
    flush_elements : int
    """

    def __init__(
        self, n_rows: int, streams: TransferStreams | None = None, *, flush_elements: int = FLUSH_ELEMENTS
    ) -> None:
        self.n_rows, self.streams, self.flush_elements = n_rows, streams, flush_elements
        self.scores: np.ndarray | None = None
        self.filled = 0  # rows handed over so far
        self._pending: list[Any] = []  # device tensors not yet copied
        self._pending_rows = 0
        self._pending_start = 0
        self._copies: list[tuple[Any, Any, int]] = []  # (event, host tensor, first row)
        #: Device-to-host copies issued (each one large; for tests and curiosity).
        self.host_copies = 0

    def add(self, scores: Any) -> None:
        """Keep one batch's scores (a tensor on any device, or a 2-D array)."""
        rows = int(scores.shape[0])
        if self.scores is None:
            dtype = np.float32 if is_tensor(scores) else np.float64
            self.scores = np.empty((self.n_rows, int(scores.shape[1])), dtype=dtype)
        if not is_tensor(scores):
            self.scores[self.filled : self.filled + rows] = np.asarray(scores, dtype=np.float64)
        elif self.streams is None and scores.device.type == "cpu":
            self.scores[self.filled : self.filled + rows] = scores.detach().float().numpy()
        else:
            if not self._pending:
                self._pending_start = self.filled
            self._pending.append(scores.detach())
            self._pending_rows += rows
        self.filled += rows
        if self._pending_rows * self.scores.shape[1] >= self.flush_elements:
            self._flush()

    def result(self) -> np.ndarray:
        """All scores, ``(n_rows, n_outputs)``; waits for the device once, here."""
        if self._pending:
            self._flush()
        for event, host, start in self._copies:
            if self.streams is not None:
                self.streams.wait(event)
            self.scores[start : start + host.shape[0]] = host.numpy()  # type: ignore[index]
        self._copies.clear()
        if self.scores is None:
            return np.zeros((0, 0), dtype=np.float64)
        return self.scores

    def _flush(self) -> None:
        """Concatenate the pending scores on the device and start one copy to the host."""
        import torch

        start = self._pending_start
        chunk = (torch.cat(self._pending) if len(self._pending) > 1 else self._pending[0]).float()
        self._pending, self._pending_rows = [], 0
        self.host_copies += 1
        if self.streams is None:  # another accelerator (mps …): a plain blocking copy
            self.scores[start : start + chunk.shape[0]] = chunk.cpu().numpy()  # type: ignore[index]
            return
        self.streams.side_waits_for_compute()
        with self.streams.on_side():
            host = self.streams.empty_pinned(tuple(chunk.shape), torch.float32)
            host.copy_(chunk, non_blocking=True)
        self.streams.used_on_side(chunk)
        self._copies.append((self.streams.record_side(), host, start))
        self._retire_finished()

    def _retire_finished(self) -> None:
        """Move copies the device has finished into the array (keeps page-locked memory small)."""
        assert self.streams is not None and self.scores is not None
        while self._copies and self.streams.is_done(self._copies[0][0]):
            _, host, start = self._copies.pop(0)
            self.scores[start : start + host.shape[0]] = host.numpy()


@contextlib.contextmanager
def no_autograd(adapter: ModelAdapter) -> Any:
    """``torch.inference_mode`` around the whole pass for torch families; nothing otherwise."""
    if adapter.module is None:
        yield
        return
    import torch

    with torch.inference_mode():
        yield
