"""The published JSON Schemas (results.json, sweep.json, suite.json) are the ones the records generate; real files follow them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sim.sample import sample_run

import headtohead
from headtohead.results.json_schema import SCHEMA_FILES, main, results_json_schema, schema_text
from headtohead.results.records import SCHEMA_VERSION

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schema"
PUBLISHED = SCHEMAS / "results.schema.json"
jsonschema = pytest.importorskip("jsonschema", reason="jsonschema (the dev extra) checks files against the schema")


@pytest.mark.parametrize("name", sorted(SCHEMA_FILES))
def test_the_published_schemas_are_the_generated_ones(name):
    assert (SCHEMAS / name).read_text(encoding="utf-8") == schema_text(name), (
        f"docs/schema/{name} is stale: regenerate it with `make schema` after changing a record"
    )
    jsonschema.Draft202012Validator.check_schema(json.loads(schema_text(name)))
    assert results_json_schema()["title"].endswith(f"schema version {SCHEMA_VERSION}")


def test_make_schema_writes_every_file_and_check_finds_a_stale_one(tmp_path, capsys):
    assert main([str(tmp_path)]) == 0 and sorted(p.name for p in tmp_path.iterdir()) == sorted(SCHEMA_FILES)
    assert main(["--check", str(tmp_path)]) == 0
    (tmp_path / "suite.schema.json").write_text("{}")
    assert main(["--check", str(tmp_path)]) == 1 and "suite.schema.json: not the schema" in capsys.readouterr().err
    before = sorted(Path.cwd().iterdir())
    assert main(["--help"]) == 0 and main(["--chek", str(tmp_path)]) == 2  # an option is never taken for a folder
    assert sorted(Path.cwd().iterdir()) == before


def test_a_suite_json_follows_its_schema(tmp_path):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"dataset": [f"d{i}" for i in range(8)], **{m: rng.uniform(0.6, 0.9, 8) for m in "abc"}})
    headtohead.suite(scores=table, metric="accuracy", out_dir=tmp_path)
    validator = jsonschema.Draft202012Validator(json.loads((SCHEMAS / "suite.schema.json").read_text()))
    raw = json.loads((tmp_path / "suite.json").read_text())
    assert list(validator.iter_errors(raw)) == []
    raw["pairs"][0]["surprise"] = 1
    assert any("'surprise' was unexpected" in e.message for e in validator.iter_errors(raw))


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
    headtohead.compare(
        {"bayes": GaussianNB().fit(x, y), "rule": lambda rows: np.asarray(rows)[:, :3]},
        (x, y),
        stats={"n_resamples": 100},
        out_dir=tmp_path,
    )
    raw = json.loads((tmp_path / "results.json").read_text())
    assert raw["models"][0]["num_parameters"] is None  # unknown is null, as the schema allows
    assert list(validator.iter_errors(raw)) == []
