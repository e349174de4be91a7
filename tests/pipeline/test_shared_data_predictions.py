"""Prediction files on real data: SST-2 dev (../shared/data; skipped where it is absent).

The two TF-IDF models of ``examples/build_offline_models.py`` compared by running them, and
compared again from the prediction files they write, give the same accuracies, McNemar table
and p-value; the report of the second run shows the sentences the models disagree on.
"""

from __future__ import annotations

import csv
import json

import pandas as pd
import pytest
from markupsafe import escape

import headtohead
from headtohead.adapters.predictions import write_prediction_file
from headtohead.cli.main import main

pytestmark = pytest.mark.shared_data

LABELS = ["negative", "positive"]


def _example_models(train_tsv):
    """The SST-2 pipelines of examples/build_offline_models.py (same features, classifiers and training rows)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import ComplementNB
    from sklearn.pipeline import make_pipeline

    train = pd.read_csv(train_tsv, sep="\t", quoting=csv.QUOTE_NONE).head(20_000)
    texts, labels = train["text"].astype(str), train["label"].map(dict(enumerate(LABELS)))
    return {
        name: make_pipeline(TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True), classifier).fit(
            texts, labels
        )
        for name, classifier in (("logreg", LogisticRegression(max_iter=1000, C=4.0)), ("nb", ComplementNB()))
    }


def test_sst2_prediction_files_give_the_same_comparison_as_the_models(shared_data, tmp_path, capsys, monkeypatch):
    import skops.io as sio

    dev = shared_data / "sst2" / "dev.tsv"
    models = _example_models(shared_data / "sst2" / "train.tsv")
    texts = pd.read_csv(dev, sep="\t", quoting=csv.QUOTE_NONE)["text"].astype(str).tolist()
    for name, model in models.items():
        sio.dump(model, tmp_path / f"{name}.skops")
        proba = model.predict_proba(texts)[:, [list(model.classes_).index(c) for c in LABELS]]
        write_prediction_file(
            tmp_path / f"{name}{'.csv' if name == 'logreg' else '.jsonl'}",
            None,
            proba.argmax(axis=1),
            proba,
            label_names=LABELS,
        )
    running = headtohead.run(
        {
            "name": "sst2-models",
            "seed": 42,
            "data": {"path": str(dev), "label_names": LABELS},
            "models": [{"name": n, "kind": "sklearn", "source": str(tmp_path / f"{n}.skops")} for n in models],
            "eval": {"batch_size": 256, "device": "cpu"},
            "speed": {"enabled": False},
        }
    ).result
    monkeypatch.chdir(tmp_path)
    main(
        [
            "run",
            "--data",
            str(dev),
            "--model",
            "logreg=logreg.csv",
            "--model",
            "nb=nb.jsonl",
            "--set",
            "data.label_names=[negative, positive]",
            "--set",
            "seed=42",
            "--set",
            "speed.enabled=false",
            "--out",
            "files",
        ]
    )
    capsys.readouterr()
    stored = headtohead.load_result(tmp_path / "files" / "results.json")
    assert [m.quality.accuracy for m in stored.models] == [m.quality.accuracy for m in running.models]
    # 681 and 689 of 872 right (scikit-learn 1.x; a small tolerance for other versions)
    assert [m.quality.accuracy for m in running.models] == pytest.approx([681 / 872, 689 / 872], abs=0.005)
    by_files, by_models = stored.stats.comparisons[0], running.stats.comparisons[0]
    assert by_files.table == by_models.table and by_files.p_value == by_models.p_value
    assert by_files.table.only_a_correct + by_files.table.only_b_correct > 50  # a real disagreement to show
    # the report shows the disagreeing sentences, both directions, escaped
    page = (tmp_path / "files" / "report.html").read_text()
    shown = stored.stats.disagreements[0]
    assert len(shown.only_a_right) == len(shown.only_b_right) == 20
    for row in (shown.only_a_right[0], shown.only_b_right[0]):
        assert row.input.strip() and str(escape(row.input.strip())) in page
    saved = json.loads((tmp_path / "files" / "results.json").read_text())
    kinds = {s["kind"] for s in saved["stats"]["slices"]["slices"]}
    assert kinds == {"class", "size"}
    with open(tmp_path / "files" / "disagreements.csv", newline="") as handle:
        assert sum(1 for _ in csv.DictReader(handle)) == by_files.table.only_a_correct + by_files.table.only_b_correct
