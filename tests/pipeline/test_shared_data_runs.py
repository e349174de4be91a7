"""`h2h run` on the real public data in ../shared/data (skipped where it is absent)."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from sklearn import metrics as skm

import headtohead
from headtohead.cli.main import main

pytestmark = pytest.mark.shared_data


def _run_cli(tmp_path, experiment, capsys):
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(experiment))
    out = tmp_path / "out"
    main(["run", str(path), "--out", str(out)])
    capsys.readouterr()
    return headtohead.load_result(out / "results.json"), headtohead.load_predictions(out)


def test_sst2_dev_with_two_tiny_text_models(shared_data, tmp_path, capsys):
    from headtohead.testing.text import make_tiny_bert, make_tiny_roberta

    dev = shared_data / "sst2" / "dev.tsv"
    texts = [line.split("\t")[0] for line in dev.read_text().splitlines()[1:300]]
    experiment = {
        "name": "sst2-tiny",
        "data": {"path": str(dev), "label_names": ["negative", "positive"]},
        "models": [
            {
                "name": "bert",
                "kind": "transformers",
                "max_length": 64,
                "source": str(make_tiny_bert(tmp_path / "bert", ["negative", "positive"], texts=texts, seed=1)),
            },
            {
                "name": "roberta",
                "kind": "transformers",
                "max_length": 64,
                "source": str(make_tiny_roberta(tmp_path / "roberta", ["negative", "positive"], texts=texts, seed=2)),
            },
        ],
        "eval": {"batch_size": 64, "device": "cpu"},
        "speed": {"enabled": False},
    }
    result, predictions = _run_cli(tmp_path, experiment, capsys)
    assert result.dataset.n_examples == 872 and result.dataset.class_counts == [428, 444]
    assert result.models[0].index_order_hash == result.models[1].index_order_hash
    for model in result.models:
        pred = predictions[model.name].pred
        assert model.quality.accuracy == pytest.approx(skm.accuracy_score(predictions.y_true, pred))
        assert model.quality.f1_macro == pytest.approx(skm.f1_score(predictions.y_true, pred, average="macro"))
    # the run's McNemar p-value equals statsmodels' on the saved predictions
    from statsmodels.stats.contingency_tables import mcnemar

    a = predictions["bert"].pred == predictions.y_true
    b = predictions["roberta"].pred == predictions.y_true
    table = [[int(np.sum(a & b)), int(np.sum(a & ~b))], [int(np.sum(~a & b)), int(np.sum(~a & ~b))]]
    comparison = result.stats.comparison("bert", "roberta")
    assert comparison.test == "mcnemar-score"
    reference = mcnemar(table, exact=False, correction=False)
    if table[0][1] == table[1][0]:
        assert comparison.p_value == 1.0  # b = c (statsmodels gives nan for 0/0)
    else:
        assert comparison.p_value == pytest.approx(reference.pvalue, abs=1e-12)


def test_hymenoptera_val_with_two_timm_models(shared_data, tmp_path, capsys):
    experiment = {
        "name": "antsbees-tiny",
        "data": {"path": str(shared_data / "hymenoptera" / "val")},
        "models": [
            {
                "name": "resnet",
                "kind": "timm",
                "source": "resnet10t",
                "image_size": 64,
                "model_args": {"channels": [16, 32, 64, 128]},
            },
            {"name": "mobilenet", "kind": "timm", "source": "mobilenetv3_small_050", "image_size": 64},
        ],
        "eval": {"batch_size": 32, "device": "cpu"},
        "speed": {"enabled": False},
    }
    result, predictions = _run_cli(tmp_path, experiment, capsys)
    assert result.dataset.n_examples == 153 and result.dataset.label_names == ["ants", "bees"]
    assert result.models[0].index_order_hash == result.models[1].index_order_hash
    for model in result.models:
        saved = predictions[model.name]
        assert saved.proba.shape == (153, 2)
        np.testing.assert_allclose(saved.proba.sum(axis=1), 1.0, rtol=1e-5)
        assert (
            model.quality.confusion_matrix
            == skm.confusion_matrix(predictions.y_true, saved.pred, labels=[0, 1]).tolist()
        )
