"""Speed of two real timm models at random init (image_size 32): the bigger one is measured slower."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("timm")

from headtohead.adapters import LoadContext, create_adapter  # noqa: E402
from headtohead.config.schema import model_settings  # noqa: E402
from headtohead.config.speed import SpeedConfig  # noqa: E402
from headtohead.data.base import Dataset  # noqa: E402
from headtohead.engines.speed import measure_speed  # noqa: E402
from headtohead.report.words.speed import speed_verdict_lines, with_speed_sentences  # noqa: E402


def test_two_tiny_timm_models():
    labels = ("ant", "bee")
    context = LoadContext(label_names=labels, modality="image")
    small, big = (
        create_adapter(model_settings(name=name, kind="timm", source=name, image_size=32), context)
        for name in ("test_efficientnet", "resnet10t")
    )
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 256, (40, 48, 3), dtype=np.uint8) for _ in range(16)]
    dataset = Dataset("in-memory", "image", images, np.arange(16) % 2, labels)
    config = SpeedConfig(
        warmup_iterations=2,
        warmup_seconds=0.0,
        min_iterations=5,
        min_seconds=0.2,
        rounds=5,
        precision=None,  # a fixed number of rounds
        num_batches=2,
        num_threads=1,
        pipeline_iterations=2,
        memory_iterations=2,
    )
    summary = measure_speed([small, big], dataset, config, batch_size=8, load_times={"test_efficientnet": 0.1})
    offline = summary.scenario("offline").comparisons[0]
    # ratio = time a / time b; 5 rounds on a shared machine: the interval's width is the machine's noise, the
    # estimate and the decision are the model's (about 0.28 here)
    assert offline.faster == "test_efficientnet" and offline.ratio < 0.5, offline.verdict
    assert offline.ci_low <= offline.ratio <= offline.ci_high
    record = summary.model("resnet10t")
    assert record.num_parameters == sum(p.numel() for p in big.module.parameters())
    assert record.pipeline.preprocess.mean_s > 0 and record.pipeline.batch_size == 8
    assert record.offline.per_sample.p50_s == pytest.approx(record.offline.per_batch.p50_s / 8)
    # no recipe: measured beside the other model, so only the weights and the calls' growth are its own
    assert record.memory.weights_mb == pytest.approx(record.parameter_bytes / 2**20)
    assert not record.memory.isolated and record.memory.model_peak_mb is None and record.cold_start is None
    assert summary.model("test_efficientnet").load_time_s == 0.1 and record.load_time_s is None
    assert any("test_efficientnet is" in line for line in speed_verdict_lines(with_speed_sentences(summary)))
