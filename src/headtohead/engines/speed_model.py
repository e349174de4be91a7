"""A model as the speed engine holds it: its adapter, its inputs staged on the device, what was measured.

:func:`stage` preprocesses every timed batch once and moves it to the model's device, timing
the first preprocess and the first forward call of the speed pass (cold only when nothing
ran the model before; the true cold start is measured in a fresh process,
:mod:`headtohead.engines.isolated`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from headtohead.adapters.base import ModelAdapter
from headtohead.engines.speed_inputs import prepare
from headtohead.engines.timing import Clock, HostTimer
from headtohead.errors import ConfigError
from headtohead.results.speed import ScenarioTiming
from headtohead.runtime.devices import get_backend

__all__ = ["StagedModel", "stage"]


@dataclass
class StagedModel:
    """One adapter and what the engine has staged and measured for it."""

    adapter: ModelAdapter
    seq_len: int | None
    #: its quality pass ran in this process at the offline batch size: already warm, its first call seen
    warm: bool = False
    warnings: list[str] = field(default_factory=list)
    staged: dict[str, list[Any]] = field(default_factory=dict)
    seq_len_applied: bool = False
    first_preprocess_ns: int = 0
    first_call_ns: int = 0
    timings: dict[str, ScenarioTiming] = field(default_factory=dict)

    def __post_init__(self) -> None:
        limit = getattr(self.adapter, "max_length", None)
        if self.seq_len is not None and isinstance(limit, int) and self.seq_len > limit:
            raise ConfigError(
                f"speed.fixed_shape.sequence_length is {self.seq_len} but model '{self.name}' reads at "
                f"most {limit} tokens (its max_length); lower sequence_length or raise max_length"
            )

    @property
    def name(self) -> str:
        return self.adapter.name

    @property
    def device(self) -> str:
        return str(self.adapter.device)

    def prepare(self, examples: Any) -> Any:
        """Preprocess on the CPU, then pad/truncate to the fixed sequence length if one is set."""
        inputs, applied = prepare(self.adapter, examples, self.seq_len)
        self.seq_len_applied = self.seq_len_applied or applied
        return inputs

    def step(self, examples: Any) -> None:
        """One end-to-end inference step, synchronised."""
        self.adapter.forward(self.adapter.to_device(self.prepare(examples)))
        if self.device != "cpu":
            get_backend().synchronize(self.device)


def stage(model: StagedModel, raw: Mapping[str, Sequence[Any]], scenarios: Sequence[str], clock: Clock) -> None:
    """Preprocess every batch once and move it to the device; time the first preprocess and forward call.

    A warm model's first call is not made again: its quality pass made it, and its cold first call
    is measured where it is cold, in the fresh process of the memory probe.
    """
    first = True
    for scenario in scenarios:
        staged = []
        for examples in raw[scenario]:
            began = clock()
            inputs = model.prepare(examples)
            if first:
                model.first_preprocess_ns = clock() - began
            staged.append(model.adapter.to_device(inputs))
            if first and model.warm:
                first = False
            elif first:
                timer = HostTimer(model.device, clock=clock)
                token = timer.start()
                model.adapter.forward(staged[0])
                model.first_call_ns = timer.stop(token)
                first = False
        model.staged[scenario] = staged
    if model.seq_len is not None and not model.seq_len_applied:
        model.warnings.append(
            f"fixed_shape.sequence_length is ignored for model '{model.name}': its inputs "
            f"are not token ids (only the batch size is fixed)"
        )
