"""One-line errors name long lists by their first few and a count (errors.listing)."""

from __future__ import annotations

import pytest

from headtohead.config.schema import DataConfig
from headtohead.data.tables import load_table
from headtohead.errors import LISTING_LIMIT, DataError, listing
from headtohead.testing.data import write_text_table


def test_listing_shows_the_first_ten_and_counts_the_rest():
    assert listing([]) == ""
    assert listing(["a"]) == "a"
    assert listing(range(LISTING_LIMIT)) == ", ".join(map(str, range(LISTING_LIMIT)))  # exactly the limit: whole
    assert listing(range(77)) == "0, 1, 2, 3, 4, 5, 6, 7, 8, 9 … and 67 more"
    assert listing(["x, y", "z"], limit=1, quote=True) == "'x, y' … and 1 more"
    assert listing((n for n in "abc"), limit=2) == "a, b … and 1 more"  # any iterable, read once


def test_a_data_error_naming_many_labels_stays_short(tmp_path):
    rows = [{"text": f"example {i}", "label": f"intent_{i:03d}"} for i in range(200)]
    path = write_text_table(tmp_path / "t.csv", rows)
    with pytest.raises(DataError) as info:
        load_table(str(path), DataConfig(path=str(path), label_names=["other"]))
    message = str(info.value)
    assert "'intent_000', 'intent_001'" in message and "'intent_009' … and 190 more are not in" in message
    assert len(message) < 400 and "\n" not in message


def test_did_you_mean_goes_by_edits_of_spelling_not_of_meaning():
    """mmc is one edit from mcc and two from mce; case and separators are no edit; an abbreviation names its metric."""
    from headtohead.errors import closest, did_you_mean, edit_distance
    from headtohead.metrics import CATALOGUE

    assert edit_distance("mmc", "mcc") == 1 and edit_distance("mmc", "mce") == 2
    assert edit_distance("roc_uac", "roc_auc") == 1  # two neighbours swapped: one edit
    assert did_you_mean("mmc", CATALOGUE) == " — did you mean mcc?"  # difflib's ratio said mce (listed first)
    assert closest("acc", CATALOGUE) == "accuracy"  # not mcc, one edit away: acc begins accuracy
    assert (
        closest("F1-Macro", CATALOGUE) == "f1_macro" and closest("batchsize", ["batch_size", "epochs"]) == "batch_size"
    )
    assert closest("acuracy", CATALOGUE) == "accuracy" and closest("xyz", CATALOGUE) is None
    assert closest("Tesla V100", ["A100-SXM4", "Tesla V100-SXM2-16GB"]) == "Tesla V100-SXM2-16GB"
