"""Whole runs through the real loaders and adapters: tiny text and image models, no network."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
import yaml
from sklearn import metrics as skm

import headtohead
from headtohead.cli.main import main
from headtohead.report.words.numbers import format_duration
from headtohead.results import SCHEMA_VERSION
from headtohead.testing.data import make_image_folder, make_text_table


@pytest.fixture(scope="module")
def text_setup(tmp_path_factory):
    """A small sentiment table, a tiny BERT and a tiny RoBERTa whose outputs are ordered differently."""
    from headtohead.testing.text import make_tiny_bert, make_tiny_roberta

    root = tmp_path_factory.mktemp("text")
    table = make_text_table(root / "dev.tsv", n_per_class=12, classes=("negative", "positive"))
    bert = make_tiny_bert(root / "bert", ["negative", "positive"], seed=1)
    roberta = make_tiny_roberta(root / "roberta", ["positive", "negative"], seed=2)  # reversed: must be remapped
    experiment = {
        "name": "tiny-text",
        "data": {"path": str(table)},
        "models": [
            {"name": "bert", "kind": "transformers", "source": str(bert), "max_length": 32},
            {"name": "roberta", "kind": "transformers", "source": str(roberta), "max_length": 32},
        ],
        "eval": {"batch_size": 5, "device": "cpu"},
        "speed": {"enabled": False},
    }
    path = root / "exp.yaml"
    path.write_text(yaml.safe_dump(experiment))
    return path


def _recomputed_from_saved(out):
    result = headtohead.load_result(out / "results.json")
    predictions = headtohead.load_predictions(out)
    return result, predictions


def test_text_run_through_the_cli(text_setup, tmp_path, capsys):
    out = tmp_path / "out"
    main(["run", str(text_setup), "--out", str(out)])
    printed = capsys.readouterr().out
    assert "bert" in printed and "roberta" in printed and "results.json" in printed
    result, predictions = _recomputed_from_saved(out)
    assert [m.name for m in result.models] == ["bert", "roberta"]
    assert result.models[0].index_order_hash == result.models[1].index_order_hash
    assert result.model("roberta").label_alignment == "remapped"
    assert result.model("bert").label_alignment == "identical"
    assert result.dataset.n_examples == 24 and result.dataset.label_names == ["negative", "positive"]
    for model in result.models:
        saved = predictions[model.name]
        assert model.quality.accuracy == pytest.approx(skm.accuracy_score(predictions.y_true, saved.pred))
        assert model.quality.f1_macro == pytest.approx(skm.f1_score(predictions.y_true, saved.pred, average="macro"))
        assert (
            model.quality.confusion_matrix
            == skm.confusion_matrix(predictions.y_true, saved.pred, labels=[0, 1]).tolist()
        )
        np.testing.assert_array_equal(saved.pred, saved.proba.argmax(axis=1))
    raw = json.loads((out / "results.json").read_text())
    assert raw["schema_version"] == SCHEMA_VERSION and raw["environment"]["torch"]
    timings = result.timings  # where the run's wall time went
    assert timings.evaluate_s == pytest.approx(sum(m.eval_time_s for m in result.models))
    assert timings.load_s == pytest.approx(sum(m.load_time_s for m in result.models))
    assert timings.statistics_s > 0 and timings.report_s > 0  # h2h run writes report.html inside the run
    assert timings.total_s >= timings.setup_s + timings.load_s + timings.evaluate_s + timings.statistics_s
    assert f"total {format_duration(timings.total_s)}" in printed and "Time: setup" in printed
    raw["schema_version"] = 1  # a file written before timings existed still reads
    del raw["timings"]
    old = out / "old.json"
    old.write_text(json.dumps(raw))
    assert headtohead.load_result(old).timings is None


def test_text_run_is_deterministic(text_setup):
    first = headtohead.run(text_setup)
    second = headtohead.run(text_setup)
    for name in ("bert", "roberta"):
        np.testing.assert_array_equal(first.predictions[name].proba, second.predictions[name].proba)


def test_image_run_with_two_timm_models(tmp_path):
    folder = make_image_folder(tmp_path / "images", classes=("ants", "bees"), n_per_class=6, size=24, seed=0)
    outcome = headtohead.run(
        {
            "name": "tiny-images",
            "data": {"path": str(folder)},
            "models": [
                {
                    "name": "resnet",
                    "kind": "timm",
                    "source": "resnet10t",
                    "image_size": 32,
                    "model_args": {"channels": [8, 16, 32, 64]},
                },
                {"name": "mobilenet", "kind": "timm", "source": "mobilenetv3_small_050", "image_size": 32},
            ],
            "eval": {"batch_size": 4, "device": "cpu"},
            "speed": {"enabled": False},
        },
        out_dir=tmp_path / "out",
    )
    result = outcome.result
    assert result.dataset.modality == "image" and result.dataset.n_examples == 12
    assert {m.index_order_hash for m in result.models} == {result.models[0].index_order_hash}
    assert all(m.num_parameters > 0 and m.n_batches == 3 for m in result.models)
    assert outcome.predictions["resnet"].proba.shape == (12, 2)


def test_failure_keeps_finished_models(text_setup, tmp_path, capsys):
    exp = yaml.safe_load(text_setup.read_text())
    exp["models"][1]["label_names"] = ["cat", "dog"]  # does not match the data's labels
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(exp))
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as info:
        main(["run", str(path), "--out", str(out)])
    err = capsys.readouterr().err
    assert info.value.code == 2
    assert "labels 'cat', 'dog' do not match the dataset labels 'negative', 'positive'" in err
    assert "results of bert are kept" in err
    kept = headtohead.load_result(out / "results.json")
    assert [m.name for m in kept.models] == ["bert"]


def test_unknown_column_lists_the_columns(tmp_path, capsys):
    table = make_text_table(tmp_path / "d.csv", n_per_class=3)
    path = tmp_path / "exp.yaml"
    path.write_text(
        textwrap.dedent(f"""\
        data: {{path: {table}, text_column: sentence}}
        models: [{{name: a, kind: transformers, source: x}}]
        """)
    )
    with pytest.raises(SystemExit) as info:
        main(["run", str(path), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "sentence" in err and "text" in err


def test_a_model_against_itself_is_no_significant_difference(text_setup):
    exp = yaml.safe_load(text_setup.read_text())
    exp["models"][1] = {**exp["models"][0], "name": "bert-again"}
    outcome = headtohead.run(exp)
    comparison = outcome.result.stats.comparison("bert", "bert-again")
    assert comparison.p_value == 1.0 and not comparison.significant and comparison.winner is None
    assert "no significant difference" in comparison.verdict
    assert [g.models for g in outcome.result.stats.ranking] == [["bert", "bert-again"]]


def test_run_statistics_are_saved_and_shown(text_setup, tmp_path, capsys):
    out = tmp_path / "out"
    main(["run", str(text_setup), "--out", str(out), "--set", "stats.n_resamples=500"])
    printed = capsys.readouterr().out
    assert "Verdict" in printed and "bert vs roberta" in printed.replace("roberta vs bert", "bert vs roberta")
    result = headtohead.load_result(out / "results.json")
    assert result.stats.settings.n_resamples == 500
    accuracy = result.stats.model("bert").accuracy
    assert accuracy.low <= result.model("bert").quality.accuracy <= accuracy.high
    assert len(result.stats.comparisons) == 1


QUICK_SPEED = {
    "scenarios": ["offline"],
    "warmup_iterations": 1,
    "warmup_seconds": 0.0,
    "min_iterations": 2,
    "min_seconds": 0.1,
    "rounds": 5,
    "precision": None,  # a fixed number of rounds
    "pipeline_iterations": 2,
    "memory_iterations": 2,
    "n_resamples": 200,
}


def test_run_measures_speed_and_bench_skips_quality(text_setup, tmp_path, capsys):
    exp = yaml.safe_load(text_setup.read_text())
    exp["speed"] = QUICK_SPEED
    outcome = headtohead.run(exp)
    speed = outcome.result.speed
    assert [m.name for m in speed.models] == ["bert", "roberta"]
    offline = speed.model("bert").offline
    assert offline.batch_size == 5 and len(offline.rounds_ns) >= 5 and offline.per_batch.p50_s > 0
    assert speed.model("bert").load_time_s == outcome.result.model("bert").load_time_s
    assert len(speed.scenario("offline").comparisons) == 1
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(exp))
    main(["bench", str(path), "--out", str(tmp_path / "bench")])
    printed = capsys.readouterr().out
    assert "speed" in printed and "samples/s" in printed
    bench = headtohead.load_result(tmp_path / "bench" / "results.json")
    assert bench.stats is None and all(m.quality is None for m in bench.models) and bench.speed is not None
