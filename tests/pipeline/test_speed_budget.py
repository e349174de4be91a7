"""A run's speed rounds get a budget that scales with its quality pass (issue 42)."""

from __future__ import annotations

import pytest

import headtohead

MLP = {
    "name": "mlp",
    "kind": "python",
    "source": "headtohead.testing.models:tiny_mlp",
    "model_args": {"n_features": 4, "n_classes": 3},
}


def test_the_budget_is_a_share_of_the_timed_models_quality_pass(tmp_path):
    experiment = {
        "name": "budget",
        "data": {"path": "sklearn:iris"},
        "models": [MLP, {**MLP, "name": "mlp2"}],
        "stats": {"n_resamples": 200},
        "speed": {
            "scenarios": ["offline", "single_stream"],
            "memory": False,
            "pipeline_iterations": 0,
            "min_seconds": 0.0,
            "budget": 4.0,
            "budget_floor_seconds": 0.01,
        },
    }
    result = headtohead.run(experiment, out_dir=tmp_path / "out").result
    quality = sum(m.eval_time_s for m in result.models)
    assert quality > 0
    for run in result.speed.scenarios:
        assert run.quality_s == pytest.approx(quality)
        # 4 × the quality pass shared by the two timed scenarios, above the floor
        assert run.budget_s == pytest.approx(max(4.0 * quality, 0.01) / 2)
