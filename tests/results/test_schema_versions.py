"""Files of schema version 2 (before label subsets, NaN rows and out-of-memory back-off) still read."""

from __future__ import annotations

import io
import json

import numpy as np

import headtohead
from headtohead.results import SCHEMA_VERSION, Predictions

MLP = {"name": "mlp", "kind": "python", "source": "headtohead.testing.models:tiny_mlp",
       "model_args": {"n_features": 4, "n_classes": 3}}
IRIS = {"name": "v2", "data": {"path": "sklearn:iris"}, "models": [MLP, {**MLP, "name": "mlp2"}],
        "speed": {"enabled": False}, "stats": {"n_resamples": 200}}

#: The fields version 3 added, where they sit in results.json.
MODEL_FIELDS = ("labels_outside_data", "batch_backoff")
QUALITY_FIELDS = ("confusion_labels", "predicted_outside", "n_nonfinite", "nonfinite_examples")


def _as_version_2(raw: dict) -> dict:
    raw = json.loads(json.dumps(raw))
    raw["schema_version"] = 2
    for model in raw["models"]:
        for key in MODEL_FIELDS:
            del model[key]
        for key in QUALITY_FIELDS:
            del model["quality"][key]
    for record in raw["stats"]["models"] + raw["stats"]["comparisons"]:
        del record["n_excluded"]
    return raw


def test_a_version_2_run_reads_as_it_was_written(tmp_path):
    assert SCHEMA_VERSION == 3
    out = tmp_path / "out"
    run = headtohead.run(IRIS, out_dir=out)
    raw = json.loads((out / "results.json").read_text())
    old = tmp_path / "old.json"
    old.write_text(json.dumps(_as_version_2(raw)))
    result = headtohead.load_result(old)
    assert result.schema_version == 2
    for model in result.models:  # the new fields hold what a version-2 run had
        assert model.labels_outside_data == [] and model.batch_backoff == []
        assert model.quality.confusion_labels is None and model.quality.n_nonfinite == 0
        assert model.quality == run.result.model(model.name).quality
    assert [c.n_excluded for c in result.stats.comparisons] == [0]

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
