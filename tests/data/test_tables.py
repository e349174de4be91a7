"""Text tables: every format, skip counts, label handling and the one-line errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from headtohead.config.schema import DataConfig
from headtohead.data.tables import is_missing, load_table
from headtohead.errors import DataError
from headtohead.testing.data import make_image_folder, make_text_table, write_text_table

ROWS = [
    {"text": "a fine, moving film", "label": "positive"},
    {"text": 'dull "and" flat', "label": "negative"},
    {"text": "superb", "label": "positive"},
]


def _load(path, **config):
    return load_table(str(path), DataConfig(path=str(path), **config))


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".json", ".parquet", ".pq"])
def test_every_format_reads_the_same_rows_in_order(tmp_path, suffix):
    path = write_text_table(tmp_path / f"t{suffix}", ROWS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing skipped: no warning either
        ds = _load(path)
    assert ds.modality == "text"
    assert ds.examples == [r["text"] for r in ROWS]
    assert all(type(t) is str for t in ds.examples)
    assert ds.label_names == ("negative", "positive")
    assert ds.labels.tolist() == [1, 0, 1]
    assert ds.skipped == {}


def test_json_file_holding_one_array_is_read(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('[{"text": "x", "label": 0}, {"text": "y", "label": 1}]')
    ds = _load(path)
    assert ds.examples == ["x", "y"] and ds.labels.tolist() == [0, 1]


def test_tsv_keeps_quotes_inside_sentences(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text('text\tlabel\nhe said "great\t1\n" odd start\t0\n')
    ds = _load(path)
    assert ds.examples == ['he said "great', '" odd start']
    assert ds.labels.tolist() == [1, 0]


def test_csv_bom_and_quoted_commas(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b'\xef\xbb\xbftext,label\n"one, two",1\n')
    ds = _load(path)
    assert ds.examples == ["one, two"]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_empty_text_and_missing_labels_are_counted_not_dropped_silently(tmp_path, suffix):
    rows = [
        {"text": "kept", "label": 1},
        {"text": "", "label": 0},
        {"text": "   ", "label": 1},
        {"text": None, "label": 0},
        {"text": "no label", "label": None},
        {"text": "also kept", "label": 0},
    ]
    path = write_text_table(tmp_path / f"t{suffix}", rows)
    with pytest.warns(UserWarning, match=r"skipped 4 rows \(empty text: 3, missing label: 1\)"):
        ds = _load(path)
    assert ds.examples == ["kept", "also kept"]
    assert ds.skipped == {"empty text": 3, "missing label": 1}
    # integer labels stay integers although the column had gaps (no "1.0" class names)
    assert ds.label_names == ("0", "1") and ds.labels.tolist() == [1, 0]


def test_integral_float_labels_written_by_pandas_are_integers(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("text,label\na,1.0\nb,0.0\nc,\n")
    with pytest.warns(UserWarning):
        ds = _load(path, label_names=["neg", "pos"])
    assert ds.label_names == ("neg", "pos") and ds.labels.tolist() == [1, 0]


def test_int_labels_are_named_by_config_label_names(tmp_path):
    path = make_text_table(tmp_path / "t.csv", n_per_class=3, int_labels=True)
    ds = _load(path, label_names=["negative", "positive"])
    assert ds.label_names == ("negative", "positive")
    assert ds.class_counts().tolist() == [3, 3]


def test_name_labels_follow_config_label_names_order(tmp_path):
    path = write_text_table(tmp_path / "t.csv", ROWS)
    ds = _load(path, label_names=["positive", "negative"])
    assert ds.label_names == ("positive", "negative") and ds.labels.tolist() == [0, 1, 0]


def test_labels_outside_config_label_names_are_an_error(tmp_path):
    path = write_text_table(tmp_path / "t.csv", ROWS)
    with pytest.raises(DataError, match=r"labels 'positive' are not in data.label_names"):
        _load(path, label_names=["negative", "neutral"])


def test_mixed_label_kinds_are_an_error(tmp_path):
    path = write_text_table(tmp_path / "t.csv", [{"text": "a", "label": 1}, {"text": "b", "label": "good"}])
    with pytest.raises(DataError, match="mixes numbers and names"):
        _load(path)


def test_a_label_column_whose_every_value_differs_is_refused_when_the_data_loads(tmp_path):
    """An unlabelled test split (its sentences, or its row index, read as labels) is named at once, not after the models ran."""
    from headtohead.data.tables import UNIQUE_LABELS_FROM

    rows = [{"text": f"sentence {i}", "label": f"sentence {i} again"} for i in range(UNIQUE_LABELS_FROM)]
    with pytest.raises(DataError) as info:
        _load(write_text_table(tmp_path / "test.tsv", rows))
    assert str(info.value) == (
        f"{tmp_path / 'test.tsv'}: column 'label' (data.label_column): all {UNIQUE_LABELS_FROM} values differ, so it "
        f"is probably not labels (an unlabelled file?); set data.label_column (--label-column) to the column of "
        f"classes (columns: text, label)"
    )
    numbered = [{"text": f"sentence {i}", "index": i} for i in range(UNIQUE_LABELS_FROM)]
    with pytest.raises(DataError, match=r"column 'index' \(data.label_column\): all 20 values differ"):
        _load(write_text_table(tmp_path / "n.csv", numbered), label_column="index")
    # fewer rows may be a toy set of one example per class; declared classes are the user's word
    assert len(_load(write_text_table(tmp_path / "few.csv", rows[:-1])).label_names) == UNIQUE_LABELS_FROM - 1
    names = [f"c{i}" for i in range(UNIQUE_LABELS_FROM)]
    assert _load(tmp_path / "n.csv", label_column="index", label_names=names).label_names == tuple(names)


def test_text_pair_column(tmp_path):
    path = make_text_table(tmp_path / "p.jsonl", n_per_class=2, pair=True)
    ds = _load(path, text_pair_column="text_pair")
    assert ds.modality == "text_pair"
    assert all(isinstance(e, tuple) and len(e) == 2 and all(isinstance(s, str) for s in e) for e in ds.examples)


def test_empty_pair_is_counted(tmp_path):
    rows = [{"q": "a", "p": "b", "label": 0}, {"q": "c", "p": "", "label": 1}]
    path = write_text_table(tmp_path / "p.csv", rows)
    with pytest.warns(UserWarning):
        ds = _load(path, text_column="q", text_pair_column="p")
    assert ds.examples == [("a", "b")] and ds.skipped == {"empty text pair": 1}


def test_unknown_column_lists_columns_and_suggests(tmp_path):
    path = write_text_table(tmp_path / "t.csv", [{"sentence": "a", "labels": 1}])
    with pytest.raises(DataError) as info:
        _load(path, text_column="sentence", label_column="label")
    message = str(info.value)
    assert "no column 'label' (data.label_column)" in message
    assert "did you mean labels?" in message and "sentence, labels" in message
    assert "\n" not in message


def test_default_text_column_missing_says_which_key(tmp_path):
    path = write_text_table(tmp_path / "t.csv", [{"sentence": "a", "label": 1}])
    with pytest.raises(DataError, match=r"no column 'text' \(data.text_column\).*sentence, label"):
        _load(path)


def test_tab_file_named_csv_gets_a_separator_hint(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("text\tlabel\nhello\t1\n")
    with pytest.raises(DataError, match="one column containing tabs"):
        _load(path)


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet"])
def test_empty_file(tmp_path, suffix):
    path = tmp_path / f"t{suffix}"
    path.write_bytes(b"")
    with pytest.raises(DataError, match="the file is empty"):
        _load(path)


def test_whitespace_only_file_is_empty(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text("\n  \n")
    with pytest.raises(DataError, match="the file is empty"):
        _load(path)


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".parquet"])
def test_header_only(tmp_path, suffix):
    path = write_text_table(tmp_path / f"t{suffix}", [], columns=["text", "label"])
    with pytest.raises(DataError, match=r"has a header \(text, label\) but no rows"):
        _load(path)


def test_png_renamed_to_csv_is_not_a_text_table(tmp_path):
    folder = make_image_folder(tmp_path / "img", classes=("a",), n_per_class=1)
    path = tmp_path / "photo.csv"
    path.write_bytes((folder / "a" / "a_0.png").read_bytes())
    with pytest.raises(DataError, match="not a text table .*PNG image"):
        _load(path)


def test_utf16_file_is_not_a_text_table(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes("text,label\nhi,1\n".encode("utf-16"))
    with pytest.raises(DataError, match="not a text table"):
        _load(path)


def test_latin1_file_says_not_utf8(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes("text,label\ncaf\u00e9,1\n".encode("latin-1"))
    with pytest.raises(DataError, match=r"not UTF-8 text \(byte 0xe9"):
        _load(path)


def test_malformed_csv_row_names_the_line(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("text,label\nfine,1\ntoo,many,fields\nok,0\n")
    with pytest.raises(DataError, match="malformed row at line 3: expected 2 fields, saw 3"):
        _load(path)


def test_malformed_jsonl_names_the_line(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"text": "a", "label": 1}\n{"text": oops}\n')
    with pytest.raises(DataError, match="line 2 is not valid JSON"):
        _load(path)


def test_corrupt_parquet(tmp_path):
    path = tmp_path / "t.parquet"
    path.write_bytes(b"this is not parquet at all")
    with pytest.raises(DataError, match="not a readable parquet file"):
        _load(path)


def test_json_numbers_as_text_become_str(tmp_path):
    path = write_text_table(tmp_path / "t.jsonl", [{"text": 42, "label": 0}, {"text": "x", "label": 1}])
    assert _load(path).examples == ["42", "x"]


def test_is_missing():
    assert is_missing(None) and is_missing(float("nan")) and is_missing(" \t") and is_missing(np.nan)
    assert not is_missing("0") and not is_missing(0) and not is_missing("NA")
