"""The suite file: a recipe templated per data set, shared sections, every data set's experiment validated up front."""

from __future__ import annotations

import pytest
import yaml

from headtohead.config.suite import SuiteConfig, load_suite, suite_from_dict
from headtohead.errors import ConfigError

BASE = {
    "name": "s",
    "datasets": [
        {"name": "iris", "data": {"path": "sklearn:iris", "split": {"eval_fraction": 0.3}}},
        {"name": "wine", "data": {"path": "sklearn:wine", "split": {"eval_fraction": 0.3}}},
    ],
    "models": [
        {"name": "lr", "kind": "sklearn", "source": "models/{dataset}/lr.skops"},
        {"name": "nb", "kind": "sklearn", "source": "models/{dataset}/nb.skops", "label_names": None},
    ],
    "eval": {"batch_size": 16},
    "speed": {"enabled": False},
}


def _with(**changes):
    return {**BASE, **changes}


def test_each_data_set_is_an_experiment_with_the_recipe_filled_in():
    suite = suite_from_dict(BASE)
    exp = suite.experiment("wine")
    assert exp.name == "s/wine" and exp.data.path == "sklearn:wine"
    assert [m.source for m in exp.models] == ["models/wine/lr.skops", "models/wine/nb.skops"]
    assert exp.eval.batch_size == 16 and not exp.speed.enabled and exp.seed == 42
    assert suite.across.metric == "accuracy" and suite.across.higher_is_better and suite.across.rope == 0.01


def test_placeholder_is_filled_in_nested_strings_only():
    raw = _with(
        models=[
            {
                "name": "p",
                "kind": "python",
                "source": "pkg.mod:make",
                "model_args": {"path": "w/{dataset}.npy", "keep": "{other}", "n": 3},
            },
            {"name": "q", "kind": "predictions", "source": "preds/{dataset}.csv"},
        ]
    )
    exp = suite_from_dict(raw).experiment("iris")
    assert exp.models[0].model_args == {"path": "w/iris.npy", "keep": "{other}", "n": 3}
    assert exp.models[1].source == "preds/iris.csv"


def test_load_from_yaml_with_overrides(tmp_path):
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(BASE))
    suite = load_suite(path, ["across.metric=f1_macro", "datasets.wine.data.limit=20"])
    assert suite.across.metric == "f1_macro" and suite.dataset("wine").data.limit == 20


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (_with(datasets=BASE["datasets"][:1]), "datasets: List should have at least 2 items"),
        (_with(models=BASE["models"][:1]), "models: List should have at least 2 items"),
        (_with(datasets=[BASE["datasets"][0], BASE["datasets"][0]]), "data set name 'iris' is used twice"),
        (_with(datasets=[{"name": "../up", "data": {"path": "x.csv"}}, BASE["datasets"][1]]), "must be a folder name"),
        (_with(across={"metric": "acuracy"}), "unknown metric 'acuracy' — did you mean accuracy?"),
        (_with(across={"rope": -0.1}), "across.rope"),
        (_with(train={"epochs": 1}), "unknown key"),
        (_with(datasets_at_once=2), "set execution.mode: processes or ray"),
        (
            _with(datasets_at_once=2, execution={"mode": "processes"}, speed={"enabled": True}),
            "timings of data sets running side by side would share the machine",
        ),
        (_with(models=[BASE["models"][0], {"name": "x", "kind": "sklearn"}]), "models[1].source: missing"),
        (
            _with(eval={"until_decided": True, "chunk_size": 16, "batch_size": 16}, execution={"mode": "processes"}),
            "data set 'iris'",
        ),
    ],
)
def test_mistakes_are_one_line(raw, expected):
    with pytest.raises(ConfigError) as info:
        suite_from_dict(raw, source="suite.yaml")
    message = str(info.value)
    assert expected in message and "\n" not in message and message.startswith("suite.yaml")


def test_missing_and_empty_files_say_suite(tmp_path):
    with pytest.raises(ConfigError, match="suite file not found"):
        load_suite(tmp_path / "nope.yaml")
    (tmp_path / "empty.yaml").write_text("")
    with pytest.raises(ConfigError, match="the suite file is empty"):
        load_suite(tmp_path / "empty.yaml")


def test_a_suite_file_and_an_experiment_file_are_told_apart_by_their_keys(tmp_path):
    """A suite given to h2h run/validate (an experiment given to h2h suite) names the command that reads it."""
    from headtohead.config import Experiment, load_experiment
    from headtohead.config.loading import SUITE_KEYS

    assert set(SUITE_KEYS) == set(SuiteConfig.model_fields) - set(Experiment.model_fields)
    suite, experiment = tmp_path / "suite.yaml", tmp_path / "exp.yaml"
    suite.write_text(yaml.safe_dump(BASE))
    with pytest.raises(ConfigError) as info:
        load_experiment(suite)
    assert str(info.value) == (
        f"{suite}: this is a suite file (datasets:), not an experiment (data:); run it with h2h suite {suite}"
    )
    one = {"name": "e", "data": BASE["datasets"][0]["data"], "models": BASE["models"]}
    experiment.write_text(yaml.safe_dump(one))
    with pytest.raises(
        ConfigError,
        match=r"exp.yaml: this is an experiment file \(data:\), not a suite \(datasets:\); run it with h2h run ",
    ):
        load_suite(experiment)


def test_side_by_side_through_processes_is_accepted():
    suite = SuiteConfig.model_validate(_with(datasets_at_once=3, execution={"mode": "processes", "num_workers": 2}))
    assert suite.datasets_at_once == 3


def test_the_example_suite_is_valid():
    from pathlib import Path

    suite = load_suite(Path(__file__).resolve().parents[2] / "examples" / "suite-six-datasets.yaml")
    assert [d.name for d in suite.datasets] == ["sst2", "snips", "digits", "wine", "breast_cancer", "iris"]
    assert suite.experiment("snips").models[2].source == "models/suite/snips/ridge.skops"
