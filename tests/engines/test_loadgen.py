"""The LoadGen layer: collating preprocessed examples, the dynamic batcher, LoadGen's logs read back."""

from __future__ import annotations

import sys
import threading
import time

import numpy as np
import pytest

from headtohead.engines.loadgen import (
    DETAIL_LOG,
    SUMMARY_LOG,
    DynamicBatcher,
    LoadGenTest,
    ServedModel,
    collate,
    require_loadgen,
    run_loadgen,
)
from headtohead.errors import ConfigError

torch = pytest.importorskip("torch")


def test_collate_pads_token_ids_like_the_tokenizer_would():
    a = {"input_ids": torch.tensor([[101, 7, 8, 102]]), "attention_mask": torch.ones(1, 4, dtype=torch.long)}
    b = {"input_ids": torch.tensor([[101, 102]]), "attention_mask": torch.ones(1, 2, dtype=torch.long)}
    batch = collate([a, b], pad_id=0)
    assert batch["input_ids"].tolist() == [[101, 7, 8, 102], [101, 102, 0, 0]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1, 1], [1, 1, 0, 0]]
    assert collate([torch.zeros(1, 3), torch.ones(1, 3)]).shape == (2, 3)
    assert collate([["x"], ["y"]]) == ["x", "y"]
    with pytest.raises(TypeError):
        collate([object(), object()])


@pytest.mark.serial
def test_batcher_fills_batches_and_serves_a_lone_request_after_max_wait():
    served: list[tuple[float, list[int]]] = []
    first_twenty, done = threading.Event(), threading.Event()

    def serve(items: list[int]) -> None:
        served.append((time.perf_counter(), items))
        total = sum(len(b) for _, b in served)
        if total == 20:
            first_twenty.set()
        if total == 21:
            done.set()

    batcher = DynamicBatcher(serve, max_batch=8, max_wait_s=0.05).start()
    batcher.submit(list(range(20)))  # 20 waiting: two full batches, then the rest once the oldest waited 50 ms
    assert done.wait(0) is False
    assert first_twenty.wait()  # events, not seconds: a loaded machine is slow, not wrong
    began = time.perf_counter()
    batcher.submit([99])  # alone: it waits max_wait for company, then leaves
    assert done.wait()
    batcher.stop()
    assert [items for _, items in served] == [list(range(8)), list(range(8, 16)), list(range(16, 20)), [99]]
    assert served[-1][0] - began >= 0.045  # it waited for company (how much longer is the machine's business)
    assert (batcher.batches, batcher.requests) == (4, 21) and batcher.error is None


def test_missing_loadgen_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "mlperf_loadgen", None)  # import fails as when not installed
    with pytest.raises(ConfigError, match=r"pip install 'headtohead\[loadgen\]'"):
        require_loadgen()


class _Echo:
    name, device = "echo", "cpu"

    def preprocess(self, examples):  # noqa: ANN001, ANN201
        return np.asarray(examples, dtype=float).reshape(len(examples), -1)

    def to_device(self, inputs):  # noqa: ANN001, ANN201
        return inputs

    def forward(self, inputs):  # noqa: ANN001, ANN201
        time.sleep(0.001)
        return inputs


@pytest.mark.serial
def test_a_real_loadgen_server_run_is_read_back_and_its_logs_kept(tmp_path):
    pytest.importorskip("mlperf_loadgen")
    model = ServedModel(_Echo(), [[float(i)] for i in range(64)])
    test = LoadGenTest("Server", 0.3, 100, (1, 2, 3), target_qps=200.0, latency_bound_ms=100.0)
    run, queue = run_loadgen(model, test, batcher=(8, 0.002), log_dir=tmp_path / "trial")
    files = sorted(p.name for p in (tmp_path / "trial").iterdir())
    assert files == [DETAIL_LOG, SUMMARY_LOG]  # no empty trace or accuracy log left behind
    summary = (tmp_path / "trial" / SUMMARY_LOG).read_text()
    assert f"Result is : {'VALID' if run.valid else 'INVALID'}" in summary
    assert run.scenario == "Server" and run.query_count >= 100 and queue.requests == run.query_count
    assert run.percentile_s("99.00") >= run.percentile_s("50.00") >= 0.001  # every answer took the 1 ms call
    assert run.early_stopping_met is not None and run.scheduled_samples_per_s == pytest.approx(200.0, rel=0.3)
    assert model.preprocessed_ahead and run.log_dir == str(tmp_path / "trial")
