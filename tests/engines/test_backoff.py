"""Out of device memory in the quality pass (fake GPU): the batch again in halves, in order; recorded."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from headtohead.adapters.base import LoadContext, ModelAdapter
from headtohead.config import model_settings
from headtohead.data import Dataset
from headtohead.engines.backoff import split_inputs
from headtohead.engines.batching import plan_batches
from headtohead.engines.evaluate import evaluate_model
from headtohead.errors import ModelError
from headtohead.runtime.devices import use_backend
from headtohead.testing.fake_device import FakeCudaBackend

LABELS = ("a", "b", "c")
PER_EXAMPLE = 1_000


class HungryLookup(ModelAdapter):
    """Scores each example by a table, "on" a fake GPU: a forward pass needs PER_EXAMPLE bytes per example."""

    kind = "python"
    modalities = ("features",)

    def __init__(self, scores, backend, device="cuda:0", fail=None):
        super().__init__(
            model_settings(name="hungry", kind="python", source="x:y"), LoadContext(LABELS, "features", device=device)
        )
        self.scores, self.backend, self.fail = scores, backend, fail
        self.label_names = LABELS
        self.module = torch.nn.Identity()
        self.calls: list[list[int]] = []

    @classmethod
    def load(cls, config, context):  # pragma: no cover - built directly
        raise AssertionError

    def preprocess(self, examples):
        return torch.tensor([int(row[0]) for row in examples])

    def to_device(self, inputs):
        return inputs  # the device is simulated

    def forward(self, inputs):
        rows = inputs.tolist()
        self.calls.append(rows)
        if self.fail is not None:
            raise self.fail
        if self.backend is not None:
            self.backend.allocate(self.device, PER_EXAMPLE * len(rows))  # raises beyond memory_limit
            self.backend.free(self.device, PER_EXAMPLE * len(rows))
        return torch.as_tensor(self.scores[rows], dtype=torch.float32)


def _data(n=40):
    labels = np.arange(n) % 3
    return Dataset("mem", "features", np.arange(n, dtype=np.float32).reshape(n, 1), labels, LABELS)


def test_a_batch_that_runs_out_of_memory_runs_again_in_halves_in_order():
    data, plan = _data(), plan_batches(40, 16)  # batches of 16, 16, 8
    scores = np.random.default_rng(0).normal(size=(40, 3))
    reference = evaluate_model(HungryLookup(scores, None, device="cpu"), data, plan)
    backend = FakeCudaBackend(memory_limit=5 * PER_EXAMPLE)  # up to 5 examples at a time fit
    with use_backend(backend):
        model = HungryLookup(scores, backend)
        ev = evaluate_model(model, data, plan, prefetch=0)
    # the first batch: 16 fails, its first half (8) fails, then pieces of 4; later batches are cut at once
    sizes = [len(call) for call in model.calls]
    assert sizes == [16, 8] + [4] * 10
    assert sum(model.calls[2:], []) == list(range(40))  # every example once, in plan order
    assert [(e.batch, e.batch_size, e.sub_batch_size, e.error) for e in ev.backoff] == [
        (0, 16, 8, "OutOfMemoryError"),
        (0, 8, 4, "OutOfMemoryError"),
    ]
    assert backend.cache_empties == ["cuda:0", "cuda:0"]  # the allocator's cache handed back before each retry
    np.testing.assert_array_equal(ev.pred, reference.pred)
    np.testing.assert_allclose(ev.proba, reference.proba, rtol=1e-6)
    assert ev.n_batches == len(plan) == 3 and ev.plan_hash == plan.hash()  # the plan itself is unchanged


def test_one_example_that_does_not_fit_is_an_error_and_other_errors_pass_through():
    data, plan = _data(12), plan_batches(12, 4)
    scores = np.zeros((12, 3))
    backend = FakeCudaBackend(memory_limit=PER_EXAMPLE // 2)
    with (
        use_backend(backend),
        pytest.raises(
            ModelError,
            match=r"ran out of memory on cuda:0 even for one example "
            r"at a time \(batch 1 of the plan; OutOfMemoryError\)",
        ),
    ):
        evaluate_model(HungryLookup(scores, backend), data, plan, prefetch=0)
    with use_backend(FakeCudaBackend()), pytest.raises(ValueError, match="not memory"):
        evaluate_model(HungryLookup(scores, None, fail=ValueError("not memory")), data, plan, prefetch=0)
    host = HungryLookup(scores, None, fail=MemoryError("host"))  # the host's memory: no batch-size back-off
    with use_backend(FakeCudaBackend()), pytest.raises(MemoryError):
        evaluate_model(host, data, plan, prefetch=0)
    assert len(host.calls) == 1


def test_inputs_are_cut_along_their_batch_axis():
    ids, mask = torch.arange(10).reshape(5, 2), torch.ones(5, 2)
    first, rest = split_inputs({"input_ids": ids, "attention_mask": mask, "return_dict": True}, 5, 3)
    assert first["input_ids"].tolist() == ids[:3].tolist() and rest["attention_mask"].shape == (2, 2)
    assert first["return_dict"] is rest["return_dict"] is True
    assert split_inputs(["t1", "t2", "t3"], 3, 2) == (["t1", "t2"], ["t3"])
    pair = (torch.zeros(2, 4), torch.ones(2, 4))  # two batched parts of a batch of 2, not two examples
    a, b = split_inputs(pair, 2, 1)
    assert a[0].shape == (1, 4) and b[1].tolist() == [[1.0] * 4]
