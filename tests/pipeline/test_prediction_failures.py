"""A prediction file that says where the model failed: each failure a wrong answer, counted and named.

Also the ways through that a new user bringing files needs: a model of more classes than the
test set holds, numbered data against named predictions, a score where a class should be.
"""

from __future__ import annotations

import numpy as np
import pytest

import headtohead
from headtohead.adapters.predictions import read_prediction_file, write_prediction_file
from headtohead.cli.main import main
from headtohead.data.base import Dataset, encode_labels
from headtohead.errors import DataError, ModelError
from headtohead.report.words.warnings import model_warnings
from headtohead.results.predictions import NO_PREDICTION
from headtohead.testing.data import make_text_rows, write_text_table

LABELS = ("negative", "positive")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A text table of 30 examples with ids, and their true labels."""
    root = tmp_path_factory.mktemp("failures")
    rows = make_text_rows(30, classes=LABELS, seed=5)
    for i, row in enumerate(rows):
        row["id"] = f"d{i:02d}"
    write_text_table(root / "dev.csv", rows)
    return root, [r["id"] for r in rows], np.array([LABELS.index(r["label"]) for r in rows])


def _run(root, tmp_path, *models):
    return headtohead.run(
        {
            "name": "failures",
            "data": {"path": str(root / "dev.csv"), "id_column": "id"},
            "models": list(models),
            "eval": {"device": "cpu"},
            "stats": {"n_resamples": 200},
            "speed": {"enabled": False},
        },
        out_dir=tmp_path / "run",
    )


def test_five_empty_predictions_are_five_wrong_answers_counted_and_named(data, tmp_path):
    root, ids, y = data
    labels = [LABELS[k] for k in y]  # a perfect model …
    failed_at = [3, 7, 11, 19, 28]
    for i in failed_at:  # … but for 5 examples it gave nothing
        labels[i] = ""
    write_prediction_file(tmp_path / "a.csv", ids, labels)
    write_prediction_file(tmp_path / "b.csv", ids, [LABELS[k] for k in y])
    outcome = _run(
        root,
        tmp_path,
        {"name": "a", "kind": "predictions", "source": str(tmp_path / "a.csv")},
        {"name": "b", "kind": "predictions", "source": str(tmp_path / "b.csv")},
    )
    quality = outcome.result.model("a").quality
    assert quality.n_failed == 5 and sorted(quality.failed_examples) == failed_at
    assert quality.accuracy == pytest.approx((len(y) - 5) / len(y))  # each failure a wrong answer
    assert quality.answered.accuracy == 1.0
    assert outcome.predictions["a"].pred.tolist().count(NO_PREDICTION) == 5
    pair = outcome.result.stats.comparisons[0]
    assert {pair.model_a, pair.model_b} == {"a", "b"} and pair.table.only_b_correct == 5
    warnings = " ".join(model_warnings(outcome.result.model("a")))
    assert f"gave no prediction for 5 of {len(y)} examples" in warnings
    named = warnings.split("ids ")[1].split(":")[0]  # by the data's own ids, as the prediction file names them
    assert sorted(named.split(", ")) == sorted(ids[i] for i in failed_at) and "dataset rows" not in warnings


def test_failed_column_and_empty_probabilities_are_failures(data):
    root, ids, y = data
    ds = Dataset("dev.csv", "text", ["x"] * 4, y[:4], LABELS, ids=ids[:4])
    path = root / "failed.csv"
    path.write_text(
        "id,prediction,failed,proba_negative,proba_positive\n"
        f"{ids[0]},positive,,0.2,0.8\n"
        f"{ids[1]},negative,true,0.9,0.1\n"  # said failed: its label and probabilities do not count
        f"{ids[2]},positive,no,,\n"  # no probabilities at all: a failure
        f"{ids[3]},negative,0,nan,nan\n"
    )
    read = read_prediction_file(path, ds)
    assert read.pred.tolist() == [1, NO_PREDICTION, NO_PREDICTION, NO_PREDICTION] and read.n_failed == 3
    assert np.isnan(read.proba[1:]).all() and read.proba[0].tolist() == pytest.approx([0.2, 0.8])
    path.write_text(f"id,prediction,failed\n{ids[0]},positive,maybe\n")
    with pytest.raises(ModelError, match=r"row 1, column 'failed': 'maybe' is neither true nor false"):
        read_prediction_file(path, Dataset("dev.csv", "text", ["x"], y[:1], LABELS, ids=ids[:1]))


def test_missing_ids_are_an_error_unless_the_model_says_they_are_failures(data, tmp_path):
    root, ids, y = data
    write_prediction_file(tmp_path / "a.csv", ids[:-4], [LABELS[k] for k in y[:-4]])  # the last 4 missing
    write_prediction_file(tmp_path / "b.csv", ids, [LABELS[k] for k in y])
    b = {"name": "b", "kind": "predictions", "source": str(tmp_path / "b.csv")}
    with pytest.raises(ModelError, match=r"4 of the data's \d+ ids have no row: .*missing_ids: failed"):
        _run(root, tmp_path, {"name": "a", "kind": "predictions", "source": str(tmp_path / "a.csv")}, b)
    outcome = _run(
        root,
        tmp_path,
        {"name": "a", "kind": "predictions", "source": str(tmp_path / "a.csv"), "missing_ids": "failed"},
        b,
    )
    quality = outcome.result.model("a").quality
    assert quality.n_failed == 4 and sorted(quality.failed_examples) == list(range(len(y) - 4, len(y)))
    assert quality.accuracy == pytest.approx((len(y) - 4) / len(y))


def test_a_model_of_more_classes_than_the_data_holds(data, tmp_path):
    root, ids, y = data
    labels = [LABELS[k] for k in y]
    labels[0], labels[1] = "neutral", "mixed"  # classes the test set does not hold
    write_prediction_file(tmp_path / "a.csv", ids, labels)
    write_prediction_file(tmp_path / "b.csv", ids, [LABELS[k] for k in y])
    a = {"name": "a", "kind": "predictions", "source": str(tmp_path / "a.csv")}
    b = {"name": "b", "kind": "predictions", "source": str(tmp_path / "b.csv")}
    with pytest.raises(ModelError, match=r"label_names: \[negative, positive, mixed, neutral\]"):
        _run(root, tmp_path, a, b)
    with pytest.raises(DataError, match=r"declares them in its own label_names"):
        headtohead.run(
            {
                "name": "failures",
                "data": {"path": str(root / "dev.csv"), "id_column": "id", "label_names": [*LABELS, "neutral"]},
                "models": [a, b],
                "speed": {"enabled": False},
            },
            out_dir=tmp_path / "refused",
        )
    assert not (tmp_path / "refused").exists()  # a refused input leaves no empty --out behind
    outcome = _run(root, tmp_path, {**a, "label_names": ["negative", "neutral", "positive", "mixed"]}, b)
    record = outcome.result.model("a")
    assert record.labels_outside_data == ["neutral", "mixed"]
    assert record.quality.accuracy == pytest.approx((len(y) - 2) / len(y))  # the two extra classes: wrong answers
    assert record.quality.n_failed == 0


def test_numbered_data_against_named_predictions_suggests_data_label_names(data, tmp_path):
    root, ids, y = data
    numbered = tmp_path / "numbered.csv"
    numbered.write_text("id,text,label\n" + "".join(f"{i},t{i},{k}\n" for i, k in zip(ids, y, strict=True)))
    write_prediction_file(tmp_path / "a.csv", ids, [LABELS[k] for k in y])
    argv = ["run", "--data", str(numbered), "--id-column", "id", "-m", f"a={tmp_path / 'a.csv'}"]
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "-m", f"b={tmp_path / 'a.csv'}", "--out", str(tmp_path / "o")])
    assert exit_.value.code == 2 and not (tmp_path / "o").exists()
    ds = Dataset("n.csv", "text", ["x"] * 2, np.array([0, 1]), ("0", "1"), ids=["a", "b"])
    (tmp_path / "p.csv").write_text("id,prediction\na,negative\nb,positive\n")
    with pytest.raises(
        ModelError, match=r"--set 'data.label_names=\[negative,positive\]' if 0 is negative, 1 is positive\)$"
    ):
        read_prediction_file(tmp_path / "p.csv", ds)
    (tmp_path / "p.csv").write_text("id,prediction\na,0.3\nb,0.8\n")
    with pytest.raises(ModelError, match=r"a prediction is a class, not a score"):
        read_prediction_file(tmp_path / "p.csv", ds)


def test_a_fraction_among_whole_number_labels_is_not_called_a_name():
    with pytest.raises(DataError) as info:
        encode_labels([0, 1, "0.5", 1], source="d.csv")
    message = str(info.value)
    assert "holds '0.5' among whole-number labels" in message and "mixes numbers and names" not in message
    with pytest.raises(DataError, match="mixes numbers and names"):
        encode_labels([0, 1, "cat"], source="d.csv")
    assert encode_labels(["0.5", "1.5"], source="d.csv")[1] == ("0.5", "1.5")  # names that look like numbers


def test_probabilities_of_the_classes_the_data_lacks_follow_the_datas(tmp_path):
    ds = Dataset("d.csv", "text", ["x"] * 3, np.array([0, 1, 0]), ("cat", "dog"), ids=["1", "2", "3"])
    path = tmp_path / "p.csv"
    path.write_text("id,prediction,proba_cat,proba_dog,proba_bird\n1,cat,0.8,0.1,0.1\n2,bird,0.1,0.2,0.7\n3,,,,\n")
    with pytest.raises(ModelError, match=r"'proba_bird'.*declares all its classes in its label_names"):
        read_prediction_file(path, ds, empty="failed")
    read = read_prediction_file(path, ds, outside=("bird",), empty="failed")
    assert read.pred.tolist() == [0, 2, NO_PREDICTION]  # bird: the model's third class, a wrong answer
    assert read.proba.shape == (3, 3) and read.proba[1].tolist() == pytest.approx([0.1, 0.2, 0.7])
    assert np.isnan(read.proba[2]).all()
