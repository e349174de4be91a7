"""scikit-learn datasets, Hugging Face datasets, the stratified split and create_dataset."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from headtohead.config.schema import DataConfig, SplitConfig
from headtohead.data import Dataset, create_dataset
from headtohead.data.hf import choose_split, load_hf, parse_hf_spec
from headtohead.data.sklearn_builtin import load_sklearn
from headtohead.data.split import stratified_split
from headtohead.errors import DataError
from headtohead.testing.data import make_image_folder, make_text_table, save_hf_dataset, write_text_table

# ---------------------------------------------------------------- scikit-learn


def test_sklearn_digits_are_uint8_images():
    ds = load_sklearn("sklearn:digits", DataConfig(path="sklearn:digits"))
    assert ds.modality == "image"
    assert ds.examples.shape == (1797, 8, 8) and ds.examples.dtype == np.uint8
    assert ds.examples.max() == 255 and ds.examples.min() == 0
    assert ds.label_names == tuple(str(i) for i in range(10))
    assert ds.labels[:3].tolist() == [0, 1, 2]


@pytest.mark.parametrize(
    ("name", "shape", "first"),
    [("iris", (150, 4), "setosa"), ("wine", (178, 13), "class_0"), ("breast_cancer", (569, 30), "malignant")],
)
def test_sklearn_feature_datasets(name, shape, first):
    ds = load_sklearn(f"sklearn:{name}", DataConfig(path=f"sklearn:{name}"))
    assert ds.modality == "features" and ds.examples.shape == shape and ds.examples.dtype == np.float32
    assert ds.label_names[0] == first


def test_sklearn_label_names_override_and_length_check():
    ds = load_sklearn("sklearn:iris", DataConfig(path="sklearn:iris", label_names=["s", "ve", "vi"]))
    assert ds.label_names == ("s", "ve", "vi")
    with pytest.raises(DataError, match="has 2 names but iris has 3 classes"):
        load_sklearn("sklearn:iris", DataConfig(path="sklearn:iris", label_names=["a", "b"]))


def test_sklearn_unknown_name_suggests():
    with pytest.raises(DataError, match=r"dataset 'digit' — did you mean digits\?.*sklearn:iris"):
        load_sklearn("sklearn:digit", DataConfig(path="sklearn:digit"))


# ---------------------------------------------------------------- Hugging Face

ROWS = [{"text": f"good {i}", "label": 1} for i in range(3)] + [{"text": f"bad {i}", "label": 0} for i in range(3)]


@pytest.fixture(scope="module")
def saved_dict(tmp_path_factory):
    pytest.importorskip("datasets")
    root = tmp_path_factory.mktemp("hf") / "saved"
    val = [*ROWS, {"text": "unlabelled", "label": -1}]
    return save_hf_dataset(root, {"train": ROWS * 2, "validation": val, "test": ROWS[:2]}, label_names=["neg", "pos"])


def _hf(spec, **config):
    return load_hf(spec, DataConfig(path=config.pop("path", spec), **config))


def test_hf_saved_dict_defaults_to_validation_with_classlabel_names(saved_dict):
    with pytest.warns(UserWarning, match="missing label: 1"):
        ds = _hf(f"hf:{saved_dict}")
    assert ds.modality == "text" and len(ds) == 6
    assert ds.label_names == ("neg", "pos")
    assert ds.examples[0] == "good 0" and ds.labels.tolist() == [1, 1, 1, 0, 0, 0]
    assert ds.skipped == {"missing label": 1}  # ClassLabel -1 means "no label"


def test_hf_split_by_config_and_by_suffix(saved_dict):
    assert len(_hf(f"hf:{saved_dict}", hf_split="test")) == 2
    assert len(_hf(f"hf:{saved_dict}:train")) == 12
    with pytest.raises(DataError, match=r"no split 'tset' — did you mean test\? \(splits: train, validation, test\)"):
        _hf(f"hf:{saved_dict}", hf_split="tset")


def test_hf_train_source_defaults_to_train_split(saved_dict, tmp_path):
    spec = f"hf:{saved_dict}"
    ds = load_hf(spec, DataConfig(path=str(tmp_path / "eval.csv"), train=spec))
    assert len(ds) == 12
    with pytest.raises(DataError, match="both .* read the same split"):
        load_hf(spec, DataConfig(path=spec, train=spec))


def test_hf_single_saved_dataset_with_string_labels_and_pairs(tmp_path):
    pytest.importorskip("datasets")
    rows = [
        {"premise": "p1", "hypothesis": "h1", "gold": "entail"},
        {"premise": "p2", "hypothesis": None, "gold": "contradict"},
        {"premise": "p3", "hypothesis": "h3", "gold": "contradict"},
    ]
    root = save_hf_dataset(tmp_path / "single", {"": rows}, label_column="gold")
    spec = f"hf:{root}"
    with pytest.warns(UserWarning, match="empty text pair: 1"):
        ds = _hf(spec, text_column="premise", text_pair_column="hypothesis", label_column="gold")
    assert ds.modality == "text_pair" and ds.examples == [("p1", "h1"), ("p3", "h3")]
    assert ds.label_names == ("contradict", "entail") and ds.labels.tolist() == [1, 0]
    with pytest.raises(DataError, match="no splits .* but split 'test' was asked for"):
        _hf(spec, hf_split="test", text_column="premise", label_column="gold")
    with pytest.raises(DataError, match=r"no column 'label' \(data.label_column\).*premise, hypothesis, gold"):
        _hf(spec, text_column="premise")


def test_hf_image_column(tmp_path):
    datasets = pytest.importorskip("datasets")
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 255, (6, 5, 3), dtype=np.uint8) for _ in range(3)] + [{"bytes": b"junk", "path": None}]
    features = datasets.Features({"image": datasets.Image(), "label": datasets.ClassLabel(names=["x", "y"])})
    part = datasets.Dataset.from_dict({"image": images, "label": [0, 1, 0, 1]}, features=features)
    part.save_to_disk(str(tmp_path / "imgs"))
    with pytest.warns(UserWarning, match="unreadable image: 1"):
        ds = _hf(f"hf:{tmp_path / 'imgs'}")
    assert ds.modality == "image" and ds.label_names == ("x", "y") and ds.labels.tolist() == [0, 1, 0]
    assert ds.examples[0].shape == (6, 5, 3) and ds.examples[0].dtype == np.uint8
    assert np.array_equal(ds.examples[1], images[1])  # PNG round trip is lossless


def test_hf_hub_name_offline_fails_fast(waits):
    pytest.importorskip("datasets")
    with pytest.raises(DataError, match=r"'owner/some-dataset' is not available offline.*save_to_disk") as info:
        _hf("hf:owner/some-dataset")
    assert waits.none()  # no back-off, no connection: it fails at once however loaded the machine is
    assert "\n" not in str(info.value)


def test_hf_missing_local_folder(tmp_path):
    pytest.importorskip("datasets")
    with pytest.raises(DataError, match="folder ./no/such/folder not found"):
        _hf("hf:./no/such/folder")


def test_hf_without_datasets_installed(monkeypatch):
    monkeypatch.setitem(sys.modules, "datasets", None)  # makes "import datasets" raise ImportError
    with pytest.raises(DataError, match=r"pip install 'headtohead\[hf\]'"):
        _hf("hf:anything")


def test_parse_and_choose_split():
    assert parse_hf_spec("hf:owner/name:train") == ("owner/name", "train")
    assert parse_hf_spec("hf:name") == ("name", None)
    assert choose_split("s", ["train", "test"], None) == "test"
    assert choose_split("s", ["only"], None) == "only"
    with pytest.raises(DataError, match="choose one with data.hf_split"):
        choose_split("s", ["a", "b"], None)


# ---------------------------------------------------------------- stratified split


def _toy(n_per_class=(40, 20)):
    labels = np.concatenate([np.full(n, i) for i, n in enumerate(n_per_class)])
    return Dataset("toy", "text", [f"t{i}" for i in range(len(labels))], labels, ("a", "b"), {"empty text": 2})


def test_split_is_stratified_reproducible_and_seeded():
    ds = _toy()
    train, evaluation = stratified_split(ds, 0.25, seed=7)
    assert evaluation.class_counts().tolist() == [10, 5] and train.class_counts().tolist() == [30, 15]
    assert sorted(train.examples + evaluation.examples) == sorted(ds.examples)
    again_train, again_eval = stratified_split(ds, 0.25, seed=7)
    assert again_eval.examples == evaluation.examples and again_train.examples == train.examples
    assert stratified_split(ds, 0.25, seed=8)[1].examples != evaluation.examples
    for part in (train, evaluation):
        assert part.label_names == ("a", "b") and part.skipped == {"empty text": 2}
    assert evaluation.examples == sorted(evaluation.examples, key=lambda t: int(t[1:]))  # file order kept


def test_split_with_a_singleton_class_is_a_clear_error():
    with pytest.raises(DataError, match=r"class\(es\) b \(1\) have fewer than 2 examples"):
        stratified_split(_toy((10, 1)), 0.3, seed=0)


def test_split_too_small_for_the_classes():
    ds = Dataset("toy", "text", list("abcdef"), [0, 0, 1, 1, 2, 2], ("x", "y", "z"))
    with pytest.raises(DataError, match="cannot hold out 0.1 of 6 examples stratified over 3 classes"):
        stratified_split(ds, 0.1, seed=0)


# ---------------------------------------------------------------- create_dataset


def test_create_dataset_with_train_file(tmp_path):
    evaluation = make_text_table(tmp_path / "dev.csv", n_per_class=3, seed=1)
    train = make_text_table(tmp_path / "train.jsonl", n_per_class=5, seed=2)
    splits = create_dataset(DataConfig(path=str(evaluation), train=str(train)))
    assert len(splits.eval) == 6 and len(splits.train) == 10
    assert splits.train.label_names == splits.eval.label_names == ("negative", "positive")


def test_create_dataset_train_with_an_unseen_class_is_refused(tmp_path):
    evaluation = make_text_table(tmp_path / "dev.csv", n_per_class=2)
    train = make_text_table(tmp_path / "train.csv", n_per_class=2, classes=("negative", "positive", "mixed"))
    with pytest.raises(DataError, match="no evaluation examples"):
        create_dataset(DataConfig(path=str(evaluation), train=str(train)))


def test_create_dataset_with_split_and_limit(tmp_path):
    path = make_text_table(tmp_path / "all.tsv", n_per_class=20)
    splits = create_dataset(DataConfig(path=str(path), split=SplitConfig(eval_fraction=0.25)), seed=3)
    assert len(splits.eval) == 10 and len(splits.train) == 30
    assert splits.eval.class_counts().tolist() == [5, 5]
    again = create_dataset(DataConfig(path=str(path), split=SplitConfig(eval_fraction=0.25)), seed=3)
    assert again.eval.fingerprint() == splits.eval.fingerprint()
    limited = create_dataset(DataConfig(path=str(path), limit=7))
    assert len(limited.eval) == 7 and limited.train is None


def test_create_dataset_dispatches_images_and_sklearn(tmp_path):
    root = make_image_folder(tmp_path / "img", classes=("a", "b"), n_per_class=2)
    assert create_dataset(DataConfig(path=str(root))).eval.modality == "image"
    assert create_dataset(DataConfig(path="sklearn:wine", limit=5)).eval.examples.shape == (5, 13)


def test_create_dataset_all_rows_skipped_is_an_error(tmp_path):
    path = write_text_table(tmp_path / "t.csv", [{"text": "", "label": 1}, {"text": "a", "label": None}])
    with pytest.warns(UserWarning), pytest.raises(DataError, match="no usable examples"):
        create_dataset(DataConfig(path=str(path)))
