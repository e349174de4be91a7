"""results.json of schema version 3 (slices, disagreements, stored outputs), and version-2 files still read."""

from __future__ import annotations

import json

import pytest

import headtohead
from headtohead.errors import ResultsError
from headtohead.results.records import SCHEMA_VERSION
from headtohead.testing.sample import sample_run


def test_version_2_files_read_without_slices_disagreements_or_stored_outputs(tmp_path):
    result, _ = sample_run(n_examples=300, n_resamples=100, speed=False)
    assert SCHEMA_VERSION == 3 and result.stats.slices is not None
    raw = json.loads(result.model_dump_json())
    raw["schema_version"] = 2
    del raw["stats"]["slices"], raw["stats"]["disagreements"]
    for model in raw["models"]:
        del model["outputs"]
    (tmp_path / "results.json").write_text(json.dumps(raw))
    old = headtohead.load_result(tmp_path / "results.json")
    assert old.stats.slices is None and old.stats.disagreements == []
    assert [m.outputs for m in old.models] == ["computed", "computed"]
    assert [m.quality.accuracy for m in old.models] == [m.quality.accuracy for m in result.models]


def test_a_newer_version_is_refused_in_one_line(tmp_path):
    result, _ = sample_run(n_examples=100, n_resamples=100, speed=False, stats=False)
    raw = json.loads(result.model_dump_json())
    raw["schema_version"] = SCHEMA_VERSION + 1
    (tmp_path / "results.json").write_text(json.dumps(raw))
    with pytest.raises(ResultsError, match="schema"):
        headtohead.load_result(tmp_path / "results.json")
