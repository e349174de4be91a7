"""Image folders: layout, stable order, unreadable files counted and warned about, errors."""

from __future__ import annotations

import os
import warnings

import pytest
from PIL import Image

from headtohead.config.schema import DataConfig
from headtohead.data.images import check_image, load_image_folder
from headtohead.errors import DataError
from headtohead.testing.data import make_image_folder


def _load(root, **config):
    return load_image_folder(str(root), DataConfig(path=str(root), **config))


def test_classes_labels_and_sorted_absolute_paths(tmp_path):
    root = make_image_folder(tmp_path / "imgs", classes=("dog", "cat"), n_per_class=3, fmt="jpg")
    nested = root / "cat" / "more"
    nested.mkdir()
    Image.new("RGB", (8, 8), "red").save(nested / "deep.png")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = _load(root)
    assert ds.modality == "image"
    assert ds.label_names == ("cat", "dog")  # sorted folder names, like torchvision
    assert ds.labels.tolist() == [0, 0, 0, 0, 1, 1, 1]
    assert all(os.path.isabs(p) and os.path.isfile(p) for p in ds.examples)
    assert ds.examples[:4] == sorted(ds.examples[:4]) and ds.examples[4:] == sorted(ds.examples[4:])
    assert str(nested / "deep.png") in ds.examples
    assert ds.skipped == {}
    assert _load(root).examples == ds.examples  # the same order every time


def test_label_names_fix_the_order(tmp_path):
    root = make_image_folder(tmp_path, classes=("a", "b"), n_per_class=2)
    ds = _load(root, label_names=["b", "a"])
    assert ds.label_names == ("b", "a") and ds.labels.tolist() == [1, 1, 0, 0]


def test_label_names_must_match_the_folders(tmp_path):
    root = make_image_folder(tmp_path, classes=("a", "b"), n_per_class=1)
    with pytest.raises(DataError, match=r"folders not in label_names: 'b'; names without a folder: 'c'"):
        _load(root, label_names=["a", "c"])


def test_corrupt_file_is_skipped_counted_and_warned_once(tmp_path):
    root = make_image_folder(tmp_path, classes=("a", "b"), n_per_class=2, fmt="jpg")
    (root / "a" / "broken.jpg").write_bytes(b"\x00garbage bytes, not a jpeg" * 20)
    good = (root / "b" / "b_0.jpg").read_bytes()
    (root / "b" / "truncated.jpg").write_bytes(good[: len(good) // 2])  # passes verify(), fails decoding
    (root / "b" / "notes.txt").write_text("not a picture")
    with pytest.warns(UserWarning) as record:
        ds = _load(root)
    messages = [str(w.message) for w in record if "skipped" in str(w.message)]
    assert len(messages) == 1
    assert "skipped 3 files (not an image: 1, unreadable image: 2)" in messages[0]
    assert "'a/broken.jpg', 'b/notes.txt', 'b/truncated.jpg'; counted" in messages[0]  # their ids
    assert ds.skipped == {"unreadable image": 2, "not an image": 1}
    assert len(ds) == 4 and not any(p.endswith(("broken.jpg", "truncated.jpg", "notes.txt")) for p in ds.examples)


def test_readable_gif_placeholder_is_kept(tmp_path):
    root = make_image_folder(tmp_path, classes=("a", "b"), n_per_class=1)
    Image.new("P", (30, 30), 3).save(root / "a" / "imageNotFound.gif")
    assert check_image(root / "a" / "imageNotFound.gif") is None
    assert len(_load(root)) == 3


def test_hidden_and_loose_files_are_counted(tmp_path):
    root = make_image_folder(tmp_path, classes=("a", "b"), n_per_class=1)
    (root / "a" / ".DS_Store").write_bytes(b"\x00\x01")
    (root / "README.txt").write_text("about these images")
    (root / ".ipynb_checkpoints").mkdir()  # hidden folders are not classes
    with pytest.warns(UserWarning, match="file outside class folders: 1, hidden file: 1"):
        ds = _load(root)
    assert ds.label_names == ("a", "b") and len(ds) == 2
    assert ds.skipped == {"hidden file": 1, "file outside class folders": 1}


def test_empty_folder_is_an_error(tmp_path):
    with pytest.raises(DataError, match=r"no class subfolders \(it is empty\)"):
        _load(tmp_path)


def test_images_without_class_folders_is_an_error(tmp_path):
    Image.new("RGB", (4, 4)).save(tmp_path / "x.png")
    with pytest.raises(DataError, match=r"no class subfolders \(1 files lie directly in it\)"):
        _load(tmp_path)


def test_class_folders_without_files_is_an_error(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with pytest.raises(DataError, match=r"class folders \(a, b\) hold no files"):
        _load(tmp_path)


def test_class_without_a_readable_image_is_an_error(tmp_path):
    root = make_image_folder(tmp_path, classes=("a",), n_per_class=2)
    (root / "b").mkdir()
    (root / "b" / "x.jpg").write_bytes(b"garbage")
    with warnings.catch_warnings(), pytest.raises(DataError, match=r"class folder\(s\) \['b'\] hold no readable"):
        warnings.simplefilter("ignore")
        _load(root)


def test_folder_of_splits_is_refused(tmp_path):
    make_image_folder(tmp_path / "train", classes=("a", "b"), n_per_class=1)
    make_image_folder(tmp_path / "val", classes=("a", "b"), n_per_class=1)
    with pytest.raises(DataError, match="look like splits, not classes"):
        _load(tmp_path)


def test_saved_hf_dataset_folder_is_refused_with_the_fix(tmp_path):
    make_image_folder(tmp_path, classes=("train",), n_per_class=1)
    (tmp_path / "dataset_dict.json").write_text('{"splits": ["train"]}')
    with pytest.raises(DataError, match=f"write data.path: hf:{tmp_path}"):
        _load(tmp_path)
