"""A model adapter whose forward pass takes a simulated, controlled time — for testing speed measurement.

On the CPU the time passes on a :class:`~headtohead.testing.fake_device.FakeClock`; on a
``cuda:N`` device on a :class:`~headtohead.testing.fake_device.FakeCudaBackend` GPU, with
optional seeded jitter, drift and a penalty for running right after another model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from headtohead.adapters.base import LoadContext, ModelAdapter
from headtohead.config.schema import ModelConfig, model_settings
from headtohead.testing.fake_device import FakeClock, FakeCudaBackend

__all__ = ["SimulatedAdapter"]


class SimulatedAdapter(ModelAdapter):
    """A model whose forward pass takes a simulated, controlled time.

    On the CPU the time passes on a :class:`FakeClock`; on a ``cuda:N`` device it passes
    on a :class:`FakeCudaBackend` GPU (and the host clock moves only by ``launch_ns``).

    Parameters
    ----------
    name : str
    cost_ns : float
        Forward time per example.
    clock : FakeClock
    backend : FakeCudaBackend, optional
        Needed for a CUDA ``device``.
    device : str
    overhead_ns : float
        Fixed forward time per call.
    jitter : float
        Sigma of a seeded log-normal factor on every call (0: exact).
    drift : callable, optional
        ``drift(now_ns) -> factor``: a machine getting slower or faster over time.
    switch_penalty_ns : float
        Extra time when the previous simulated call was another model's (cold caches).
    preprocess_ns : float
        Preprocessing time per example (on the host clock).
    memory_bytes : int
        Simulated device memory one forward call allocates per example (freed after it).
    weight_bytes : int
        The model's weights, held from construction on: allocated on the fake GPU for a CUDA
        ``device``, a real (touched) host array on the CPU, so memory measurements see them.
        :meth:`parameter_bytes` reports them.
    first_call_ns : float
        Extra time of the first forward call only (lazy initialisation).
    seed : int
    """

    kind = "python"

    def __init__(
        self,
        name: str,
        *,
        cost_ns: float,
        clock: FakeClock,
        backend: FakeCudaBackend | None = None,
        device: str = "cpu",
        overhead_ns: float = 0.0,
        jitter: float = 0.0,
        drift: Callable[[int], float] | None = None,
        switch_penalty_ns: float = 0.0,
        preprocess_ns: float = 0.0,
        launch_ns: float = 1_000.0,
        memory_bytes: int = 0,
        weight_bytes: int = 0,
        first_call_ns: float = 0.0,
        seed: int = 0,
    ) -> None:
        super().__init__(
            model_settings(name=name, kind="python", source="simulated"),
            LoadContext(label_names=("negative", "positive"), modality="features", device=device),
        )
        self.cost_ns, self.overhead_ns, self.jitter = cost_ns, overhead_ns, jitter
        self.clock, self.backend, self.drift = clock, backend, drift
        self.switch_penalty_ns, self.preprocess_ns, self.launch_ns = switch_penalty_ns, preprocess_ns, launch_ns
        self.memory_bytes, self.weight_bytes, self.first_call_ns = memory_bytes, int(weight_bytes), first_call_ns
        self.calls = 0
        self._rng = np.random.default_rng(seed)
        self._weights: np.ndarray | None = None
        if self.weight_bytes and backend is not None and device.startswith("cuda"):
            backend.allocate(device, self.weight_bytes)
        elif self.weight_bytes:
            self._weights = np.ones(self.weight_bytes, dtype=np.uint8)  # ones: every page touched, resident

    def parameter_bytes(self) -> int:
        return self.weight_bytes

    def release(self) -> None:
        """Free the weights (on the fake GPU: hand the bytes back)."""
        if self.weight_bytes and self.backend is not None and self.device.startswith("cuda"):
            self.backend.free(self.device, self.weight_bytes)
        self._weights = None

    @classmethod
    def load(cls, config: ModelConfig, context: LoadContext) -> SimulatedAdapter:
        raise NotImplementedError("SimulatedAdapter is built directly, not loaded from a config")

    def preprocess(self, examples: Sequence[Any]) -> np.ndarray:
        self.clock.advance(self.preprocess_ns * len(examples))
        return np.asarray(examples)

    def to_device(self, inputs: Any) -> Any:
        return inputs  # nothing to move: the device is simulated

    def forward(self, inputs: Any) -> np.ndarray:
        n = len(inputs)
        ns = self.overhead_ns + self.cost_ns * n
        if self.drift is not None:
            ns *= self.drift(self.clock._now)
        if self.jitter:
            ns *= float(self._rng.lognormal(0.0, self.jitter))
        if self.clock.last_model not in (None, self.name):
            ns += self.switch_penalty_ns
        if self.calls == 0:
            ns += self.first_call_ns
        self.clock.last_model = self.name
        self.calls += 1
        if self.backend is not None and self.device.startswith("cuda"):
            self.backend.allocate(self.device, self.memory_bytes * n)
            self.backend.run_kernel(self.device, ns)
            self.backend.free(self.device, self.memory_bytes * n)
            self.clock.advance(self.launch_ns)
        else:
            self.clock.advance(ns)
        return np.zeros((n, 2))
