"""The experiment file: validation errors that name the path, overrides, line numbers."""

from __future__ import annotations

import textwrap

import pytest

from headtohead.adapters import ADAPTERS
from headtohead.config import MODEL_KINDS, apply_overrides, experiment_from_dict, load_experiment
from headtohead.errors import ConfigError

BASE = {
    "name": "t",
    "data": {"path": "data.csv"},
    "models": [
        {"name": "bert", "kind": "transformers", "source": "a"},
        {"name": "roberta", "kind": "transformers", "source": "b"},
    ],
}


def test_model_kinds_match_the_adapter_registry():
    assert set(MODEL_KINDS) == set(ADAPTERS)


def test_defaults_are_filled():
    exp = experiment_from_dict(BASE)
    assert exp.eval.batch_size == 32 and exp.eval.device == "auto" and exp.seed == 42
    assert exp.model("roberta").source == "b"


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        (
            {"models": [{"name": "a", "kind": "transformers", "source": "x", "max_lenght": 3}]},
            "models[0].max_lenght: unknown key — did you mean max_length?",
        ),
        ({"eval": {"batch_size": "many"}}, "eval.batch_size: Input should be a valid integer"),
        ({"eval": {"batch_size": 0}}, "eval.batch_size: Input should be greater than 0"),
        ({"eval": {"device": "gpu"}}, "unknown device 'gpu'"),
        ({"models": [{"name": "a", "kind": "tim", "source": "x"}]}, "did you mean timm?"),
        ({"models": [{"name": "a", "kind": "timm"}]}, "models[0].source: missing required field"),
        (
            {"models": [{"name": "a", "kind": "timm", "source": "x"}, {"name": "a", "kind": "timm", "source": "y"}]},
            "model name 'a' is used twice",
        ),
        ({"dat": {}}, "dat: unknown key — did you mean data?"),
        ({"models": []}, "models: List should have at least 1 item"),
    ],
)
def test_invalid_experiments_name_the_key(patch, expected):
    raw = {**BASE, **patch}
    with pytest.raises(ConfigError) as info:
        experiment_from_dict(raw)
    assert expected in str(info.value)
    assert "\n" not in str(info.value)


def test_yaml_errors_point_at_the_line(tmp_path):
    path = tmp_path / "exp.yaml"
    path.write_text(
        textwrap.dedent("""\
        name: t
        data:
          path: data.csv
        models:
          - name: bert
            kind: transformers
            source: a
            max_lenght: 64
        """)
    )
    with pytest.raises(ConfigError, match=r"exp.yaml:8: models\[0\].max_lenght: unknown key"):
        load_experiment(path)
    path.write_text("name: [unclosed\n")
    with pytest.raises(ConfigError, match=r"exp.yaml:2:1: YAML syntax error"):
        load_experiment(path)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("", "the experiment file is empty"),
        ("- a\n- b\n", "must be a YAML mapping"),
    ],
)
def test_empty_or_non_mapping_files(tmp_path, content, expected):
    path = tmp_path / "exp.yaml"
    path.write_text(content)
    with pytest.raises(ConfigError, match=expected):
        load_experiment(path)


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="experiment file not found"):
        load_experiment(tmp_path / "nope.yaml")


def test_overrides_by_index_name_and_type():
    data = apply_overrides(
        BASE,
        ["eval.batch_size=16", "models[1].max_length=64", "models.bert.max_length=128", "data.label_names=[neg, pos]"],
    )
    exp = experiment_from_dict(data)
    assert exp.eval.batch_size == 16
    assert exp.model("roberta").max_length == 64
    assert exp.model("bert").max_length == 128
    assert exp.data.label_names == ["neg", "pos"]
    assert BASE["models"][1].get("max_length") is None  # the input is not mutated


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        (["eval.batch_size=16", "eval.batch_size=8"], "conflict: both set eval.batch_size"),
        (["models[1].max_length=64", "models.roberta.max_length=32"], "conflict: both set models[1].max_length"),
        (["models[5].max_length=1"], "index 5 is out of range"),
        (["models.bret.max_length=1"], "did you mean bert?"),
        (["eval.batch_size"], "expected KEY=VALUE"),
    ],
)
def test_bad_overrides(overrides, expected):
    with pytest.raises(ConfigError, match=expected.replace("[", r"\[").replace("]", r"\]").replace("?", r"\?")):
        experiment_from_dict(BASE, overrides=overrides)


def test_same_override_twice_is_not_a_conflict():
    exp = experiment_from_dict(BASE, overrides=["eval.batch_size=8", "eval.batch_size=8"])
    assert exp.eval.batch_size == 8


def test_config_import_does_not_import_torch():
    import subprocess
    import sys

    code = (
        "import headtohead, headtohead.config, headtohead.adapters, headtohead.data, sys; print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
