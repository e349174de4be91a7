"""``h2h train`` takes the options every command that runs models takes, and each takes effect:
``--no-resume`` trains again, ``--overwrite`` is needed (before any training) for another
experiment's folder, ``--offline`` and ``--deterministic`` hold while the models train."""

from __future__ import annotations

import json
import os

import pytest
import torch
import yaml

import headtohead.pipeline.training as training_module
from headtohead.errors import ResultsError
from headtohead.pipeline.training import train_experiment
from headtohead.testing.data import make_text_table

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def experiment(tmp_path_factory):
    from headtohead.testing.text import make_tiny_bert

    root = tmp_path_factory.mktemp("train-options")
    make_text_table(root / "train.csv", n_per_class=8, seed=1)
    make_text_table(root / "dev.csv", n_per_class=6, seed=2)
    make_tiny_bert(root / "bert", ["negative", "positive"], seed=1)
    raw = {
        "name": "train-options",
        "data": {"path": "dev.csv", "train": "train.csv"},
        "models": [{"name": "bert", "kind": "transformers", "source": "bert", "max_length": 16}],
        "eval": {"batch_size": 12, "device": "cpu"},
        "speed": {"enabled": False},
        "train": {"epochs": 1, "batch_size": 8, "timing_warmup_steps": 0},
    }
    path = root / "exp.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


@pytest.fixture
def trained(monkeypatch):
    """The trainings made now (not re-used), with the switches that held while each ran."""
    calls: list[tuple] = []
    real = training_module.train_one

    def recording(model, **kwargs):
        calls.append((model.name, os.environ.get("HF_HUB_OFFLINE"), torch.are_deterministic_algorithms_enabled()))
        return real(model, **kwargs)

    monkeypatch.setattr(training_module, "train_one", recording)
    return calls


def test_resume_is_the_default_and_no_resume_trains_again(experiment, tmp_path, trained):
    out = tmp_path / "out"
    train_experiment(experiment, out_dir=out)
    assert len(trained) == 1
    lines: list[str] = []
    train_experiment(experiment, out_dir=out, on_event=lines.append)
    assert len(trained) == 1 and any("reusing it" in line for line in lines)
    lines.clear()
    train_experiment(experiment, out_dir=out, on_event=lines.append, resume=False)
    assert len(trained) == 2 and not any("reusing it" in line for line in lines)


def test_another_experiments_folder_is_refused_before_training(experiment, tmp_path, trained):
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json").write_text(json.dumps({"name": "someone-else", "models": [], "stats": {}}))
    with pytest.raises(ResultsError, match="someone-else.*--overwrite"):
        train_experiment(experiment, out_dir=out)
    assert trained == []
    outcome = train_experiment(experiment, out_dir=out, overwrite=True)
    assert len(trained) == 1 and outcome.run.result.name == "train-options"


def test_offline_and_deterministic_hold_while_models_train(experiment, tmp_path, monkeypatch, trained):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    train_experiment(experiment, out_dir=tmp_path / "a", offline=True, deterministic=True)
    train_experiment(experiment, out_dir=tmp_path / "b")
    assert [switches for _, *switches in trained] == [["1", True], [None, False]]
    assert os.environ.get("HF_HUB_OFFLINE") is None and not torch.are_deterministic_algorithms_enabled()


def test_the_cli_passes_the_options_through(experiment, tmp_path, trained):
    from headtohead.cli.main import main

    out = tmp_path / "out"
    main(["train", str(experiment), "--out", str(out)])
    main(["train", str(experiment), "--out", str(out), "--no-resume", "--offline", "--deterministic"])
    assert [switches for _, *switches in trained][1] == ["1", True] and len(trained) == 2
