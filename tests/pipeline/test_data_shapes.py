"""Real-world shapes through a whole run: a test set holding some of a model's classes, models returning
NaN or infinite scores on some examples, a device running out of memory mid-pass (fake GPU)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
import yaml
from sklearn import metrics as skm

import headtohead
from headtohead.report.words.warnings import model_warnings
from headtohead.report.write import write_reports
from headtohead.runtime.devices import use_backend
from headtohead.testing.data import make_text_table
from headtohead.testing.fake_device import FakeCudaBackend

MODELS_PY = textwrap.dedent('''\
    import numpy as np

    from headtohead.runtime.devices import get_backend
    from headtohead.testing.models import keyword_classifier


    def nan_on(keywords, word):
        """A keyword model whose scores are NaN (or infinite) for texts holding ``word``."""
        inner = keyword_classifier(keywords)

        def predict(examples):
            scores = np.log(inner(examples))
            for i, text in enumerate(examples):
                if word in str(text).split():
                    scores[i] = np.nan if i % 2 else np.inf
            return scores

        predict.label_names = inner.label_names
        return predict


    def hungry(keywords, per_example=1000, device="cuda:0"):
        """A keyword model whose forward pass needs device memory in proportion to the batch (fake GPU)."""
        inner = keyword_classifier(keywords)

        def predict(examples):
            backend = get_backend()
            if hasattr(backend, "allocate"):  # on the fake GPU (the reference runs on the CPU)
                backend.allocate(device, per_example * len(examples))
                backend.free(device, per_example * len(examples))
            return inner(examples)

        predict.label_names = inner.label_names
        return predict
    ''')

NARROW = {"negative": ["bad", "dull", "awful"], "positive": ["good", "great", "lovely"]}
# More classes than the data holds, in another order; "music"/"plot" are common words, so it often
# names a class the test set does not have.
WIDE = {
    "neutral": ["music", "ending"],
    "negative": ["bad", "dull", "awful"],
    "mixed": ["plot"],
    "positive": ["good", "great", "lovely"],
}
OTHER = {"positive": ["good", "great"], "sarcastic": ["film"], "negative": ["bad", "dull"]}


def _keywords(name: str, keywords: dict, **extra) -> dict:
    return {
        "name": name,
        "kind": "python",
        "source": "headtohead.testing.models:keyword_classifier",
        "outputs": "probabilities",
        "model_args": {"keywords": keywords},
        **extra,
    }


@pytest.fixture()
def folder(tmp_path) -> Path:
    (tmp_path / "h2h_shape_models.py").write_text(MODELS_PY)
    make_text_table(tmp_path / "dev.csv", n_per_class=30, seed=5)
    return tmp_path


def _write(folder: Path, models: list[dict], **extra) -> Path:
    exp = {
        "name": "shapes",
        "data": {"path": "dev.csv"},
        "eval": {"batch_size": 8},
        "stats": {"n_resamples": 300},
        "speed": {"enabled": False},
        "models": models,
        **extra,
    }
    path = folder / "exp.yaml"
    path.write_text(yaml.safe_dump(exp, sort_keys=False))
    return path


def test_models_with_classes_the_data_does_not_hold_are_evaluated(folder):
    out = folder / "out"
    run = headtohead.run(
        _write(folder, [_keywords("narrow", NARROW), _keywords("wide", WIDE), _keywords("other", OTHER)]), out_dir=out
    )
    wide = run.result.model("wide")
    assert wide.label_alignment == "subset" and wide.labels_outside_data == ["neutral", "mixed"]
    assert wide.label_columns == [1, 3]
    predictions = headtohead.load_predictions(out)
    assert predictions.label_names == ("negative", "positive")
    assert predictions.outside_labels == ("neutral", "mixed", "sarcastic")  # the union, in the order models named them
    y = predictions.y_true
    for name in ("narrow", "wide", "other"):
        p = predictions[name]
        assert p.proba.shape == (60, 5)
        np.testing.assert_allclose(p.proba.sum(axis=1), 1.0, rtol=1e-5)
        assert (p.pred == p.proba.argmax(axis=1)).all()
    assert (predictions["narrow"].proba[:, 2:] == 0).all() and (predictions["wide"].proba[:, 4] == 0).all()
    assert (predictions["other"].proba[:, 2:4] == 0).all()
    wide_pred = predictions["wide"].pred
    outside = int((wide_pred >= 2).sum())
    assert outside >= 5  # the test means something: the wide model names absent classes
    assert wide.quality.predicted_outside == outside
    assert wide.quality.accuracy == pytest.approx(skm.accuracy_score(y, wide_pred))
    assert wide.quality.f1_macro == pytest.approx(skm.f1_score(y, wide_pred, labels=[0, 1], average="macro"))
    union = sorted(set(wide_pred.tolist()) | {0, 1})
    assert wide.quality.confusion_labels == [predictions.all_labels[i] for i in union]

    stats = {m.name: m for m in run.result.stats.models}
    assert stats["wide"].f1_macro.value == pytest.approx(wide.quality.f1_macro)  # bootstrap sums = scikit-learn
    assert stats["wide"].balanced_accuracy.value == pytest.approx(wide.quality.balanced_accuracy)
    assert stats["wide"].accuracy.value == pytest.approx(wide.quality.accuracy)
    pair = next(c for c in run.result.stats.comparisons if {c.model_a, c.model_b} == {"narrow", "wide"})
    right = (predictions["narrow"].pred == y), (wide_pred == y)
    assert pair.table.only_a_correct == int((right[0] & ~right[1]).sum()) and pair.n_excluded == 0
    assert any(
        "knows 4 classes, 2 of which never occur in this data ('neutral', 'mixed')" in w
        and f"its {outside} prediction(s) of them count as errors" in w
        for w in model_warnings(wide)
    )

    html = write_reports(run.result, out, predictions=run.predictions).read_text()
    assert "mixed" in html or "neutral" in html  # the confusion over the union names the outside classes
    again = headtohead.run(folder / "exp.yaml", out_dir=out, resume=True)
    assert again.resumed == ["narrow", "wide", "other"]
    np.testing.assert_array_equal(again.predictions["other"].proba, predictions["other"].proba)


def test_nan_and_infinite_scores_are_counted_as_wrong_answers(folder):
    nan = {
        "name": "nan",
        "kind": "python",
        "source": "h2h_shape_models:nan_on",
        "model_args": {"keywords": NARROW, "word": "acting"},
    }
    run = headtohead.run(_write(folder, [_keywords("narrow", NARROW), nan]), out_dir=folder / "out")
    predictions = headtohead.load_predictions(folder / "out")
    texts = np.array(_texts(folder))[predictions.order]
    bad = np.array(["acting" in t.split() for t in texts])
    assert 5 <= bad.sum() <= 55
    assert (predictions["nan"].pred[bad] == -1).all() and (predictions["nan"].pred[~bad] >= 0).all()
    assert np.isnan(predictions["nan"].proba[bad]).all()
    quality = run.result.model("nan").quality
    assert quality.n_failed == bad.sum() and quality.n_examples == 60
    assert quality.failed_examples == predictions.order[bad][:10].tolist()  # dataset rows, the first ten
    stats = {m.name: m for m in run.result.stats.models}
    assert stats["nan"].n_failed == bad.sum() and stats["nan"].n_examples == 60
    assert stats["narrow"].n_failed == 0 and stats["narrow"].n_examples == 60
    y = predictions.y_true
    assert stats["nan"].accuracy.value == pytest.approx((predictions["nan"].pred == y).mean())  # failures: wrong
    assert stats["nan"].accuracy_answered.value == pytest.approx((predictions["nan"].pred[~bad] == y[~bad]).mean())
    (pair,) = run.result.stats.comparisons
    assert pair.n_examples == 60 and pair.n_excluded == 0
    a_right = predictions["narrow"].pred == y
    b_right = predictions["nan"].pred == y
    assert pair.table.only_a_correct == int((a_right & ~b_right).sum())
    assert pair.table.both_correct == int((a_right & b_right).sum())
    assert f"nan gave no prediction for {bad.sum()} of 60 examples" in pair.verdict
    (warning,) = [w for w in model_warnings(run.result.model("nan")) if "NaN" in w]
    assert warning.startswith(f"model 'nan' gave no prediction for {bad.sum()} of 60 examples")
    assert "each counts as a wrong answer" in warning


def _texts(folder: Path) -> list[str]:
    import csv

    with open(folder / "dev.csv", newline="") as handle:
        return [row["text"] for row in csv.DictReader(handle)]


def test_out_of_device_memory_backs_off_and_is_recorded(folder):
    hungry = {
        "name": "hungry",
        "kind": "python",
        "source": "h2h_shape_models:hungry",
        "model_args": {"keywords": NARROW},
        "outputs": "probabilities",
    }
    reference = headtohead.run(_write(folder, [hungry], eval={"batch_size": 8, "device": "cpu"}))
    with use_backend(FakeCudaBackend(memory_limit=3 * 1000)):  # three examples fit at a time
        run = headtohead.run(_write(folder, [hungry], eval={"batch_size": 8, "device": "cuda"}), out_dir=folder / "out")
    record = run.result.model("hungry")
    assert [(e.batch, e.batch_size, e.sub_batch_size) for e in record.batch_backoff] == [(0, 8, 4), (0, 4, 2)]
    assert record.batch_size == 8 and record.n_batches == 8  # the plan is the run's, unchanged
    np.testing.assert_array_equal(run.predictions["hungry"].pred, reference.predictions["hungry"].pred)
    assert headtohead.load_result(folder / "out" / "results.json").model("hungry").batch_backoff == record.batch_backoff
    (warning,) = [w for w in model_warnings(record) if "memory" in w]
    assert warning.startswith(
        "model 'hungry' ran out of device memory on batch 1 (8 examples, OutOfMemoryError): "
        "from there on, batches ran in consecutive pieces of at most 2 examples"
    )
