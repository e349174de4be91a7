"""A real cascade: TF-IDF + logistic regression → SmolLM2-135M-Instruct run here, on SST-2 dev sentences."""

from __future__ import annotations

import csv
import itertools

import numpy as np
import pytest

import headtohead
from headtohead.results import Predictions
from headtohead.stats.cascade import deferral_scores, deferred

N = 48


@pytest.mark.slow
@pytest.mark.shared_data
def test_tfidf_then_smollm2_in_process_on_sst2(shared_data, smollm2_folder, tmp_path):
    """Both parts run here (no stored file): the cascade's figures are its parts' predictions at its threshold.

    48 sentences: the threshold is chosen on about 60 % of them (a 10 pp margin needs 29 without a harm);
    every model is judged on the rest.
    """
    from sim.tfidf import save_tfidf_logreg

    labels = ("negative", "positive")
    with open(shared_data / "sst2" / "dev.tsv", newline="") as f:
        rows = list(itertools.islice(csv.DictReader(f, delimiter="\t"), N))
    dev = tmp_path / "dev.csv"
    with open(dev, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["text", "label"])
        writer.writerows([r["text"].strip(), labels[int(r["label"])]] for r in rows)
    tfidf = save_tfidf_logreg(shared_data / "sst2" / "train.tsv", 2000, tmp_path / "tfidf.skops")
    experiment = {
        "name": "cascade-sst2",
        "data": {"path": str(dev)},
        "models": [
            {"name": "tfidf", "kind": "sklearn", "source": str(tfidf)},
            {"name": "smollm2", "kind": "causal-lm", "source": str(smollm2_folder), "answer": "score",
             "chat_template": False, "prompt": "Review: {text}\nSentiment:"},
            {"name": "casc", "kind": "cascade", "cheap": "tfidf", "expensive": "smollm2", "max_drop": "10pp",
             "calibration": 0.6},
        ],
        "eval": {"batch_size": 16, "device": "cpu"},
        "stats": {"n_resamples": 200},
        "speed": {"enabled": False},
    }  # fmt: skip
    outcome = headtohead.run(experiment, out_dir=tmp_path / "out")
    result, c = outcome.result, outcome.result.model("casc").cascade
    kept = Predictions.load(tmp_path / "out" / "predictions.npz")
    evaluation = ~np.isin(kept.order, result.calibration_examples)
    defer = deferred(deferral_scores(kept["tfidf"].proba, "top"), c.threshold)
    answer = np.where(defer, kept["smollm2"].pred, kept["tfidf"].pred)
    assert (answer == kept["casc"].pred).all()  # no new call: its parts' answers, chosen by the threshold
    assert c.n_evaluation == evaluation.sum() and 0 < c.n_evaluation < N
    assert c.deferred == defer[evaluation].sum()
    assert c.correct == (answer == kept.y_true)[evaluation].sum()
    assert c.latency_mean_s is None and c.cost_per_million is None  # nothing timed, no price: not measured
    stats = {m.name: m for m in result.stats.models}
    assert stats["casc"].accuracy.value == pytest.approx(c.accuracy)
