"""``stats.metrics: [mcc, roc_auc]``: picked catalogue metrics reach results.json, every report, pairs, slices,
``h2h suite --metric`` and ``h2h gate --metric``; runs that pick none are unchanged."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
import yaml
from sklearn import metrics as skm

import headtohead
from headtohead.adapters.predictions import write_prediction_file
from headtohead.cli.main import main
from headtohead.report.formats.terminal import render_text
from headtohead.report.rows.where import slice_name, slice_table
from headtohead.report.sections.run import terminal_document
from headtohead.report.write import write_outputs
from headtohead.results import Predictions, load_result
from headtohead.testing.data import make_text_rows, write_text_table

LABELS = ("ant", "bee", "cat")
PICKED = {"n_resamples": 300, "metrics": ["mcc", "roc_auc"]}


def _write_dataset(folder, seed):
    """A text table and three models' prediction files: two with probabilities, one with labels only."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = make_text_rows(40, classes=LABELS, seed=seed)
    for i, row in enumerate(rows):
        row["id"] = f"s{i:03d}"
        row["text"] = row["text"] + " word" * (i % 9)  # lengths vary: size slices
    write_text_table(folder / "dev.csv", rows)
    y = np.array([LABELS.index(r["label"]) for r in rows])
    ids = [r["id"] for r in rows]
    rng = np.random.default_rng(seed)
    for name, accuracy in (("good", 0.85), ("fair", 0.65)):
        pred = np.where(rng.random(len(y)) < accuracy, y, rng.integers(0, 3, len(y)))
        proba = rng.dirichlet(np.ones(3), len(y)) * 0.5 + np.eye(3)[pred] * 0.5
        write_prediction_file(folder / f"{name}.csv", ids, pred, proba, label_names=LABELS)
    write_prediction_file(folder / "labels.jsonl", ids, [LABELS[k] for k in pred])  # fair's labels, no probabilities
    return folder


def _experiment(folder, stats):
    return {
        "name": "picked",
        "data": {"path": str(folder / "dev.csv"), "id_column": "id"},
        "models": [
            {"name": "good", "kind": "predictions", "source": str(folder / "good.csv")},
            {"name": "fair", "kind": "predictions", "source": str(folder / "fair.csv")},
            {"name": "labels", "kind": "predictions", "source": str(folder / "labels.jsonl")},
        ],
        "eval": {"device": "cpu"},
        "stats": stats,
        "speed": {"enabled": False},
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("picked")
    folder = _write_dataset(root / "data", seed=3)
    picked = headtohead.run(_experiment(folder, PICKED), out_dir=root / "picked")
    plain = headtohead.run(_experiment(folder, {"n_resamples": 300}), out_dir=root / "plain")
    return root, picked, plain


def test_picked_metrics_are_in_results_json_and_equal_scikit_learn(runs):
    root, _, _ = runs
    result = load_result(root / "picked" / "results.json")
    predictions = Predictions.load(root / "picked" / result.predictions_file)
    y = predictions.y_true
    assert result.stats.settings.metrics == ["mcc", "roc_auc"]
    for name in ("good", "fair", "labels"):
        stats = result.stats.model(name)
        mcc = stats.metrics["mcc"]
        assert mcc.value == pytest.approx(skm.matthews_corrcoef(y, predictions[name].pred), abs=1e-12)
        assert mcc.low <= mcc.value <= mcc.high and mcc.method == "bca"
    good = predictions["good"].proba
    auc = result.stats.model("good").metrics["roc_auc"]
    assert auc.value == pytest.approx(skm.roc_auc_score(y, good, multi_class="ovr", average="macro"), abs=1e-12)
    assert auc.low <= auc.value <= auc.high
    assert "roc_auc" not in result.stats.model("labels").metrics  # no probabilities: not available, never 0


def test_pair_differences_and_slices_carry_the_picked_metrics(runs):
    root, _, _ = runs
    result = load_result(root / "picked" / "results.json")
    pair = result.stats.comparison("good", "fair")
    mcc, auc = pair.difference("mcc"), pair.difference("roc_auc")
    assert mcc.difference == pytest.approx(mcc.value_a - mcc.value_b, abs=1e-12)
    assert mcc.ci_low <= mcc.difference <= mcc.ci_high and auc.ci_low <= auc.difference <= auc.ci_high
    with pytest.raises(KeyError):
        result.stats.comparison("good", "labels").difference("roc_auc")
    sized = [s for s in result.stats.slices.slices if s.kind == "size"]
    assert sized and all("mcc" in a.metrics for s in sized for a in s.accuracies)
    by_class = [s for s in result.stats.slices.slices if s.kind == "class"]
    assert all(not a.metrics for s in by_class for a in s.accuracies)  # one class: no correlation to measure
    _, rows = slice_table(result)
    cells = {row.get("slice").value: row for row in rows}
    first = sized[0]
    value = next(a for a in first.accuracies if a.model == "good").metrics["mcc"]
    assert cells[slice_name(first)].get("good mcc").value == value
    assert cells[slice_name(by_class[0])].get("good mcc").value is None  # shown as "—"


def test_picked_metrics_reach_the_table_html_markdown_and_csv(runs, tmp_path):
    root, _, _ = runs
    result = load_result(root / "picked" / "results.json")
    text = render_text(terminal_document(result), width=300)
    assert "MCC" in text and "ROC AUC" in text
    write_outputs(result, html=tmp_path / "r.html", markdown=tmp_path / "r.md", csv=tmp_path / "r.csv")
    good = result.stats.model("good").metrics["mcc"]
    html = (tmp_path / "r.html").read_text()
    assert f"{good.value:.3f} ({good.low:.3f}–{good.high:.3f})" in html and "MCC Δ" in html
    markdown = (tmp_path / "r.md").read_text()
    assert "| ROC AUC (answered rows) ↑ |" in markdown and "not available" in markdown
    rows = {row["model"]: row for row in csv.DictReader((tmp_path / "r.csv").open())}
    assert float(rows["good"]["mcc"]) == pytest.approx(good.value) and rows["labels"]["roc_auc"] == ""


def test_a_run_without_picked_metrics_is_unchanged(runs):
    """Picked metrics draw from their own seeds: every other number of the run is the same."""
    root, _, _ = runs
    picked = json.loads((root / "picked" / "results.json").read_text())["stats"]
    plain = json.loads((root / "plain" / "results.json").read_text())["stats"]
    assert all(m["metrics"] == {} for m in plain["models"]) and plain["settings"]["metrics"] == []
    for model in picked["models"]:
        model["metrics"] = {}
    for comparison in picked["comparisons"]:
        comparison["differences"] = [d for d in comparison["differences"] if d["metric"] not in ("mcc", "roc_auc")]
    for piece in picked["slices"]["slices"]:
        for accuracy in piece["accuracies"]:
            accuracy["metrics"] = {}
    picked["settings"]["metrics"] = []
    picked.pop("quality_sentences", None), plain.pop("quality_sentences", None)
    assert picked == plain


def _gate(capsys, results_json, *args):
    capsys.readouterr()
    try:
        main(["gate", str(results_json), "--baseline", "good", "--n-resamples", "300", *args])
        code = 0
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    return code, captured.out.strip() + captured.err.strip()


def test_gate_on_a_picked_metric(runs, capsys):
    root, _, _ = runs
    results_json = root / "picked" / "results.json"
    code, text = _gate(capsys, results_json, "--candidate", "good", "--max-accuracy-drop", "0.05", "--metric", "mcc")
    assert code == 2 and "both 'good'" in text
    code, text = _gate(capsys, results_json, "--candidate", "fair", "--max-accuracy-drop", "0.01", "--metric", "mcc")
    assert code == 1 and text.startswith("FAIL") and "MCC: fair − good = −" in text
    code, text = _gate(capsys, results_json, "--candidate", "fair", "--max-accuracy-drop", "0.6", "--metric", "roc_auc")
    assert code == 0 and "ROC AUC (answered rows)" in text
    code, text = _gate(
        capsys, results_json, "--candidate", "labels", "--max-accuracy-drop", "0.1", "--metric", "roc_auc"
    )
    assert code == 2 and "needs class probabilities, and 'labels' has none" in text
    code, text = _gate(capsys, results_json, "--candidate", "fair", "--max-accuracy-drop", "0.1", "--metric", "mc")
    assert code == 2 and "--metric mc: unknown" in text


def test_suite_ranks_by_a_picked_metric(tmp_path):
    for i, name in enumerate(("one", "two", "three")):
        _write_dataset(tmp_path / name, seed=10 + i)
    suite = {
        "name": "picked",
        "datasets": [{"name": n, "data": {"path": f"{n}/dev.csv", "id_column": "id"}} for n in ("one", "two", "three")],
        "models": [
            {"name": "good", "kind": "predictions", "source": "{dataset}/good.csv"},
            {"name": "fair", "kind": "predictions", "source": "{dataset}/fair.csv"},
        ],
        "eval": {"device": "cpu"},
        "stats": {"n_resamples": 200},
        "speed": {"enabled": False},
        "across": {"metric": "mcc", "rope": 0.01},
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    outcome = headtohead.suite(tmp_path / "suite.yaml", out_dir=tmp_path / "out")
    assert outcome.result.metric == "mcc" and outcome.result.higher_is_better
    for entry in outcome.result.datasets:
        run = load_result(tmp_path / "out" / entry.name / "results.json")
        assert run.stats.settings.metrics == ["mcc"]  # the suite's metric is added to every run
        assert entry.scores == {m: run.stats.model(m).metrics["mcc"].value for m in ("good", "fair")}
    again = headtohead.suite(sorted((tmp_path / "out").glob("*/results.json")), metric="mcc")
    assert {d.name: d.scores for d in again.result.datasets} == {d.name: d.scores for d in outcome.result.datasets}
    with pytest.raises(Exception, match="did not pick roc_auc"):
        headtohead.suite(sorted((tmp_path / "out").glob("*/results.json")), metric="roc_auc")
