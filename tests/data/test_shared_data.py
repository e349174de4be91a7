"""The loaders on the real public data in ../shared/data (skipped when it is absent)."""

from __future__ import annotations

import os
import warnings

import pytest

from headtohead.config.schema import DataConfig
from headtohead.data import create_dataset
from headtohead.data.images import check_image
from headtohead.errors import DataError

pytestmark = pytest.mark.shared_data


def test_sst2_dev_loads_all_872_rows(shared_data):
    path = shared_data / "sst2" / "dev.tsv"
    assert path.read_text().splitlines()[0] == "text\tlabel"  # the header really is "text", not "sentence"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = create_dataset(DataConfig(path=str(path), label_names=["negative", "positive"])).eval
    assert len(ds) == 872 and ds.num_classes == 2
    assert ds.class_counts().tolist() == [428, 444]
    assert ds.skipped == {}
    # one row per line, each sentence exactly as written (apostrophes and all)
    lines = path.read_text().splitlines()[1:]
    assert ds.examples == [line.rsplit("\t", 1)[0] for line in lines]
    assert ds.examples[0] == "it 's a charming and often affecting journey . "


def test_sst2_train_with_dev_as_eval(shared_data):
    splits = create_dataset(
        DataConfig(path=str(shared_data / "sst2" / "dev.tsv"), train=str(shared_data / "sst2" / "train.tsv"))
    )
    assert len(splits.train) == 67349 and splits.train.label_names == ("0", "1")


def test_hymenoptera_val_loads_153_images(shared_data):
    ds = create_dataset(DataConfig(path=str(shared_data / "hymenoptera" / "val"))).eval
    assert len(ds) == 153 and ds.label_names == ("ants", "bees")
    assert ds.class_counts().tolist() == [70, 83]
    assert all(os.path.isabs(p) for p in ds.examples)


def test_hymenoptera_train_keeps_the_readable_placeholder_gif(shared_data):
    # Documented rule (data/images.py): only files PIL cannot decode are skipped. The
    # placeholder is a valid 300x300 GIF, so it is kept, as torchvision's ImageFolder keeps it.
    gif = shared_data / "hymenoptera" / "train" / "ants" / "imageNotFound.gif"
    assert check_image(gif) is None
    splits = create_dataset(
        DataConfig(path=str(shared_data / "hymenoptera" / "val"), train=str(shared_data / "hymenoptera" / "train"))
    )
    assert len(splits.train) == 245 and splits.train.skipped == {}
    assert str(gif) in splits.train.examples
    assert any(p.endswith("ant photos.jpg") for p in splits.train.examples)  # a name with a space


def test_hymenoptera_root_is_refused_as_a_folder_of_splits(shared_data):
    with pytest.raises(DataError, match="look like splits"):
        create_dataset(DataConfig(path=str(shared_data / "hymenoptera")))
