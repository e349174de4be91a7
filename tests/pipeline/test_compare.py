"""``headtohead.compare``: models and data held in memory, the same ``Run`` as ``headtohead.run``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm

import headtohead
from headtohead.errors import ConfigError, DataError, ModelError
from headtohead.pipeline.run import Run

FAST_STATS = {"n_resamples": 200}


@pytest.fixture(scope="module")
def features():
    """A feature DataFrame whose classes a linear layer separates, with an id and a slice column."""
    rng = np.random.default_rng(0)
    n = 120
    y = rng.integers(0, 3, n)
    x = rng.normal(size=(n, 4)) + np.eye(4)[y] * 2.0
    frame = pd.DataFrame(x, columns=["f0", "f1", "f2", "f3"])
    frame["label"] = [("cat", "dog", "fox")[k] for k in y]
    frame["source"] = ["a" if i % 2 else "b" for i in range(n)]
    frame["id"] = [f"r{i}" for i in range(n)]
    return frame


def test_torch_module_and_predictions_on_a_dataframe(features, tmp_path, one_torch_thread):
    import torch

    torch.manual_seed(0)
    module = torch.nn.Linear(4, 3)
    with torch.no_grad():  # a fixed linear read-out of the features: class k scores feature k
        module.weight.copy_(torch.eye(4)[:3] * 3.0)
        module.bias.zero_()
    x = torch.tensor(features[["f0", "f1", "f2", "f3"]].to_numpy(), dtype=torch.float32)
    expected = module(x).argmax(dim=1).numpy()
    guesses = ["cat"] * len(features)
    outcome = headtohead.compare(
        {"linear": module, "always-cat": guesses},
        features,
        id_column="id",
        slice_columns=["source"],
        stats=FAST_STATS,
        out_dir=tmp_path,
        report=True,
    )
    assert isinstance(outcome, Run)
    result = outcome.result
    y = features["label"].map({"cat": 0, "dog": 1, "fox": 2}).to_numpy()
    assert result.dataset.label_names == ["cat", "dog", "fox"]
    assert result.model("linear").quality.accuracy == pytest.approx(skm.accuracy_score(y, expected))
    assert result.model("always-cat").quality.accuracy == pytest.approx(np.mean(y == 0))
    assert [m.outputs for m in result.models] == ["computed", "stored"]
    comparison = result.stats.comparison("linear", "always-cat")
    assert comparison.winner == "linear" and comparison.significant
    assert {s.kind for s in result.stats.slices.slices} >= {"class", "column"}
    saved = headtohead.load_result(tmp_path / "results.json")
    assert saved.model("linear").quality.accuracy == result.model("linear").quality.accuracy
    assert saved.dataset.source.startswith("<in memory: DataFrame 120")
    assert (tmp_path / "report.html").is_file() and (tmp_path / "disagreements.csv").is_file()


def test_sklearn_estimator_callable_and_probabilities_on_arrays(features):
    from sklearn.linear_model import LogisticRegression

    x = features[["f0", "f1", "f2", "f3"]].to_numpy()
    y = features["label"].to_numpy()
    estimator = LogisticRegression(max_iter=500).fit(x[:60], y[:60])
    proba = estimator.predict_proba(x)
    outcome = headtohead.compare(
        {"sk": estimator, "fn": lambda rows: np.asarray(rows) @ np.eye(4)[:, :3], "stored": proba},
        (x, y),
        stats=FAST_STATS,
    )
    result = outcome.result
    assert result.model("sk").quality.accuracy == pytest.approx(np.mean(estimator.predict(x) == y))
    assert result.model("stored").quality.accuracy == result.model("sk").quality.accuracy
    # stored probabilities keep their calibration, equal to the estimator's own
    assert result.stats.model("stored").ece.value == pytest.approx(result.stats.model("sk").ece.value)
    assert result.model("fn").quality.accuracy == pytest.approx(
        np.mean(np.array(["cat", "dog", "fox"])[(x @ np.eye(4)[:, :3]).argmax(axis=1)] == y)
    )


def test_text_dataframe_with_a_callable_and_a_dict_of_predictions():
    frame = pd.DataFrame(
        {
            "text": ["good film", "bad film", "fine plot", "awful plot", "good plot", "bad acting"],
            "label": ["pos", "neg", "pos", "neg", "pos", "neg"],
        }
    )
    rule = lambda texts: [[("bad" in t) + ("awful" in t), ("good" in t) + ("fine" in t)] for t in texts]  # noqa: E731
    outcome = headtohead.compare(
        {"rule": rule, "dict": {"prediction": ["pos", "pos", "pos", "neg", "pos", "pos"]}},
        frame,
        label_names=["neg", "pos"],
        stats=FAST_STATS,
    )
    assert [m.quality.accuracy for m in outcome.result.models] == pytest.approx([1.0, 4 / 6])
    assert outcome.result.dataset.modality == "text"
    # a list (or dict) in memory has nothing but its order: matching it by position is not worth a warning
    assert not any("by position" in w for m in outcome.result.models for w in m.warnings)


def test_bad_objects_say_what_is_accepted(features):
    named = {"id_column": "id", "slice_columns": ["source"]}
    with pytest.raises(ConfigError, match="non-empty mapping"):
        headtohead.compare({}, features)
    with pytest.raises(ModelError, match="is not a model compare.. can use"):
        headtohead.compare({"x": 3.5}, features, **named)
    with pytest.raises(ModelError, match="probabilities of shape .120, 2."):
        headtohead.compare({"x": np.full((120, 2), 0.5)}, features, **named)
    with pytest.raises(DataError, match="cannot evaluate on a str"):
        headtohead.compare({"x": ["cat"]}, "data.csv")
    with pytest.raises(DataError, match="non-numeric columns"):
        headtohead.compare({"x": ["cat"] * 120}, features)  # 'source' and 'id' not named: not features


def test_hugging_face_model_and_tokenizer_in_memory_equal_the_same_model_from_its_folder(tmp_path, one_torch_thread):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from headtohead.testing.data import make_text_rows
    from headtohead.testing.text import make_tiny_bert

    rows = make_text_rows(10, classes=("negative", "positive"), seed=1)
    frame = pd.DataFrame(rows)
    folder = make_tiny_bert(tmp_path / "bert", ["positive", "negative"], seed=3)  # reversed: must be remapped
    pair = (AutoModelForSequenceClassification.from_pretrained(folder), AutoTokenizer.from_pretrained(folder))
    outcome = headtohead.compare({"memory": pair, "folder": str(folder)}, frame, stats=FAST_STATS)
    memory, saved = outcome.result.model("memory"), outcome.result.model("folder")
    assert memory.label_alignment == saved.label_alignment == "remapped"
    assert memory.quality.confusion_matrix == saved.quality.confusion_matrix
    assert outcome.result.stats.comparison("memory", "folder").discordance == 0


def test_a_wrong_outputs_argument_is_one_clear_error(features):
    named = {"id_column": "id", "slice_columns": ["source"]}

    def rule(rows):
        return np.full((len(rows), 3), 1 / 3)

    with pytest.raises(ConfigError, match=r"outputs='probabilities' must map model names .* outputs=\{'rule': "):
        headtohead.compare({"rule": rule}, features, **named, outputs="probabilities")
    with pytest.raises(ConfigError, match="outputs names 'rulle' — did you mean rule"):
        headtohead.compare({"rule": rule}, features, **named, outputs={"rulle": "probabilities"})
    with pytest.raises(ConfigError, match="outputs is a key of kind: python, onnx only .*kind: predictions"):
        headtohead.compare(
            {"rule": rule, "fixed": ["cat"] * 120}, features, **named, outputs={"fixed": "probabilities"}
        )
