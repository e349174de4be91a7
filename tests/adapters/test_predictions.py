"""Prediction files: every format round-trips, rows are matched by id or position, every error is one line."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from headtohead.adapters.predictions import SUM_TOLERANCE, read_prediction_file, write_prediction_file
from headtohead.data.base import Dataset
from headtohead.errors import DataError, ModelError

NAMES = ("negative", "neutral", "positive")


def _dataset(n=6, ids=True, skipped=None):
    labels = np.arange(n) % 3
    return Dataset(
        "dev.csv",
        "text",
        [f"t{i}" for i in range(n)],
        labels,
        NAMES,
        skipped or {},
        ids=tuple(f"s{i}" for i in range(n)) if ids else None,
    )


def _proba(n=6, seed=0):
    rng = np.random.default_rng(seed)
    raw = rng.random((n, 3)) + 0.01
    return raw / raw.sum(axis=1, keepdims=True)


def _one_line(error):
    assert "\n" not in str(error.value)
    return str(error.value)


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".json", ".parquet", ".pq"])
def test_round_trip_every_format(tmp_path, suffix):
    ds, proba = _dataset(), _proba()
    pred = proba.argmax(axis=1)
    path = write_prediction_file(tmp_path / f"p{suffix}", ds.ids, pred, proba, label_names=NAMES)
    read = read_prediction_file(path, ds)
    assert read.matched_by == "id" and read.warnings == ()
    assert read.pred.tolist() == pred.tolist()
    np.testing.assert_allclose(read.proba, proba, rtol=1e-14, atol=0)


def test_rows_are_realigned_by_id(tmp_path):
    ds, proba = _dataset(), _proba()
    order = [3, 0, 5, 1, 4, 2]
    path = write_prediction_file(
        tmp_path / "p.csv", [ds.ids[i] for i in order], [NAMES[i % 3] for i in order], proba[order], label_names=NAMES
    )
    read = read_prediction_file(path, ds)
    assert read.pred.tolist() == [i % 3 for i in range(6)]
    np.testing.assert_allclose(read.proba, proba, rtol=1e-14)


def test_row_order_without_ids_says_so(tmp_path):
    ds = _dataset(ids=False)
    path = write_prediction_file(tmp_path / "p.csv", None, [2, 1, 0, 2, 1, 0], label_names=NAMES)
    read = read_prediction_file(path, ds)
    assert read.matched_by == "row order" and read.proba is None
    assert read.pred.tolist() == [2, 1, 0, 2, 1, 0]
    assert any("matched to the data by position" in w for w in read.warnings)


def test_integer_ids_match_string_ids(tmp_path):
    ds = Dataset("d", "text", ["a", "b"], np.array([0, 1]), ("x", "y"), ids=("10", "11"))
    path = tmp_path / "p.jsonl"
    path.write_text('{"id": 11, "prediction": "y"}\n{"id": 10, "prediction": "x"}\n')
    assert read_prediction_file(path, ds).pred.tolist() == [0, 1]


def test_indices_and_names_and_ambiguous_names(tmp_path):
    ds = _dataset(ids=False)
    path = tmp_path / "p.csv"
    path.write_text("prediction\n0\n1\n2\n0\n1\n2\n")
    assert read_prediction_file(path, ds).pred.tolist() == [0, 1, 2, 0, 1, 2]
    path.write_text("prediction\n0.0\n1.0\n2.0\n0\n1\n2\n")  # pandas writes ints with a gap as 1.0
    assert read_prediction_file(path, ds).pred.tolist() == [0, 1, 2, 0, 1, 2]
    digits = Dataset("d", "text", ["a", "b", "c"], np.array([0, 1, 2]), ("1", "2", "3"))
    path.write_text("prediction\n1\n2\n2\n")
    read = read_prediction_file(path, digits)
    assert read.pred.tolist() == [0, 1, 1]  # names win: "1" is the label named "1"
    assert any("read as label names, not as indices" in w for w in read.warnings)


def test_list_column_in_every_format(tmp_path):
    ds, proba = _dataset(), _proba()
    frame = pd.DataFrame({"id": ds.ids, "prediction": proba.argmax(axis=1), "proba": list(proba.tolist())})
    frame.to_parquet(tmp_path / "p.parquet")
    with (tmp_path / "p.jsonl").open("w") as handle:
        for row in frame.to_dict(orient="records"):
            handle.write(json.dumps(row) + "\n")
    frame.assign(proba=[json.dumps(p) for p in proba.tolist()]).to_csv(tmp_path / "p.csv", index=False)
    for name in ("p.parquet", "p.jsonl", "p.csv"):
        np.testing.assert_allclose(read_prediction_file(tmp_path / name, ds).proba, proba, rtol=1e-14)


def test_probabilities_within_tolerance_are_renormalised(tmp_path):
    ds = Dataset("d", "text", ["a"], np.array([0]), ("x", "y"))
    path = tmp_path / "p.csv"
    path.write_text("prediction,proba_x,proba_y\nx,0.7002,0.3\n")
    read = read_prediction_file(path, ds)
    assert read.proba.sum() == pytest.approx(1.0, abs=1e-15) and SUM_TOLERANCE == 1e-3


def test_prediction_that_is_not_the_most_probable_class_is_noted(tmp_path):
    ds = Dataset("d", "text", ["a", "b"], np.array([0, 1]), ("x", "y"))
    path = write_prediction_file(tmp_path / "p.csv", None, ["y", "y"], [[0.9, 0.1], [0.2, 0.8]], label_names=("x", "y"))
    assert any(
        "1 row(s) predict a class that is not their most probable" in w for w in read_prediction_file(path, ds).warnings
    )


# --- errors: one line each, naming the file, the column or row, and the fix -------------------------------------


def test_file_not_found_and_unknown_suffix(tmp_path):
    with pytest.raises(ModelError, match=r"nope.csv: prediction file not found; check the model's source"):
        read_prediction_file(tmp_path / "nope.csv", _dataset())
    (tmp_path / "p.xlsx").write_bytes(b"PK")
    with pytest.raises(ModelError, match=r"cannot read '.xlsx' prediction files; use .csv, .tsv"):
        read_prediction_file(tmp_path / "p.xlsx", _dataset())


def test_unreadable_file_is_a_data_error(tmp_path):
    (tmp_path / "p.csv").write_bytes(b"\x89PNG\r\n\x1a\n....")
    with pytest.raises(DataError, match="not a text table"):
        read_prediction_file(tmp_path / "p.csv", _dataset())


def test_no_prediction_column_lists_columns_and_cuts_long_lists(tmp_path):
    frame = pd.DataFrame({"predicton": ["x"], **{f"extra{i}": [i] for i in range(25)}})
    frame.to_csv(tmp_path / "p.csv", index=False)
    with pytest.raises(ModelError) as info:
        read_prediction_file(tmp_path / "p.csv", _dataset(1, ids=False), name="gpt")
    message = _one_line(info)
    assert message.startswith("model 'gpt' (") and "no 'prediction' column — did you mean predicton?" in message
    assert "extra18 … and 6 more; add a column 'prediction'" in message


def test_empty_duplicate_missing_and_unknown_ids(tmp_path):
    ds = _dataset(100)
    path = tmp_path / "p.csv"
    write_prediction_file(path, ["s0", "", *ds.ids[2:]], ["neutral"] * 100)
    with pytest.raises(ModelError, match=r"column 'id' is empty in row\(s\) 2; every row needs the id"):
        read_prediction_file(path, ds)
    write_prediction_file(path, [*ds.ids, "s1", "s2"], ["neutral"] * 102)
    with pytest.raises(ModelError, match=r"2 duplicate id\(s\): 's1', 's2'; give each example one row"):
        read_prediction_file(path, ds)
    write_prediction_file(path, ds.ids[:90], ["neutral"] * 90)
    with pytest.raises(ModelError) as info:
        read_prediction_file(path, ds)
    assert "10 of the data's 100 ids have no row: 's90', 's91', 's92', 's93', 's94' … and 5 more" in _one_line(info)
    write_prediction_file(path, [*ds.ids, "x1", "x2"], ["neutral"] * 102)
    with pytest.raises(ModelError, match=r"2 id\(s\) are not in the data: 'x1', 'x2'; remove those rows"):
        read_prediction_file(path, ds)
    read = read_prediction_file(path, ds, extra_ids="ignore")
    assert len(read.pred) == 100 and any("ignored 2 row(s)" in w for w in read.warnings)


def test_ids_in_the_file_but_not_in_the_data(tmp_path):
    path = write_prediction_file(tmp_path / "p.csv", ["a", "b"], ["neutral"] * 2)
    with pytest.raises(ModelError, match="has an id column 'id' but the data has no ids; set data.id_column"):
        read_prediction_file(path, _dataset(2, ids=False))


def test_length_mismatch_without_ids_mentions_skipped_rows(tmp_path):
    path = write_prediction_file(tmp_path / "p.csv", None, ["neutral"] * 7)
    with pytest.raises(ModelError) as info:
        read_prediction_file(path, _dataset(6, ids=False, skipped={"empty text": 1}))
    message = _one_line(info)
    assert "7 rows but the data has 6 examples (loading the data skipped 1 row(s)" in message
    assert "no 'id' column to match them by" in message


def test_unknown_and_mixed_labels(tmp_path):
    ds = _dataset(3, ids=False)
    path = write_prediction_file(tmp_path / "p.csv", None, ["positive", "mixed", "sarcastic"])
    with pytest.raises(ModelError) as info:
        read_prediction_file(path, ds)
    message = _one_line(info)
    assert "labels the data does not have: 'mixed', 'sarcastic' (first in row 2)" in message
    assert "the data's labels are: negative, neutral, positive (write these names, or their indices 0..2" in message
    write_prediction_file(path, None, ["positive", "1", "3"])
    with pytest.raises(ModelError, match=r"does not have: '1', '3'"):
        read_prediction_file(path, ds)
    write_prediction_file(path, None, ["positive", "", "neutral"])
    with pytest.raises(ModelError, match=r"'prediction' is empty in row\(s\) 2"):
        read_prediction_file(path, ds)


def test_probability_columns_for_unknown_or_missing_labels(tmp_path):
    ds = _dataset(1, ids=False)
    path = tmp_path / "p.csv"
    path.write_text("prediction,proba_negative,proba_neutral,proba_positive,proba_mixed\nneutral,.2,.2,.3,.3\n")
    with pytest.raises(
        ModelError,
        match=r"probability columns for labels the data does not have: 'proba_mixed'; "
        r"the data's labels are negative, neutral, positive",
    ):
        read_prediction_file(path, ds)
    path.write_text("prediction,proba_negative,proba_neutral\nneutral,.5,.5\n")
    with pytest.raises(ModelError, match=r"missing for 1 label\(s\): 'proba_positive'; give one proba_<label>"):
        read_prediction_file(path, ds)
    path.write_text('prediction,proba_negative,proba_neutral,proba_positive,proba\nneutral,.2,.5,.3,"[1,0,0]"\n')
    with pytest.raises(ModelError, match="both a 'proba' column and proba_<label> columns"):
        read_prediction_file(path, ds)


@pytest.mark.parametrize(
    ("row", "match"),
    [
        ("neutral,0.2,abc,0.3", r"row 1, column 'proba_neutral': 'abc' is not a number"),
        ("neutral,0.2,,0.8", r"row 1, column 'proba_neutral': the probability is empty, NaN or infinite"),
        ("neutral,0.2,nan,0.8", r"row 1, column 'proba_neutral': the probability is empty, NaN or infinite"),
        ("neutral,-0.1,0.3,0.8", r"row 1, column 'proba_negative': the probability is negative"),
    ],
)
def test_bad_probability_values(tmp_path, row, match):
    path = tmp_path / "p.csv"
    path.write_text(f"prediction,proba_negative,proba_neutral,proba_positive\n{row}\n")
    with pytest.raises(ModelError, match=match):
        read_prediction_file(path, _dataset(1, ids=False))


def test_probabilities_that_do_not_sum_to_one_name_the_first_row(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text(
        "prediction,proba_negative,proba_neutral,proba_positive\n"
        "neutral,0.2,0.5,0.3\nneutral,0.2,0.5,0.2\nneutral,0.6,0.6,0.6\n"
    )
    with pytest.raises(ModelError) as info:
        read_prediction_file(path, _dataset(3, ids=False))
    assert (
        "row 2: the probabilities sum to 0.9, not 1 (tolerance 0.001; 2 row(s) like this); write normalised"
        in _one_line(info)
    )


def test_list_column_errors(tmp_path):
    ds = _dataset(1, ids=False)
    path = tmp_path / "p.csv"
    path.write_text('prediction,proba\nneutral,"[0.5, 0.5]"\n')
    with pytest.raises(ModelError, match=r"row 1, column 'proba' has 2 values but the data has 3 labels"):
        read_prediction_file(path, ds)
    path.write_text("prediction,proba\nneutral,high\n")
    with pytest.raises(ModelError, match=r"row 1, column 'proba': 'high' is not a list of numbers"):
        read_prediction_file(path, ds)


def test_writer_refuses_inconsistent_input(tmp_path):
    with pytest.raises(ValueError, match="2 ids for 1 predictions"):
        write_prediction_file(tmp_path / "p.csv", ["a", "b"], ["x"])
    with pytest.raises(ValueError, match="proba must have shape"):
        write_prediction_file(tmp_path / "p.csv", None, ["x"], [[1.0]])
    with pytest.raises(ValueError, match="write .csv"):
        write_prediction_file(tmp_path / "p.txt", None, ["x"])


def test_sst2_prediction_files_give_the_models_own_mcnemar_table(tmp_path, shared_data):
    import csv

    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import ComplementNB
    from sklearn.pipeline import make_pipeline

    from headtohead.config.schema import DataConfig
    from headtohead.data import create_dataset
    from headtohead.stats.mcnemar import mcnemar_test

    train = pd.read_csv(shared_data / "sst2" / "train.tsv", sep="\t", quoting=csv.QUOTE_NONE).head(3000)
    dev = create_dataset(DataConfig(path=str(shared_data / "sst2" / "dev.tsv"))).eval
    direct, read = {}, {}
    models = (("lr", LogisticRegression(max_iter=1000), ".csv"), ("nb", ComplementNB(), ".parquet"))
    for name, classifier, suffix in models:
        model = make_pipeline(TfidfVectorizer(), classifier).fit(train["text"], train["label"].astype(str))
        proba = model.predict_proba(list(dev.examples))[:, [list(model.classes_).index(c) for c in dev.label_names]]
        direct[name] = proba.argmax(axis=1)
        path = write_prediction_file(
            tmp_path / f"{name}{suffix}", None, direct[name], proba, label_names=dev.label_names
        )
        result = read_prediction_file(path, dev)
        np.testing.assert_allclose(result.proba, proba, rtol=1e-12)
        read[name] = result.pred
    y = dev.labels
    assert mcnemar_test(read["lr"] == y, read["nb"] == y) == mcnemar_test(direct["lr"] == y, direct["nb"] == y)
