"""Runs with the ``predictions`` kind, and ``h2h run --data … --model …`` without an experiment file."""

from __future__ import annotations

import csv
import json

import numpy as np
import pandas as pd
import pytest

import headtohead
from headtohead.adapters.predictions import write_prediction_file
from headtohead.cli.main import main
from headtohead.errors import ConfigError
from headtohead.pipeline.quick import infer_kind, parse_model_option, quick_experiment
from headtohead.testing.data import make_text_rows, write_text_table

LABELS = ("negative", "positive")
FAST_SPEED = {
    "scenarios": ["offline"],
    "warmup_iterations": 1,
    "warmup_seconds": 0.0,
    "min_iterations": 3,
    "min_seconds": 0.0,
    "rounds": 5,
    "precision": None,  # a fixed number of rounds
    "num_batches": 1,
    "pipeline_iterations": 0,
    "memory": False,
    "n_resamples": 100,
}


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """A text table with ids, a fitted TF-IDF model saved with skops, and its predictions as files."""
    import skops.io as sio
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    root = tmp_path_factory.mktemp("preds")
    rows = make_text_rows(40, classes=LABELS, seed=3)
    for i, row in enumerate(rows):
        row["id"] = f"s{i:03d}"
        row["text"] = row["text"] + " plot" * (i % 7)  # varied lengths for the size slices
    write_text_table(root / "dev.csv", rows)
    train = make_text_rows(12, classes=LABELS, seed=9)
    model = make_pipeline(TfidfVectorizer(), LogisticRegression(C=0.3)).fit(
        [r["text"] for r in train], [r["label"] for r in train]
    )
    sio.dump(model, root / "lr.skops")
    texts = [r["text"] for r in rows]
    proba = model.predict_proba(texts)[:, [list(model.classes_).index(c) for c in LABELS]]
    pred = proba.argmax(axis=1)
    ids = [r["id"] for r in rows]
    order = np.random.default_rng(0).permutation(len(rows))  # a file in another order, matched by id
    write_prediction_file(root / "lr.csv", [ids[i] for i in order], pred[order], proba[order], label_names=LABELS)
    flipped = pred.copy()
    flipped[::5] = 1 - flipped[::5]  # wrong more often, and no probabilities at all
    write_prediction_file(root / "labels.jsonl", ids, [LABELS[k] for k in flipped])
    return root, pred, flipped, np.array([LABELS.index(r["label"]) for r in rows])


def _experiment(root, *models, speed=False):
    return {
        "name": "preds",
        "data": {"path": str(root / "dev.csv"), "id_column": "id"},
        "models": list(models),
        "eval": {"batch_size": 16, "device": "cpu"},
        "stats": {"n_resamples": 300},
        "speed": FAST_SPEED if speed else {"enabled": False},
    }


def test_prediction_file_of_a_model_equals_running_it(setup, tmp_path):
    root, pred, _, y = setup
    outcome = headtohead.run(
        _experiment(
            root,
            {"name": "model", "kind": "sklearn", "source": str(root / "lr.skops")},
            {"name": "file", "kind": "predictions", "source": str(root / "lr.csv")},
            {"name": "labels", "kind": "predictions", "source": str(root / "labels.jsonl")},
            speed=True,
        ),
        out_dir=tmp_path / "out",
        report=True,
    )
    result = outcome.result
    model, stored, labels = (result.model(n) for n in ("model", "file", "labels"))
    assert model.quality.accuracy == stored.quality.accuracy == pytest.approx(np.mean(pred == y))
    assert stored.quality.confidence_mean == pytest.approx(model.quality.confidence_mean)
    assert result.stats.model("file").ece.value == pytest.approx(result.stats.model("model").ece.value)
    assert labels.quality.accuracy == pytest.approx(np.mean(setup[2] == y))
    assert [m.outputs for m in result.models] == ["computed", "stored", "stored"]
    # identical predictions: no disagreement, p = 1
    same = result.stats.comparison("model", "file")
    assert same.p_value == 1.0 and same.discordance == 0
    # no probabilities: calibration not available for the model and its pairs, never one-hot
    assert labels.quality.confidence_mean is None and result.stats.model("labels").ece is None
    assert result.stats.model("labels").calibration is None
    pair = result.stats.comparison("model", "labels")
    assert {d.metric for d in pair.differences}.isdisjoint({"ece", "brier", "nll"})
    assert {"brier", "nll"} <= {d.metric for d in same.differences}  # the plug-in ECE: no interval, no difference
    # speed: only the model that computes is timed
    assert [m.name for m in result.speed.models] == ["model"]
    predictions = headtohead.load_predictions(tmp_path / "out")
    assert predictions["labels"].proba is None
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved["stats"]["slices"]["slices"]
    html = (tmp_path / "out" / "report.html").read_text()
    assert "not measured" in html and "stored predictions" in html and "not available" in html


def test_disagreements_csv_lists_every_example_exactly_one_model_got_right(setup, tmp_path):
    root, pred, flipped, y = setup
    headtohead.run(
        _experiment(
            root,
            {"name": "file", "kind": "predictions", "source": str(root / "lr.csv")},
            {"name": "labels", "kind": "predictions", "source": str(root / "labels.jsonl")},
        ),
        out_dir=tmp_path,
    )
    with open(tmp_path / "disagreements.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    only_file = set(np.flatnonzero((pred == y) & (flipped != y)))
    only_labels = set(np.flatnonzero((pred != y) & (flipped == y)))
    assert {int(r["index"]) for r in rows if r["right"] == "file"} == only_file
    assert {int(r["index"]) for r in rows if r["right"] == "labels"} == only_labels
    assert all(r["id"] == f"s{int(r['index']):03d}" and r["input"] for r in rows)


@pytest.mark.parametrize(
    "source, kind",
    [
        ("preds.csv", "predictions"),
        ("p.TSV", "predictions"),
        ("p.parquet", "predictions"),
        ("m.onnx", "onnx"),
        ("m.skops", "sklearn"),
        ("pkg.mod:factory", "python"),
        ("org/model", "transformers"),
    ],
)
def test_kinds_are_inferred_from_the_source(source, kind, tmp_path):
    assert infer_kind(source, tmp_path) == kind


def test_folders_and_overrides(tmp_path):
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "config.json").write_text("{}")
    (tmp_path / "empty").mkdir()
    assert infer_kind("hf", tmp_path) == "transformers"
    assert parse_model_option("b=timm:resnet18", tmp_path) == ("b", "timm", "resnet18")
    assert parse_model_option("preds_a.csv", tmp_path) == ("preds_a", "predictions", "preds_a.csv")
    with pytest.raises(ConfigError, match="cannot tell its kind .a folder without config.json.; write it first"):
        infer_kind("empty", tmp_path)
    with pytest.raises(ConfigError, match="used twice"):
        quick_experiment("dev.csv", ["a=x.csv", "a=y.csv"], base_dir=tmp_path)
    with pytest.raises(ConfigError, match="at least one --model"):
        quick_experiment("dev.csv", [], base_dir=tmp_path)


def test_quick_run_through_the_cli(setup, tmp_path, capsys, monkeypatch):
    root = setup[0]
    monkeypatch.chdir(root)
    out = tmp_path / "out"
    main(
        [
            "run",
            "--data",
            "dev.csv",
            "--id-column",
            "id",
            "--model",
            "a=lr.csv",
            "--model",
            "lr.skops",
            "--model",
            "c=predictions:labels.jsonl",
            "--set",
            "stats.n_resamples=200",
            "--set",
            "speed.enabled=false",
            "--out",
            str(out),
        ]
    )
    printed = capsys.readouterr().out
    assert "report.html" in printed
    result = headtohead.load_result(out / "results.json")
    assert [(m.name, m.outputs) for m in result.models] == [("a", "stored"), ("lr", "computed"), ("c", "stored")]
    assert result.name == "dev-a-vs-lr-vs-c"
    html = (out / "report.html").read_text()
    assert "not available" in html  # model c's calibration


def test_quick_run_errors_are_one_line_with_exit_code_2(setup, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(setup[0])
    for argv, message in (
        (["run", "--model", "a=lr.csv"], "give an experiment file"),
        (["run", "exp.yaml", "--data", "dev.csv", "--model", "a=lr.csv"], "not both"),
        (["run", "--data", "dev.csv", "--model", "a=nowhere.bin"], "cannot tell its kind"),
    ):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1


def test_prediction_files_without_ids_match_by_row_order_with_a_warning(setup, tmp_path):
    root, pred, _, y = setup
    frame = pd.read_csv(root / "dev.csv")
    frame.drop(columns=["id"]).to_csv(tmp_path / "dev.csv", index=False)
    write_prediction_file(tmp_path / "p.csv", None, pred, label_names=LABELS)
    outcome = headtohead.run(
        {
            "name": "rows",
            "data": {"path": str(tmp_path / "dev.csv")},
            "models": [{"name": "p", "kind": "predictions", "source": str(tmp_path / "p.csv")}],
            "eval": {"device": "cpu"},
            "stats": {"n_resamples": 100},
            "speed": {"enabled": False},
        }
    )
    model = outcome.result.model("p")
    assert model.quality.accuracy == pytest.approx(np.mean(pred == y))
    assert any("matched to the data by position" in w for w in model.warnings)


def test_predictions_of_rows_skipped_for_a_missing_label_are_ignored_and_the_skip_warning_says_so(setup, tmp_path):
    """A row the data loader skips (no label) still has a prediction in every file: that is no mistake of the user."""
    root, pred, flipped, y = setup
    frame = pd.read_csv(root / "dev.csv")
    frame.loc[4, "label"] = None  # s004: skipped while loading
    frame.to_csv(tmp_path / "dev.csv", index=False)
    kept = np.arange(len(frame)) != 4
    write_prediction_file(tmp_path / "by-id.csv", frame["id"].tolist()[::-1], pred[::-1], label_names=LABELS)
    write_prediction_file(tmp_path / "by-row.csv", None, flipped, label_names=LABELS)  # one row per row of the file
    experiment = {
        "name": "skip",
        "data": {"path": str(tmp_path / "dev.csv"), "id_column": "id"},
        "models": [{"name": "by-id", "kind": "predictions", "source": str(tmp_path / "by-id.csv")}],
        "eval": {"device": "cpu"},
        "stats": {"n_resamples": 100},
        "speed": {"enabled": False},
    }
    with pytest.warns(UserWarning) as caught:
        outcome = headtohead.run(experiment)
    skip = [str(w.message) for w in caught if "skipped 1 rows" in str(w.message)]
    assert skip and "(missing label: 1): 's004'" in skip[0] and "predictions stored for them are ignored" in skip[0]
    assert outcome.result.dataset.n_examples == len(frame) - 1
    assert outcome.result.model("by-id").quality.accuracy == pytest.approx(np.mean(pred[kept] == y[kept]))
    # without ids: a file with one row per row of the data file is matched by position, the skipped row dropped
    frame.drop(columns=["id"]).to_csv(tmp_path / "dev.csv", index=False)
    experiment["data"] = {"path": str(tmp_path / "dev.csv")}
    experiment["models"] = [{"name": "by-row", "kind": "predictions", "source": str(tmp_path / "by-row.csv")}]
    with pytest.warns(UserWarning, match="predictions stored for them are ignored"):
        outcome = headtohead.run(experiment)
    model = outcome.result.model("by-row")
    assert model.quality.accuracy == pytest.approx(np.mean(flipped[kept] == y[kept]))
    assert any("once the 1 row(s) loading skipped are dropped" in w for w in model.warnings)


def test_image_disagreements_carry_thumbnails_into_the_report(tmp_path):
    from headtohead.config.schema import DataConfig
    from headtohead.data import create_dataset
    from headtohead.testing.data import make_image_folder

    folder = make_image_folder(tmp_path / "images", classes=("ants", "bees"), n_per_class=6, size=(40, 24))
    dataset = create_dataset(DataConfig(path=str(folder))).eval
    y = np.asarray(dataset.labels)
    a, b = y.copy(), y.copy()
    a[:3], b[-2:] = 1 - a[:3], 1 - b[-2:]  # a misses the first three, b the last two
    for name, pred in (("a", a), ("b", b)):
        write_prediction_file(
            tmp_path / f"{name}.csv", None, pred, np.eye(2)[pred] * 0.8 + 0.1, label_names=dataset.label_names
        )
    outcome = headtohead.run(
        {
            "name": "images",
            "data": {"path": str(folder)},
            "models": [{"name": n, "kind": "predictions", "source": str(tmp_path / f"{n}.csv")} for n in ("a", "b")],
            "eval": {"device": "cpu"},
            "stats": {"n_resamples": 100},
            "speed": {"enabled": False},
        },
        out_dir=tmp_path / "out",
        report=True,
    )
    found = outcome.result.stats.disagreements[0]
    assert [r.index for r in found.only_b_right] == [0, 1, 2] and [r.index for r in found.only_a_right] == [10, 11]
    rows = found.only_a_right + found.only_b_right
    assert all(r.thumbnail.startswith("data:image/jpeg;base64,") and r.input.endswith(".png") for r in rows)
    page = (tmp_path / "out" / "report.html").read_text()
    assert page.count('src="data:image/jpeg;base64,') >= len(rows)
