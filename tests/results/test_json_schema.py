"""The published JSON Schema of results.json is the one the records generate, and real files follow it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import headtohead
from headtohead.results.json_schema import results_json_schema, schema_text
from headtohead.results.records import SCHEMA_VERSION
from headtohead.testing.sample import sample_run

PUBLISHED = Path(__file__).resolve().parents[2] / "docs" / "schema" / "results.schema.json"
jsonschema = pytest.importorskip("jsonschema", reason="jsonschema (the dev extra) checks files against the schema")


def test_the_published_schema_is_the_generated_one():
    assert PUBLISHED.read_text(encoding="utf-8") == schema_text(), (
        "docs/schema/results.schema.json is stale: regenerate it with `make schema` after changing a record")
    assert results_json_schema()["title"].endswith(f"schema version {SCHEMA_VERSION}")


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(PUBLISHED.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_a_simulated_run_with_speed_and_statistics_follows_it(validator):
    result, _ = sample_run(n_examples=300, n_resamples=100)
    raw = json.loads(result.model_dump_json())
    assert list(validator.iter_errors(raw)) == []
    raw["models"][0]["surprise"] = 1  # records refuse unknown keys; so does the schema
    raw["models"][1]["num_parameters"] = "many"
    problems = sorted(e.message for e in validator.iter_errors(raw))
    assert any("'surprise' was unexpected" in p for p in problems) and any("'many'" in p for p in problems)


def test_a_file_written_by_a_run_follows_it(validator, tmp_path):
    from sklearn.datasets import load_iris
    from sklearn.naive_bayes import GaussianNB

    x, y = load_iris(return_X_y=True)
    headtohead.compare({"bayes": GaussianNB().fit(x, y), "rule": lambda rows: np.asarray(rows)[:, :3]}, (x, y),
                       stats={"n_resamples": 100}, out_dir=tmp_path)
    raw = json.loads((tmp_path / "results.json").read_text())
    assert raw["models"][0]["num_parameters"] is None  # unknown is null, as the schema allows
    assert list(validator.iter_errors(raw)) == []
