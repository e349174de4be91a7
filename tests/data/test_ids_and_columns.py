"""Example ids and slice columns: read with the rows, kept through splits, checked with one-line errors."""

from __future__ import annotations

import numpy as np
import pytest

from headtohead.config.loading import experiment_from_dict
from headtohead.config.schema import DataConfig
from headtohead.data import create_dataset
from headtohead.data.base import Dataset
from headtohead.data.columns import name_some, normalise_id
from headtohead.data.images import load_image_folder
from headtohead.data.sizes import input_sizes
from headtohead.data.sklearn_builtin import load_sklearn
from headtohead.data.split import stratified_split
from headtohead.data.tables import load_table
from headtohead.errors import ConfigError, DataError
from headtohead.testing.data import make_image_folder, save_hf_dataset, write_text_table

ROWS = [
    {"uid": "r1", "text": "a fine film", "label": "pos", "source": "web", "year": 2001},
    {"uid": "r2", "text": "dull", "label": "neg", "source": "news", "year": 2002},
    {"uid": "r3", "text": "", "label": "pos", "source": "web", "year": 2003},  # skipped: empty text
    {"uid": "r4", "text": "superb", "label": "pos", "source": None, "year": 2004},
]


def _load(path, **config):
    return load_table(str(path), DataConfig(path=str(path), **config))


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet"])
def test_ids_and_slice_columns_follow_the_kept_rows(tmp_path, suffix):
    path = write_text_table(tmp_path / f"t{suffix}", ROWS)
    with pytest.warns(UserWarning, match="empty text: 1"):
        ds = _load(path, id_column="uid", slice_columns=["source", "year"])
    assert ds.examples == ["a fine film", "dull", "superb"]
    assert ds.ids == ("r1", "r2", "r4")
    assert ds.columns["source"].tolist() == ["web", "news", None]
    assert [str(v) for v in ds.columns["year"].tolist()] == ["2001", "2002", "2004"]


def test_no_ids_without_id_column(tmp_path):
    ds = _load(write_text_table(tmp_path / "t.csv", ROWS[:2]))
    assert ds.ids is None and ds.columns == {}


def test_numeric_ids_are_the_same_string_in_every_format(tmp_path):
    rows = [{"id": 7, "text": "x", "label": 0}, {"id": 12, "text": "y", "label": 1}]
    for suffix in (".csv", ".jsonl", ".parquet"):
        assert _load(write_text_table(tmp_path / f"n{suffix}", rows), id_column="id").ids == ("7", "12")
    assert normalise_id(7.0) == "7" and normalise_id(" a ") == "a" and normalise_id(None) is None


def test_missing_id_column_is_one_line_with_a_suggestion(tmp_path):
    path = write_text_table(tmp_path / "t.csv", ROWS[:2])
    with pytest.raises(DataError) as info:
        _load(path, id_column="uuid")
    message = str(info.value)
    assert "no column 'uuid' (data.id_column) — did you mean uid?" in message
    assert "columns: uid, text, label, source, year" in message and "\n" not in message


def test_missing_slice_column_names_the_key(tmp_path):
    path = write_text_table(tmp_path / "t.csv", ROWS[:2])
    with pytest.raises(
        DataError,
        match=r"no column 'sources' \(data.slice_columns\) — did you mean source\?.*"
        r"correct or remove 'sources' in data.slice_columns",
    ):
        _load(path, slice_columns=["sources"])


def test_duplicate_ids_name_a_few_and_count_the_rest(tmp_path):
    rows = [{"id": f"d{i // 2}", "text": f"t{i}", "label": i % 2} for i in range(144)]  # 72 ids, each twice
    with pytest.raises(DataError) as info:
        _load(write_text_table(tmp_path / "t.csv", rows), id_column="id")
    message = str(info.value)
    assert "72 duplicate id(s): 'd0' (rows 1, 2), 'd1' (rows 3, 4)" in message
    assert "… and 67 more; ids must be unique" in message


def test_empty_id_names_the_row(tmp_path):
    rows = [{"id": "a", "text": "x", "label": 0}, {"id": "", "text": "y", "label": 1}]
    with pytest.raises(DataError, match=r"column 'id' \(data.id_column\) is empty in row\(s\) 2; every example"):
        _load(write_text_table(tmp_path / "t.csv", rows), id_column="id")


def test_duplicates_only_among_kept_rows(tmp_path):
    rows = [
        {"id": "a", "text": "x", "label": 0},
        {"id": "a", "text": "", "label": 1},
        {"id": "b", "text": "z", "label": 1},
    ]
    with pytest.warns(UserWarning):
        assert _load(write_text_table(tmp_path / "t.csv", rows), id_column="id").ids == ("a", "b")


def test_split_take_and_limit_keep_ids_aligned(tmp_path):
    rows = [{"id": f"e{i}", "text": f"text {i}", "label": i % 2, "group": f"g{i % 3}"} for i in range(40)]
    path = write_text_table(tmp_path / "t.csv", rows)
    full = _load(path, id_column="id", slice_columns=["group"])
    train, evaluation = stratified_split(full, 0.25, seed=0)
    for part in (train, evaluation):
        for example, identifier, group in zip(part.examples, part.ids, part.columns["group"], strict=True):
            index = int(identifier[1:])
            assert example == f"text {index}" and group == f"g{index % 3}"
    assert sorted(train.ids + evaluation.ids) == sorted(full.ids)
    limited = create_dataset(DataConfig(path=str(path), id_column="id", slice_columns=["group"], limit=5)).eval
    assert limited.ids == ("e0", "e1", "e2", "e3", "e4") and len(limited.columns["group"]) == 5
    renamed = full.with_label_names(("0", "1"))
    assert renamed.ids == full.ids and renamed.columns["group"].tolist() == full.columns["group"].tolist()


def test_train_file_needs_no_id_or_slice_column(tmp_path):
    evaluation = write_text_table(
        tmp_path / "eval.csv",
        [{"id": "a", "text": "x", "label": 0, "src": "s"}, {"id": "b", "text": "y", "label": 1, "src": "t"}],
    )
    train = write_text_table(tmp_path / "train.csv", [{"text": "p", "label": 0}, {"text": "q", "label": 1}])
    splits = create_dataset(DataConfig(path=str(evaluation), train=str(train), id_column="id", slice_columns=["src"]))
    assert splits.eval.ids == ("a", "b") and splits.train.ids is None


def test_fingerprint_covers_ids_and_columns_and_is_unchanged_without_them():
    base = Dataset("t", "text", ["a b", "c"], np.array([0, 1]), ("x", "y"))
    # the hash this dataset had before ids existed (runs saved then still resume)
    assert base.fingerprint() == "5012bc75cd0672db9448489455fd85abf95415160cda76717c65475db9a7fdfb"
    with_ids = Dataset("t", "text", ["a b", "c"], np.array([0, 1]), ("x", "y"), ids=("1", "2"))
    other_ids = Dataset("t", "text", ["a b", "c"], np.array([0, 1]), ("x", "y"), ids=("1", "3"))
    with_column = Dataset("t", "text", ["a b", "c"], np.array([0, 1]), ("x", "y"), columns={"s": ["p", "q"]})
    hashes = {base.fingerprint(), with_ids.fingerprint(), other_ids.fingerprint(), with_column.fingerprint()}
    assert len(hashes) == 4
    assert (
        with_ids.fingerprint()
        == Dataset("t", "text", ["a b", "c"], np.array([0, 1]), ("x", "y"), ids=(1, 2)).fingerprint()
    )


def test_dataset_refuses_misaligned_ids_and_columns():
    with pytest.raises(ValueError, match="1 ids but 2 examples"):
        Dataset("t", "text", ["a", "b"], np.array([0, 1]), ("x", "y"), ids=("1",))
    with pytest.raises(ValueError, match="column 's' has 3 values"):
        Dataset("t", "text", ["a", "b"], np.array([0, 1]), ("x", "y"), columns={"s": [1, 2, 3]})


def test_image_folder_ids_are_paths_inside_the_folder(tmp_path):
    root = make_image_folder(tmp_path / "imgs", classes=("ants", "bees"), n_per_class=2)
    ds = load_image_folder(str(root), DataConfig(path=str(root)))
    assert len(ds.ids) == 4 and all(i.startswith(("ants/", "bees/")) for i in ds.ids)
    assert [str(root / i) for i in ds.ids] == ds.examples
    with pytest.raises(DataError, match="an image folder has no columns.*remove data.slice_columns"):
        load_image_folder(str(root), DataConfig(path=str(root), slice_columns=["source"]))


def test_sklearn_data_has_no_columns():
    with pytest.raises(DataError, match="no id column; remove data.id_column"):
        load_sklearn("sklearn:iris", DataConfig(path="sklearn:iris", id_column="id"))
    with pytest.raises(DataError, match="a scikit-learn dataset has no columns"):
        load_sklearn("sklearn:iris", DataConfig(path="sklearn:iris", slice_columns=["x"]))


def test_hf_dataset_ids_and_columns(tmp_path):
    pytest.importorskip("datasets")
    from headtohead.data.hf import load_hf

    rows = [{"idx": i, "text": f"t{i}", "label": i % 2, "genre": "a" if i < 2 else "b"} for i in range(4)]
    rows.append({"idx": 9, "text": "unlabelled", "label": -1, "genre": "c"})
    root = save_hf_dataset(tmp_path / "saved", {"validation": rows}, label_names=["neg", "pos"])
    with pytest.warns(UserWarning, match="missing label: 1"):
        ds = load_hf(f"hf:{root}", DataConfig(path=f"hf:{root}", id_column="idx", slice_columns=["genre"]))
    assert ds.ids == ("0", "1", "2", "3") and ds.columns["genre"].tolist() == ["a", "a", "b", "b"]
    with pytest.raises(DataError, match="no column 'genra' .* did you mean genre"):
        load_hf(f"hf:{root}", DataConfig(path=f"hf:{root}", slice_columns=["genra"]))


def test_config_refuses_repeated_and_id_slice_columns():
    base = {"models": [{"name": "m", "kind": "sklearn", "source": "m.skops"}]}
    with pytest.raises(ConfigError, match=r"slice_columns names \['a'\] more than once"):
        experiment_from_dict({**base, "data": {"path": "x.csv", "slice_columns": ["a", "a"]}})
    with pytest.raises(ConfigError, match="'id' is the id_column"):
        experiment_from_dict({**base, "data": {"path": "x.csv", "id_column": "id", "slice_columns": ["id"]}})


def test_name_some_counts_the_rest():
    assert name_some(range(8), 3, quote=False) == "0, 1, 2 … and 5 more"
    assert name_some(["x"]) == "'x'"


def test_input_sizes_by_modality(tmp_path):
    text = Dataset("t", "text", ["one two three", "four"], np.array([0, 1]), ("a", "b"))
    assert input_sizes(text)[0].tolist() == [3, 1]
    assert input_sizes(text, text_unit="characters")[0].tolist() == [13, 4]
    pair = Dataset("t", "text_pair", [("a b", "c"), ("d", "e f g")], np.array([0, 1]), ("a", "b"))
    assert input_sizes(pair)[0].tolist() == [3, 4]
    from PIL import Image

    root = tmp_path / "imgs"
    for name, (width, height) in {"a/small.png": (4, 3), "b/large.png": (20, 10)}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (width, height)).save(root / name)
    sizes, unit = input_sizes(load_image_folder(str(root), DataConfig(path=str(root))))
    assert unit == "pixels" and sizes.tolist() == [12, 200]
    arrays = Dataset("d", "image", np.zeros((2, 8, 6), dtype=np.uint8), np.array([0, 1]), ("a", "b"))
    assert input_sizes(arrays)[0].tolist() == [48, 48]
    assert input_sizes(Dataset("f", "features", np.zeros((2, 3)), np.array([0, 1]), ("a", "b"))) is None


def test_the_dataset_carries_its_groups_from_load(tmp_path):
    rows = [{"text": f"text {i}", "label": i % 2, "user": None if i == 7 else f"u{i % 4}"} for i in range(40)]
    path = write_text_table(tmp_path / "t.jsonl", rows)
    train = write_text_table(tmp_path / "train.csv", [{"text": "p", "label": 0}, {"text": "q", "label": 1}])
    splits = create_dataset(DataConfig(path=str(path), train=str(train), group_column="user"))
    full = splits.eval
    assert full.group_column == "user" and splits.train.groups is None  # a training file needs no groups
    assert full.groups.tolist()[:8] == ["=u0", "=u1", "=u2", "=u3", "=u0", "=u1", "=u2", "\x00#7"]
    assert create_dataset(DataConfig(path=str(path))).eval.groups is None
    limited = create_dataset(DataConfig(path=str(path), group_column="user", limit=5)).eval
    assert limited.groups.tolist() == full.groups.tolist()[:5]
    train_part, eval_part = stratified_split(full, 0.25, seed=0)
    for part in (train_part, eval_part, full.with_label_names(("0", "1"))):
        assert part.group_column == "user"
        assert part.groups.tolist() == [
            f"\x00#{i}" if user is None else f"={user}" for i, user in enumerate(part.columns["user"])
        ]


def test_data_in_memory_carries_its_groups(tmp_path):
    import pandas as pd

    from headtohead.data.memory import dataset_from_memory

    frame = pd.DataFrame({"text": ["a", "b", "c"], "label": ["n", "p", "n"], "user": ["x", "y", "x"]})
    config = DataConfig(path="<frame>", group_column="user")
    grouped = dataset_from_memory(frame, config)
    assert grouped.groups.tolist() == ["=x", "=y", "=x"]
    # a Dataset handed over keeps its data but takes its groups from the settings
    assert dataset_from_memory(grouped, DataConfig(path="<frame>")).groups is None
    with pytest.raises(DataError, match="no column 'user'"):
        Dataset("x", "text", ["a"], [0], ("n",), group_column="user")
