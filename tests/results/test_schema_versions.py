"""Files of schema versions 2 (before label subsets, NaN rows, out-of-memory back-off, slices, disagreements
and stored outputs) and 3 (before failures counted as wrong answers) still read; a newer version is refused."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from sim.sample import sample_run

import headtohead
from headtohead.errors import ResultsError
from headtohead.results import SCHEMA_VERSION, Predictions

MLP = {
    "name": "mlp",
    "kind": "python",
    "source": "headtohead.testing.models:tiny_mlp",
    "model_args": {"n_features": 4, "n_classes": 3},
}
IRIS = {
    "name": "v2",
    "data": {"path": "sklearn:iris"},
    "models": [MLP, {**MLP, "name": "mlp2"}],
    "speed": {"enabled": False},
    "stats": {"n_resamples": 200},
}

#: The fields version 3 added, where they sit in results.json.
MODEL_FIELDS = ("labels_outside_data", "batch_backoff")
QUALITY_FIELDS = ("confusion_labels", "predicted_outside", "n_nonfinite", "nonfinite_examples")


def _as_version_8(raw: dict) -> dict:
    """A version-9 file as version 8 wrote it: no noise floor on a comparison over runs, no eval.noise_floor, no
    cascade record, no examples held out for one (the file must have no cascade), no capacity record or
    ``speed.capacity`` settings (no capacity scenario run), no decision across quality, speed and cost, no
    ``decide:``, no speed budget scaled with the quality pass, decisions only with a margin (its rounds here
    stopped on the precision, or were fixed)."""
    raw = json.loads(json.dumps(raw))
    raw["schema_version"] = 8
    for pool in ((raw.get("stats") or {}).get("repeats") or {}).get("pools", []):
        for key in ("noise_floor", "floor_of", "same_settings", "within_floor"):
            del pool[key]
    (raw.get("experiment") or {}).get("eval", {}).pop("noise_floor", None)
    assert raw.pop("calibration_examples", []) == []
    for model in raw["models"]:
        assert model.pop("cascade", None) is None
    if raw.get("speed") is not None:
        assert raw["speed"].pop("capacity") is None
        raw["speed"]["settings"].pop("capacity", None)
    (raw.get("experiment") or {}).get("speed", {}).pop("capacity", None)
    raw.pop("decision", None)
    (raw.get("experiment") or {}).pop("decide", None)
    for run in (raw.get("speed") or {}).get("scenarios", []):
        del run["budget_s"], run["quality_s"]
        assert run["stop_reason"] != "decided" and all(c["settled"] != "faster" for c in run["comparisons"])
        if run["margin"] is None:
            run["margin_tests"] = run["margin_confidence"] = None
    return raw


def test_a_version_8_file_reads_with_no_noise_floor_on_its_comparisons_over_runs(tmp_path):
    """Version 8 wrote no noise floor on a comparison over runs: it reads as none (never within a floor)."""
    frame = pd.DataFrame({"text": [f"t{i}" for i in range(40)], "label": ["a", "b"] * 20})
    run = headtohead.compare(
        {"m": lambda texts: np.eye(2)[[len(t) % 2 for t in texts]], "n": ["a"] * 40},
        frame,
        outputs={"m": "probabilities"},
        repeats={"m": 2},
        stats={"n_resamples": 100},
        out_dir=tmp_path / "out",
    )
    raw = _as_version_8(json.loads((tmp_path / "out" / "results.json").read_text()))
    (tmp_path / "v8.json").write_text(json.dumps(raw))
    (pool,) = headtohead.load_result(tmp_path / "v8.json").stats.repeats.pools
    assert pool.noise_floor is None and not pool.within_floor and not pool.same_settings
    assert run.result.stats.repeats.pools[0].noise_floor == 0.0  # the same run, version 9: m's runs agree


def _as_version_7(raw: dict) -> dict:
    """A version-8 file (of models run once) as version 7 wrote it: no onnxruntime version, no LLM backend's
    name, no repeats anywhere."""
    raw = _as_version_8(raw)
    raw["schema_version"] = 7
    del raw["environment"]["onnxruntime"]
    for model in raw["models"]:
        if (model.get("answers") or {}).get("endpoint"):
            del model["answers"]["endpoint"]["server"]
    if raw.get("stats") is not None:
        assert raw["stats"].pop("repeats") is None
    experiment = raw.get("experiment") or {}
    for model in experiment.get("models", []):
        assert model.pop("repeats", None) is None
    experiment.get("eval", {}).pop("repeats", None)
    return raw


def _as_version_6(raw: dict) -> dict:
    """A version-7 file (of models measured once) as version 6 wrote it: no passes anywhere; an LLM's answers were its ``endpoint`` record, the HTTP fields among
    them, failures named ``failed_requests``, no device; no record of how the stopping rule settled each speed
    ratio."""
    raw = _as_version_7(raw)
    raw["schema_version"] = 6
    for record in raw["models"] + (raw.get("stats") or {}).get("models", []):
        assert record.pop("passes") == []
    for run in (raw.get("speed") or {}).get("scenarios", []):
        del run["margin"], run["margin_tests"], run["margin_confidence"]
        for comparison in run["comparisons"]:
            del comparison["settled"]
    for model in raw["models"]:
        answers = model.pop("answers")
        if answers is not None:
            http = answers.pop("endpoint") or {"base_url": ""}
            del answers["device"]
            answers["n_failed_requests"], answers["failed_requests"] = answers.pop("n_failed"), answers.pop("failed")
            answers = {**answers, **http}
        model["endpoint"] = answers
    return raw


def _as_version_5(raw: dict) -> dict:
    """A version-6 file as version 5 wrote it: no mark of an incomplete run, no missing answers, no prompts
    pooled, speed rounds of a fixed number with t intervals."""
    raw = _as_version_6(raw)
    raw["schema_version"] = 5
    del raw["incomplete"], raw["missing"], raw["stats"]["prompts"]
    for run in (raw.get("speed") or {}).get("scenarios", []):
        del run["precision"], run["precision_reached"]
        for comparison in run["comparisons"]:
            del comparison["interval"]
    return raw


def _as_version_4(raw: dict) -> dict:
    """A version-5 file as version 4 wrote it: no metrics picked from the catalogue."""
    raw = _as_version_5(raw)
    raw["schema_version"] = 4
    for record in raw["stats"]["models"]:
        del record["metrics"]
    del raw["stats"]["settings"]["metrics"]
    for piece in raw["stats"]["slices"]["slices"]:
        for accuracy in piece["accuracies"]:
            del accuracy["metrics"]
    return raw


def _as_version_3(raw: dict) -> dict:
    """A version-4 file as version 3 wrote it: failures named n_nonfinite, no fields of version 4."""
    raw = _as_version_4(raw)
    raw["schema_version"] = 3
    for model in raw["models"]:
        quality = model["quality"]
        quality["n_nonfinite"], quality["nonfinite_examples"] = quality.pop("n_failed"), quality.pop("failed_examples")
        del quality["answered"], quality["failures_counted"]
    for record in raw["stats"]["models"]:
        del record["n_failed"], record["accuracy_answered"], record["calibration_examples"]
    for record in raw["stats"]["comparisons"]:
        del record["stopped_early"]
        for diff in record["differences"]:
            del diff["on_answered_rows"]
    for key in ("failures", "group_column", "n_groups"):
        del raw["stats"]["settings"][key]
    return raw


def _as_version_2(raw: dict) -> dict:
    raw = _as_version_3(raw)
    raw["schema_version"] = 2
    for model in raw["models"]:
        for key in MODEL_FIELDS:
            del model[key]
        for key in QUALITY_FIELDS:
            del model["quality"][key]
        del model["outputs"]
    for record in raw["stats"]["models"] + raw["stats"]["comparisons"]:
        del record["n_excluded"]
    del raw["stats"]["slices"], raw["stats"]["disagreements"]
    return raw


def test_a_version_8_file_reads_with_no_cascade_every_example_judged_and_no_decision(tmp_path):
    out = tmp_path / "out"
    headtohead.run(IRIS, out_dir=out)
    raw = json.loads((out / "results.json").read_text())
    assert raw["experiment"]["decide"]["quality_margin"] == 0.01 and raw["decision"] is None  # no speed: no decision
    (tmp_path / "v8.json").write_text(json.dumps(_as_version_8(raw)))
    result = headtohead.load_result(tmp_path / "v8.json")
    assert result.schema_version == 8 and result.calibration_examples == [] and result.decision is None
    assert all(m.cascade is None for m in result.models)


def test_a_version_3_file_with_failures_reads_them_as_left_out(tmp_path):
    out = tmp_path / "out"
    headtohead.run(IRIS, out_dir=out)
    raw = _as_version_3(json.loads((out / "results.json").read_text()))
    raw["models"][0]["quality"].update(n_nonfinite=4, nonfinite_examples=[1, 5, 9, 12])
    (tmp_path / "v3.json").write_text(json.dumps(raw))
    result = headtohead.load_result(tmp_path / "v3.json")
    quality = result.models[0].quality
    assert quality.n_failed == 4 and quality.failed_examples == [1, 5, 9, 12]
    assert not quality.failures_counted and result.models[1].quality.failures_counted  # no failure: same either way
    assert result.stats.settings.failures == "left out"


def test_a_version_2_run_reads_as_it_was_written(tmp_path):
    assert SCHEMA_VERSION == 9  # a new version: a converter above (_as_version_8) drops its fields
    out = tmp_path / "out"
    run = headtohead.run(IRIS, out_dir=out)
    raw = json.loads((out / "results.json").read_text())
    old = tmp_path / "old.json"
    old.write_text(json.dumps(_as_version_2(raw)))
    result = headtohead.load_result(old)
    assert result.schema_version == 2
    for model in result.models:  # the new fields hold what a version-2 run had
        assert model.labels_outside_data == [] and model.batch_backoff == []
        assert model.quality.confusion_labels is None and model.quality.n_failed == 0
        assert model.quality == run.result.model(model.name).quality
    assert [c.n_excluded for c in result.stats.comparisons] == [0]
    assert result.stats.slices is None and result.stats.disagreements == []
    assert [m.outputs for m in result.models] == ["computed", "computed"]

    # predictions.npz of version 2 has no outside_labels array
    with np.load(out / "predictions.npz") as arrays:
        kept = {k: arrays[k] for k in arrays.files if k != "outside_labels"}
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **kept)
    (tmp_path / "old.npz").write_bytes(buffer.getvalue())
    loaded = Predictions.load(tmp_path / "old.npz")
    assert loaded.outside_labels == () and loaded.all_labels == loaded.label_names
    for name in run.predictions:
        np.testing.assert_array_equal(loaded[name].pred, run.predictions[name].pred)
        np.testing.assert_array_equal(loaded[name].proba, run.predictions[name].proba)


def test_a_newer_version_is_refused_in_one_line(tmp_path):
    result, _ = sample_run(n_examples=100, n_resamples=100, speed=False, stats=False)
    raw = json.loads(result.model_dump_json())
    raw["schema_version"] = SCHEMA_VERSION + 1
    (tmp_path / "results.json").write_text(json.dumps(raw))
    with pytest.raises(ResultsError, match="schema"):
        headtohead.load_result(tmp_path / "results.json")


def test_a_version_6_endpoint_record_reads_as_the_answers_record_with_its_http_part(tmp_path):
    from headtohead.results.answers import AnswersRecord, FailedAnswer, UnparseableAnswer
    from headtohead.results.endpoint import EndpointRequests, RequestTiming, TokenPrice

    timing = RequestTiming(concurrency=4, shard_concurrency=[4], peak_in_flight=[3], latencies_s=[0.5, 0.7], wall_s=2)
    http = EndpointRequests(
        base_url="http://127.0.0.1:8000/v1",
        requests=4,
        retries=1,
        statuses={"200": 3, "400": 1},
        prompt_tokens_sent=20,
        completion_tokens_sent=2,
        price=TokenPrice(input_per_1m=1.0, output_per_1m=2.0),
        timing=timing,
    )
    record = AnswersRecord(
        model="m",
        examples=3,
        from_cache=[0],
        n_unparseable=1,
        unparseable=[UnparseableAnswer(index=1, answer="no idea", input="x", gold="negative")],
        n_failed=1,
        failed=[FailedAnswer(index=2, reason="HTTP 400: bad")],
        prompt_tokens=30,
        completion_tokens=3,
        endpoint=http,
    )
    assert record.cost == pytest.approx((30 * 1.0 + 3 * 2.0) / 1e6) and http.cost_sent == pytest.approx(24 / 1e6)
    result, _ = sample_run(n_examples=100, n_resamples=100, speed=False, stats=False)
    raw = json.loads(result.model_dump_json())
    raw["models"][0]["answers"] = json.loads(record.model_dump_json())
    old = _as_version_6(raw)
    assert "answers" not in old["models"][0] and old["models"][0]["endpoint"]["failed_requests"][0]["index"] == 2
    assert old["models"][0]["endpoint"]["requests"] == 4 and old["models"][1]["endpoint"] is None
    (tmp_path / "results.json").write_text(json.dumps(old))
    loaded = headtohead.load_result(tmp_path / "results.json")
    assert loaded.schema_version == 6
    assert loaded.models[0].answers == record and loaded.models[1].answers is None
    assert loaded.models[0].missing_examples == [] and loaded.models[0].answers.cost == record.cost
