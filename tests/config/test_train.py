"""The train: section: validation with one-line errors, overrides, loading beside the experiment."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from headtohead.config.loading import load_train_experiment
from headtohead.config.train import TrainConfig, train_config_from_dict
from headtohead.errors import ConfigError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _experiment(tmp_path: Path, train: dict | None) -> Path:
    raw = {
        "name": "t",
        "data": {"path": "sklearn:iris", "split": {"eval_fraction": 0.3}},
        "models": [{"name": "a", "kind": "timm", "source": "resnet10t"}],
    }
    if train is not None:
        raw["train"] = train
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_defaults_and_seeds():
    config = train_config_from_dict(None)
    assert config == TrainConfig()
    assert config.precision == "fp32" and config.lr_schedule == "linear" and config.resume
    assert config.seeds_for(7) == [7]
    assert train_config_from_dict({"seeds": [3, 1]}).seeds_for(7) == [3, 1]


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        ({"epoch": 2}, "train.epoch: unknown key — did you mean epochs?"),
        ({"epochs": 0}, "train.epochs: Input should be greater than 0 (got 0)"),
        ({"precision": "fp8"}, "train.precision: Input should be 'fp32', 'bf16' or 'fp16' (got 'fp8')"),
        ({"seeds": [1, 1]}, "train.seeds: seeds [1, 1] lists a seed twice"),
        ({"seeds": []}, "train.seeds: seeds is empty"),
        ({"warmup_steps": 5, "warmup_ratio": 0.1}, "give either warmup_steps or warmup_ratio, not both"),
        ({"device": "gpu"}, "train.device: unknown device 'gpu'"),
        ({"target": {"metric": "accuracy", "valeu": 0.9}}, "train.target.valeu: unknown key — did you mean value?"),
        ([1, 2], "train must be a mapping"),
    ],
)
def test_bad_values_give_one_line_naming_the_key(section, expected):
    with pytest.raises(ConfigError) as info:
        train_config_from_dict(section, source="exp.yaml")
    message = str(info.value)
    assert message.startswith("exp.yaml: ") and expected in message and "\n" not in message


def test_train_section_is_split_from_the_experiment_with_overrides(tmp_path):
    path = _experiment(tmp_path, {"epochs": 3, "batch_size": 16})
    exp, train, base = load_train_experiment(path, ["train.epochs=1", "train.precision=bf16", "seed=5"])
    assert (train.epochs, train.batch_size, train.precision) == (1, 16, "bf16")
    assert exp.seed == 5 and exp.models[0].name == "a" and base == tmp_path.resolve()


def test_experiment_without_train_section_gets_defaults(tmp_path):
    _, train, _ = load_train_experiment(_experiment(tmp_path, None))
    assert train == TrainConfig()


def test_errors_in_the_experiment_or_the_file(tmp_path):
    with pytest.raises(ConfigError, match=r"exp.yaml: train.batchsize: unknown key — did you mean batch_size\?"):
        load_train_experiment(_experiment(tmp_path, {"batchsize": 4}))
    with pytest.raises(ConfigError, match="experiment file not found"):
        load_train_experiment(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(ConfigError, match="YAML syntax error"):
        load_train_experiment(bad)


def test_config_module_does_not_import_torch():
    code = "import sys, headtohead.config.train; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("train-*.yaml")), ids=lambda p: p.name)
def test_example_train_files_validate(path):
    exp, train, _ = load_train_experiment(path)
    assert len(exp.models) >= 2 and train.epochs >= 1


def test_there_are_train_examples():
    assert len(sorted(EXAMPLES.glob("train-*.yaml"))) >= 2
