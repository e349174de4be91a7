"""Every CUDA path on a real GPU (marked ``gpu``; skipped where there is none).

The fakes in :mod:`headtohead.testing.fake_device` run these paths everywhere; these tests
show they hold on a GPU: CUDA-event timing against ``torch.utils.benchmark``, a run on CUDA
predicting what the CPU predicts, telemetry, energy and memory per model, deterministic
algorithms, and fp16 / bf16 training.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]


@pytest.fixture(scope="module")
def text_experiment(tmp_path_factory):
    from headtohead.testing.data import make_text_table
    from headtohead.testing.text import make_tiny_bert

    root = tmp_path_factory.mktemp("gpu")
    make_text_table(root / "dev.tsv", n_per_class=40, seed=3)
    make_text_table(root / "train.tsv", n_per_class=40, seed=4)
    make_tiny_bert(root / "bert", seed=1, hidden_size=64, layers=2, heads=2)
    return {
        "name": "gpu",
        "data": {"path": str(root / "dev.tsv"), "train": str(root / "train.tsv")},
        "models": [{"name": "bert", "kind": "transformers", "source": str(root / "bert"), "max_length": 32}],
        "eval": {"batch_size": 16, "device": "cuda"},
        "stats": {"n_resamples": 200},
    }


def test_cuda_event_latency_agrees_with_torch_utils_benchmark():
    import statistics

    import torch.utils.benchmark as torch_benchmark

    from headtohead.engines.timing import make_timer, run_timed

    layer = torch.nn.Linear(4096, 4096, device="cuda")
    x = torch.randn(256, 4096, device="cuda")
    forward = lambda batch: layer(batch)  # noqa: E731
    timer = make_timer("cuda:0")
    for _ in range(20):
        forward(x)
    ratios = []
    for _ in range(3):
        ours = statistics.median(run_timed(timer, forward, [x], min_iterations=200, min_ns=int(0.2e9)))
        theirs = (
            torch_benchmark.Timer("forward(x)", globals={"forward": forward, "x": x})
            .blocked_autorange(min_run_time=0.2)
            .median
        )
        ratios.append(ours / 1e9 / theirs)
    assert 0.9 < statistics.median(ratios) < 1.1, ratios


def test_a_run_on_cuda_predicts_what_the_cpu_predicts_and_measures_the_gpu(text_experiment, tmp_path):
    import headtohead

    speed = {
        "scenarios": ["offline", "single_stream"],
        "rounds": 5,
        "precision": None,  # a fixed number of rounds
        "min_seconds": 0.1,
        "warmup_seconds": 0.05,
        "single_stream_inputs": 8,
        "price_per_hour": 2.0,
    }
    gpu = headtohead.run({**text_experiment, "speed": speed}, out_dir=tmp_path / "gpu")
    cpu = headtohead.run({**text_experiment, "eval": {"batch_size": 16, "device": "cpu"}, "speed": {"enabled": False}})
    np.testing.assert_allclose(gpu.predictions["bert"].proba, cpu.predictions["bert"].proba, atol=1e-4)
    assert gpu.result.model("bert").device == "cuda:0"
    model = gpu.result.speed.model("bert")
    assert model.offline.timer == "cuda_event" and model.single_stream.timer == "cuda_event"
    telemetry = model.offline.telemetry
    assert telemetry is not None and telemetry.available and telemetry.samples > 0 and telemetry.power_w.mean > 0
    memory = model.memory
    assert memory.isolated and memory.cuda_model_peak_mb >= memory.weights_mb > 0
    assert gpu.result.speed.device_warmup_s is not None and model.cold_start is not None
    cost = model.cost.scenario("offline")
    assert cost.energy_j is not None and cost.energy_j > 0 and cost.cost_per_million > 0


def test_deterministic_algorithms_run_on_cuda_and_repeat_exactly(text_experiment):
    import headtohead

    first = headtohead.run({**text_experiment, "speed": {"enabled": False}}, deterministic=True)
    second = headtohead.run({**text_experiment, "speed": {"enabled": False}}, deterministic=True)
    np.testing.assert_array_equal(first.predictions["bert"].proba, second.predictions["bert"].proba)


@pytest.mark.parametrize("precision", ["fp16", "bf16"])
def test_training_on_cuda_with_autocast(text_experiment, tmp_path, precision):
    import headtohead

    exp = {
        **text_experiment,
        "speed": {"enabled": False},
        "train": {
            "max_steps": 12,
            "batch_size": 8,
            "precision": precision,
            "timing_warmup_steps": 2,
            "eval_each_epoch": False,
        },
    }
    outcome = headtohead.train(exp, out_dir=tmp_path / precision)
    (run,) = outcome.training.runs
    assert run.device.startswith("cuda") and run.precision == precision
    assert np.isfinite(run.steps.loss).all() and run.samples_per_s > 0
    assert run.cuda_max_allocated_mb is not None and run.cuda_max_allocated_mb > 0
