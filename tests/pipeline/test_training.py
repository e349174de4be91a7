"""``h2h train`` end to end on the CPU: two text and two image models trained identically, saved,
reloaded through the normal adapters and compared; seeds, re-runs, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
import typer
import yaml
from typer.testing import CliRunner

import headtohead
from headtohead.config import Experiment
from headtohead.errors import ConfigError, DataError
from headtohead.pipeline.training import train_experiment
from headtohead.results.training_file import TrainingResult
from headtohead.testing.data import make_image_folder, make_text_table

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _quick(raw: dict) -> dict:
    """Skip the speed measurement of the comparison where the experiment has one (it is tested elsewhere)."""
    if "speed" in Experiment.model_fields:
        raw["speed"] = {"enabled": False}
    return raw


def _cli(*args: str):
    from headtohead.cli.train import train

    app = typer.Typer()
    app.command("train")(train)
    app.command("noop")(lambda: None)  # two commands: typer keeps the subcommand name
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def text_experiment(tmp_path_factory):
    from headtohead.testing.text import make_tiny_bert, make_tiny_roberta

    root = tmp_path_factory.mktemp("train-text")
    make_text_table(root / "train.csv", n_per_class=24, seed=1)
    make_text_table(root / "dev.csv", n_per_class=10, seed=2)
    make_tiny_bert(root / "bert", ["negative", "positive"], seed=1)
    make_tiny_roberta(root / "roberta", ["positive", "negative"], seed=2)  # outputs in the other order
    raw = _quick(
        {
            "name": "tiny-train",
            "data": {"path": "dev.csv", "train": "train.csv"},
            "models": [
                {"name": "bert", "kind": "transformers", "source": "bert", "max_length": 24},
                {"name": "roberta", "kind": "transformers", "source": "roberta", "max_length": 24},
            ],
            "eval": {"batch_size": 10, "device": "cpu"},
            "train": {
                "epochs": 2,
                "batch_size": 8,
                "learning_rate": 3e-3,
                "seeds": [1, 2],
                "timing_warmup_steps": 1,
                "target": {"metric": "loss", "value": 5.0},
            },
        }
    )
    path = root / "exp.yaml"
    path.write_text(yaml.safe_dump(raw))
    out = root / "out"
    return path, out, _cli("train", str(path), "--out", str(out))


def test_text_models_train_identically_and_are_compared(text_experiment):
    path, out, cli = text_experiment
    assert cli.exit_code == 0, cli.output
    assert "Training (identical order and settings)" in cli.output and "Across seeds 1, 2" in cli.output
    record = TrainingResult.model_validate_json((out / "training.json").read_text())
    summary = record.training
    assert record.environment.torch and summary.seeds == [1, 2] and summary.n_train == 48
    assert [(r.model, r.seed) for r in summary.runs] == [("bert", 1), ("roberta", 1), ("bert", 2), ("roberta", 2)]
    assert summary.identical_order()
    assert summary.run("bert", 1).order_hash == summary.run("roberta", 1).order_hash
    assert summary.run("bert", 1).order_hash != summary.run("bert", 2).order_hash
    for run in summary.runs:
        assert run.samples_per_s > 0 and run.tokens_per_s > run.samples_per_s and 0 <= run.data_wait_fraction < 1
        assert len(run.epochs) == 2 and all(e.eval for e in run.epochs) and run.time_to_target_s is not None
        assert run.end_to_end_s >= sum(e.train_s for e in run.epochs) and run.rss_peak_mb > 0
    multi = summary.multi_seed
    assert [m.model for m in multi.models] == ["bert", "roberta"] and multi.comparisons[0].n_seeds == 2


def test_the_comparison_runs_on_the_saved_weights(text_experiment):
    _, out, _ = text_experiment
    result = headtohead.load_result(out / "results.json")
    summary = TrainingResult.model_validate_json((out / "training.json").read_text()).training
    saved = yaml.safe_load((out / "experiment.yaml").read_text())
    assert "train" not in saved
    assert [m["source"] for m in saved["models"]] == [summary.run("bert").saved_to, summary.run("roberta").saved_to]
    config = json.loads((out / "models" / "roberta" / "seed-1" / "config.json").read_text())
    assert config["id2label"] == {"0": "positive", "1": "negative"}  # output order kept, named by the data
    assert result.model("roberta").label_alignment == "remapped"
    for name in ("bert", "roberta"):
        # the last epoch's evaluation is the same quality pass, on the same weights
        assert result.model(name).quality.accuracy == pytest.approx(summary.run(name).final_eval["accuracy"])
    rerun = headtohead.run(out / "experiment.yaml")
    assert [m.quality.accuracy for m in rerun.result.models] == [m.quality.accuracy for m in result.models]
    if "training" in type(result).model_fields:
        assert result.training == summary
    assert not (out / "checkpoints" / "bert" / "seed-1").exists()  # finished: only the trained weights are kept


def test_a_second_run_reuses_finished_trainings(text_experiment):
    path, out, _ = text_experiment
    before = TrainingResult.model_validate_json((out / "training.json").read_text()).training
    lines: list[str] = []
    outcome = train_experiment(path, out_dir=out, on_event=lines.append)
    assert sum("reusing it" in line for line in lines) == 4
    assert outcome.training.runs == before.runs


def test_two_image_families_train_and_reload(tmp_path):
    from headtohead.adapters.weights import read_checkpoint_labels

    make_image_folder(tmp_path / "train", classes=("ants", "bees"), n_per_class=10, size=32, seed=0)
    make_image_folder(tmp_path / "val", classes=("ants", "bees"), n_per_class=5, size=32, seed=1)
    raw = _quick(
        {
            "name": "tiny-images",
            "data": {"path": "val", "train": "train"},
            "models": [
                {
                    "name": "resnet",
                    "kind": "timm",
                    "source": "resnet10t",
                    "image_size": 32,
                    "model_args": {"channels": [16, 32, 64, 128]},
                },
                {"name": "mobilenet", "kind": "torchvision", "source": "mobilenet_v3_small", "image_size": 32},
            ],
            "eval": {"batch_size": 10, "device": "cpu"},
            "train": {"epochs": 2, "batch_size": 5, "learning_rate": 3e-3, "timing_warmup_steps": 1},
        }
    )
    (tmp_path / "exp.yaml").write_text(yaml.safe_dump(raw))
    outcome = train_experiment(tmp_path / "exp.yaml", out_dir=tmp_path / "out")
    assert [m.name for m in outcome.run.result.models] == ["resnet", "mobilenet"]
    runs = outcome.training.runs
    assert runs[0].order_hash == runs[1].order_hash and all(r.tokens_per_s is None for r in runs)
    for run in runs:
        assert run.saved_to.endswith("model.safetensors")
        assert read_checkpoint_labels(run.saved_to) == ("ants", "bees")
        assert outcome.run.result.model(run.model).quality.accuracy == pytest.approx(run.final_eval["accuracy"])
    assert np.isfinite(runs[0].steps.loss).all()


def test_h2h_train_refuses_what_it_cannot_do(tmp_path):
    base = {"name": "x", "models": [{"name": "a", "kind": "timm", "source": "resnet10t"}], "eval": {"device": "cpu"}}
    with pytest.raises(DataError, match="h2h train needs training data; set data.train .* or data.split"):
        train_experiment({**base, "data": {"path": "sklearn:iris"}}, out_dir=tmp_path)
    sklearn_model = {"name": "lr", "kind": "sklearn", "source": "m.skops"}
    with pytest.raises(ConfigError, match=r"model 'lr' \(kind sklearn\) cannot be fine-tuned by h2h train"):
        train_experiment({**base, "models": [sklearn_model], "data": {"path": "sklearn:iris"}}, out_dir=tmp_path)


def test_the_offline_example_runs_through_the_cli(tmp_path):
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "examples" / "train-digits-timm.yaml"
    cli = _cli(
        "train",
        str(example),
        "--out",
        str(tmp_path / "out"),
        "--set",
        "train.max_steps=2",
        "--set",
        "train.seeds=[0]",
        "--set",
        "speed.enabled=false",
    )
    assert cli.exit_code == 0, cli.output
    summary = TrainingResult.model_validate_json((tmp_path / "out" / "training.json").read_text()).training
    assert [r.model for r in summary.runs] == ["resnet-slim", "mobilenetv3"]
    assert all(r.optimizer_steps == 2 and r.epochs[0].partial for r in summary.runs)
    assert headtohead.load_result(tmp_path / "out" / "results.json").dataset.n_examples == 540
