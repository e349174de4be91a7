"""``h2h sweep`` takes the options every command that runs models takes, and each takes effect:
``--resume`` re-uses the models whose sweep finished, ``--overwrite`` is needed for another
experiment's folder, ``--offline`` and ``--deterministic`` hold while the models are swept."""

from __future__ import annotations

import json
import os

import pytest
import torch
import yaml

import headtohead.pipeline.sweep as sweep_module
from headtohead.errors import DataError, ResultsError
from headtohead.pipeline.sweep import run_sweep

RAW = {
    "name": "sweep-options",
    "data": {"path": "sklearn:iris"},
    "models": [
        {
            "name": name,
            "kind": "python",
            "source": "headtohead.testing.models:tiny_mlp",
            "model_args": {"n_features": 4, "n_classes": 3, "seed": seed},
        }
        for name, seed in (("a", 0), ("b", 1))
    ],
    "eval": {"batch_size": 16, "device": "cpu"},
    "stats": {"n_resamples": 200},
    "speed": {
        "min_seconds": 0.02,
        "rounds": 5,
        "precision": None,  # a fixed number of rounds
        "min_iterations": 5,
        "warmup_iterations": 1,
        "warmup_seconds": 0.0,
        "pipeline_iterations": 0,
        "memory": False,
        "n_resamples": 200,
        "num_batches": 1,
    },
    "sweep": {"precision": ["fp32"], "batch_size": [8], "max_accuracy_drop": "1pp"},
}


@pytest.fixture
def experiment(tmp_path):
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(RAW, sort_keys=False))
    return path


@pytest.fixture
def swept(monkeypatch):
    """The models swept now (not re-used), with the switches that held while each was swept."""
    calls: list[dict] = []
    real = sweep_module.sweep_model

    def recording(model_cfg, *args, **kwargs):
        calls.append(
            {
                "model": model_cfg.name,
                "offline": os.environ.get("HF_HUB_OFFLINE"),
                "deterministic": torch.are_deterministic_algorithms_enabled(),
            }
        )
        return real(model_cfg, *args, **kwargs)

    monkeypatch.setattr(sweep_module, "sweep_model", recording)
    return calls


def test_resume_reuses_the_finished_models_and_gives_the_same_record(experiment, tmp_path, swept):
    out = tmp_path / "out"
    first = run_sweep(experiment, out_dir=out)
    assert [c["model"] for c in swept] == ["a", "b"] and first.result.settings["max_accuracy_drop"] == 0.01
    swept.clear()
    resumed = run_sweep(experiment, out_dir=out, resume=True)
    assert swept == []  # nothing swept again
    assert resumed.result.models == first.result.models
    assert resumed.result.recommendation == first.result.recommendation
    again = run_sweep(experiment, out_dir=out)  # without --resume: every model again
    assert [c["model"] for c in swept] == ["a", "b"] and len(again.result.models) == 2
    swept.clear()
    other = run_sweep(experiment, out_dir=out, resume=True, sweep={"batch_size": [4]})
    assert [c["model"] for c in swept] == ["a", "b"]  # other settings: nothing to re-use
    assert other.result.models[0].batch_sizes == [4]


def test_resume_refuses_a_sweep_on_changed_data(experiment, tmp_path):
    out = tmp_path / "out"
    run_sweep(experiment, out_dir=out, sweep={"models": ["a"]})
    with pytest.raises(DataError, match="the data changed since"):
        run_sweep(
            experiment,
            out_dir=out,
            resume=True,
            overrides=["data.path=sklearn:wine", "models.a.model_args.n_features=13"],
        )


def test_another_experiments_folder_needs_overwrite(experiment, tmp_path, swept):
    out = tmp_path / "out"
    out.mkdir()
    (out / "sweep.json").write_text(json.dumps({"name": "someone-else", "models": []}))
    with pytest.raises(ResultsError, match="someone-else.*--overwrite"):
        run_sweep(experiment, out_dir=out, sweep={"models": ["a"]})
    assert swept == []  # refused before any work
    run_sweep(experiment, out_dir=out, sweep={"models": ["a"]}, overwrite=True)
    assert json.loads((out / "sweep.json").read_text())["name"] == "sweep-options"


def test_offline_and_deterministic_hold_while_models_are_swept(experiment, monkeypatch, swept):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    run_sweep(experiment, sweep={"models": ["a"]}, offline=True, deterministic=True)
    run_sweep(experiment, sweep={"models": ["a"]})
    assert [(c["offline"], c["deterministic"]) for c in swept] == [("1", True), (None, False)]
    assert os.environ.get("HF_HUB_OFFLINE") is None and not torch.are_deterministic_algorithms_enabled()
