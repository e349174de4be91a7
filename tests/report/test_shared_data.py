"""Reports of real runs on ../shared/data (SST-2 dev, ants/bees val); skipped where the data is absent."""

from __future__ import annotations

import csv
import re

import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

import headtohead
from headtohead.cli.report import report

pytestmark = pytest.mark.shared_data

FAST_SPEED = {
    "scenarios": ["offline", "single_stream"],
    "warmup_iterations": 1,
    "warmup_seconds": 0.0,
    "min_iterations": 5,
    "min_seconds": 0.0,
    "rounds": 5,
    "precision": None,  # a fixed number of rounds
    "num_batches": 2,
    "pipeline_iterations": 0,
    "memory": False,
    "n_resamples": 200,
}


def _report(results_dir, out_dir):
    app = typer.Typer()
    app.command("report")(report)
    app.command("other")(lambda: None)
    done = CliRunner().invoke(
        app,
        [
            "report",
            str(results_dir),
            "--html",
            str(out_dir / "report.html"),
            "--md",
            str(out_dir / "report.md"),
            "--csv",
            str(out_dir / "table.csv"),
        ],
    )
    assert done.exit_code == 0, done.output
    return (
        (out_dir / "report.html").read_text(),
        (out_dir / "report.md").read_text(),
        pd.read_csv(out_dir / "table.csv"),
    )


def _tfidf_model(path, train_tsv, classifier):
    import skops.io as sio
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_pipeline

    rows = pd.read_csv(train_tsv, sep="\t", quoting=csv.QUOTE_NONE).head(3000)
    pipeline = make_pipeline(TfidfVectorizer(min_df=2), classifier).fit(rows["text"].astype(str), rows["label"])
    sio.dump(pipeline, path)
    return str(path)


def test_sst2_dev_report(shared_data, tmp_path):
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import ComplementNB

    train = shared_data / "sst2" / "train.tsv"
    out = tmp_path / "run"
    outcome = headtohead.run(
        {
            "name": "sst2-tfidf",
            "seed": 0,
            "data": {"path": str(shared_data / "sst2" / "dev.tsv"), "label_names": ["negative", "positive"]},
            "models": [
                {
                    "name": "logreg",
                    "kind": "sklearn",
                    "label_names": ["negative", "positive"],
                    "source": _tfidf_model(tmp_path / "lr.skops", train, LogisticRegression(max_iter=500)),
                },
                {
                    "name": "naive-bayes",
                    "kind": "sklearn",
                    "label_names": ["negative", "positive"],
                    "source": _tfidf_model(tmp_path / "nb.skops", train, ComplementNB()),
                },
            ],
            "eval": {"batch_size": 128, "device": "cpu"},
            "stats": {"n_resamples": 300},
            "speed": FAST_SPEED,
        },
        out_dir=out,
    )
    result = outcome.result
    html, md, table = _report(out, tmp_path)
    assert result.stats is not None and result.speed is not None
    # trade-off, intervals, latency, latency against length (text), confusion, F1 per class, reliability, slices,
    # and the front (quality against latency; no price given: no cost chart)
    assert html.count("<img ") == 9
    assert result.stats.comparisons[0].verdict.split(":")[0] in html  # "logreg vs naive-bayes"
    assert "872 examples, 2 classes (text)" in html and "872 examples" in md
    assert list(table["model"]) == ["logreg", "naive-bayes"]
    assert table["accuracy"].tolist() == pytest.approx([m.quality.accuracy for m in result.models])
    assert len(re.findall(r"!\[", md)) == 9  # the same charts as the HTML


@pytest.mark.slow
def test_ants_bees_val_report(shared_data, tmp_path):
    """Images, quality and statistics (the SST-2 test covers speed)."""
    out = tmp_path / "run"
    outcome = headtohead.run(
        {
            "name": "antsbees",
            "seed": 0,
            "data": {"path": str(shared_data / "hymenoptera" / "val")},
            "models": [
                {
                    "name": "resnet",
                    "kind": "timm",
                    "source": "resnet10t",
                    "image_size": 48,
                    "model_args": {"channels": [8, 16, 32, 64]},
                },
                {"name": "mobilenet", "kind": "timm", "source": "mobilenetv3_small_050", "image_size": 48},
            ],
            "eval": {"batch_size": 64, "device": "cpu"},
            "stats": {"n_resamples": 300},
            "speed": {"enabled": False},
        },
        out_dir=out,
    )
    html, md, table = _report(out, tmp_path)
    assert "153 examples, 2 classes (image)" in html
    # intervals, confusion, F1 per class, reliability, slices; a thumbnail per disagreeing example shown and
    # per label suspect shown (both models wrong with one answer)
    thumbnails = html.count('<img class="thumb"')
    assert html.count("<img ") - thumbnails == 5 and "Paired comparisons" in html and "Speed and memory" not in html
    shown, suspects = outcome.result.stats.disagreements[0], outcome.result.stats.label_suspects
    assert suspects is not None and suspects.rows
    assert thumbnails == len(shown.only_a_right) + len(shown.only_b_right) + len(suspects.rows) > 0
    assert "| accuracy ↑ |" in md and set(table["model"]) == {"resnet", "mobilenet"}
    assert "single_stream_p50_ms" not in table.columns
