"""scikit-learn adapter (skops and pickle files) and the python-factory adapter."""

from __future__ import annotations

import operator
import pickle
import sys
import zipfile

import numpy as np
import pytest
import torch
from scipy.special import softmax
from sklearn.datasets import load_digits, load_iris
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.svm import LinearSVC

from headtohead.adapters import LoadContext, create_adapter
from headtohead.config.schema import model_settings
from headtohead.errors import ModelError
from headtohead.testing.models import tiny_mlp

IRIS_X, IRIS_Y = load_iris(return_X_y=True)
IRIS = LoadContext(label_names=("setosa", "versicolor", "virginica"), modality="features")


def _sk(tmp_path, filename: str, context: LoadContext = IRIS, **overrides):
    config = model_settings(name="sk", kind="sklearn", source=filename, **overrides)
    return create_adapter(config, LoadContext(context.label_names, context.modality, base_dir=tmp_path))


@pytest.fixture(scope="module")
def skops_io():
    """skops is the optional extra ``headtohead[skops]``; its tests skip without it."""
    return pytest.importorskip("skops.io")


@pytest.fixture(scope="module")
def iris_lr():
    return LogisticRegression(max_iter=500).fit(IRIS_X, IRIS_Y)


# -- sklearn -----------------------------------------------------------------------


def test_skops_logistic_regression_gives_its_probabilities(tmp_path, iris_lr, skops_io):
    skops_io.dump(iris_lr, tmp_path / "lr.skops")
    adapter = _sk(tmp_path, "lr.skops")
    scores = adapter.forward(adapter.preprocess(list(IRIS_X[:10])))
    np.testing.assert_allclose(scores, iris_lr.predict_proba(IRIS_X[:10]))
    assert adapter.output_kind == "probabilities"
    assert adapter.label_names == ("0", "1", "2")
    assert adapter.num_parameters() == iris_lr.coef_.size + iris_lr.intercept_.size == 15
    assert adapter.parameter_bytes() == 15 * 8
    assert adapter.module is None and adapter.warnings == []


def test_skops_untrusted_types_need_allow_pickle(tmp_path, skops_io):
    model = make_pipeline(FunctionTransformer(operator.neg), LogisticRegression(max_iter=500)).fit(IRIS_X, IRIS_Y)
    skops_io.dump(model, tmp_path / "neg.skops")
    with pytest.raises(ModelError, match=r"types skops does not trust by default \(_operator.neg\).*allow_pickle"):
        _sk(tmp_path, "neg.skops")
    adapter = _sk(tmp_path, "neg.skops", allow_pickle=True)
    np.testing.assert_allclose(adapter.forward(adapter.preprocess(IRIS_X[:5])), model.predict_proba(IRIS_X[:5]))


def test_pickle_only_with_allow_pickle(tmp_path, iris_lr):
    (tmp_path / "lr.pkl").write_bytes(pickle.dumps(iris_lr))
    import joblib

    joblib.dump(iris_lr, tmp_path / "lr.joblib")
    for name in ("lr.pkl", "lr.joblib"):
        with pytest.raises(ModelError, match="pickle.*arbitrary code.*allow_pickle: true"):
            _sk(tmp_path, name)
        adapter = _sk(tmp_path, name, allow_pickle=True)
        np.testing.assert_allclose(adapter.forward(adapter.preprocess(IRIS_X[:5])), iris_lr.predict_proba(IRIS_X[:5]))


def test_linear_svc_margins_become_logits(tmp_path, skops_io):
    svc = LinearSVC().fit(IRIS_X, IRIS_Y)
    skops_io.dump(svc, tmp_path / "svc.skops")
    adapter = _sk(tmp_path, "svc.skops")
    scores = adapter.forward(adapter.preprocess(IRIS_X))
    assert adapter.output_kind == "logits" and any("decision_function" in w for w in adapter.warnings)
    np.testing.assert_allclose(scores, svc.decision_function(IRIS_X))


def test_binary_margin_becomes_two_logit_columns(tmp_path, skops_io):
    binary = IRIS_Y > 0
    svc = LinearSVC().fit(IRIS_X, binary)
    skops_io.dump(svc, tmp_path / "bin.skops")
    adapter = _sk(tmp_path, "bin.skops", LoadContext(("False", "True"), "features"))
    scores = adapter.forward(adapter.preprocess(IRIS_X))
    margin = svc.decision_function(IRIS_X)
    assert scores.shape == (150, 2) and adapter.label_names == ("False", "True")
    # softmax of [-d/2, d/2] is sigmoid(d) for the positive class; its argmax is predict().
    np.testing.assert_allclose(softmax(scores, axis=1)[:, 1], 1 / (1 + np.exp(-margin)))
    np.testing.assert_array_equal(svc.classes_[scores.argmax(axis=1)], svc.predict(IRIS_X))


class PredictOnly:
    """An estimator with neither predict_proba nor decision_function."""

    classes_ = np.array(["a", "b", "c"])

    def predict(self, X):  # noqa: N803 - scikit-learn's argument name
        return self.classes_[np.asarray(X)[:, 0].astype(int) % 3]


def test_predict_only_estimator_gives_one_hot(tmp_path):
    (tmp_path / "p.pkl").write_bytes(pickle.dumps(PredictOnly()))
    adapter = _sk(tmp_path, "p.pkl", LoadContext(("a", "b", "c"), "features"), allow_pickle=True)
    scores = adapter.forward(adapter.preprocess([[0.0], [4.0], [2.0]]))
    np.testing.assert_array_equal(scores, np.eye(3)[[0, 1, 2]])
    assert adapter.output_kind == "probabilities" and adapter.num_parameters() is None  # unknown, not 0


def test_text_pipeline_and_digit_images(tmp_path, skops_io):
    texts = ["good film", "great fun", "bad plot", "awful day", "good day", "bad film"]
    text_model = make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(
        texts, ["pos", "pos", "neg", "neg", "pos", "neg"]
    )
    skops_io.dump(text_model, tmp_path / "text.skops")
    adapter = _sk(tmp_path, "text.skops", LoadContext(("neg", "pos"), "text"))
    assert adapter.preprocess(("great film", "bad")) == ["great film", "bad"]
    np.testing.assert_allclose(adapter.forward(["great film"]), text_model.predict_proba(["great film"]))
    digits = load_digits()
    images = list(digits.images.astype(np.uint8))
    digit_model = LogisticRegression(max_iter=200).fit(digits.data[:300], digits.target[:300])
    skops_io.dump(digit_model, tmp_path / "digits.skops")
    adapter = _sk(tmp_path, "digits.skops", LoadContext(tuple(map(str, range(10))), "image"))
    rows = adapter.preprocess(images[:7])
    assert rows.shape == (7, 64)
    np.testing.assert_allclose(adapter.forward(rows), digit_model.predict_proba(digits.data[:7]))


def test_sklearn_bad_inputs_are_model_errors(tmp_path, iris_lr, skops_io):
    skops_io.dump(iris_lr, tmp_path / "lr.skops")
    (tmp_path / "broken.skops").write_bytes(b"PK\x03\x04 not really a zip")
    with zipfile.ZipFile(tmp_path / "foreign.skops", "w") as archive:  # a zip, but not one skops wrote
        archive.writestr("model.bin", b"weights")
    (tmp_path / "model.onnx").write_bytes(b"x")
    skops_io.dump(LogisticRegression(), tmp_path / "unfitted.skops")
    cases = [
        ("missing.skops", {}, "not found"),
        ("broken.skops", {}, "not a readable .skops file"),
        ("foreign.skops", {}, "not a readable .skops file"),
        ("model.onnx", {}, "cannot read '.onnx'"),
        ("unfitted.skops", {}, "no classes_"),
        ("lr.skops", {"label_names": ["a", "b"]}, "label_names has 2 names but the estimator has 3"),
    ]
    for filename, extra, message in cases:
        with pytest.raises(ModelError, match=message):
            _sk(tmp_path, filename, **extra)
    adapter = _sk(tmp_path, "lr.skops")
    with pytest.raises(ModelError, match="rejected the features inputs"):
        adapter.forward(adapter.preprocess([[1.0, 2.0]]))


def test_missing_skops_names_the_install_command(tmp_path, monkeypatch):
    (tmp_path / "m.skops").write_bytes(b"PK")
    monkeypatch.setitem(sys.modules, "skops", None)  # makes "import skops.io" fail as if absent
    monkeypatch.setitem(sys.modules, "skops.io", None)
    one_line = r"^model 'sk' \(kind sklearn\) needs skops, which is not installed; install it with: pip install "
    with pytest.raises(ModelError, match=one_line + r"\"headtohead\[skops\]\"$"):
        _sk(tmp_path, "m.skops")


# -- python factories --------------------------------------------------------------


def _py(source: str, context: LoadContext = IRIS, **overrides):
    return create_adapter(model_settings(name="py", kind="python", source=source, **overrides), context)


def test_factory_module_on_features():
    adapter = _py("headtohead.testing.models:tiny_mlp", model_args={"n_features": 4, "n_classes": 3})
    batch = adapter.preprocess(list(IRIS_X[:6]))
    assert batch.dtype == torch.float32 and batch.shape == (6, 4)
    expected = tiny_mlp(4, 3)(torch.as_tensor(IRIS_X[:6], dtype=torch.float32))
    torch.testing.assert_close(adapter.forward(batch), expected)
    assert adapter.output_kind == "logits" and adapter.label_names is None
    assert adapter.num_parameters() == 4 * 16 + 16 + 16 * 3 + 3


def test_factory_module_on_images_and_refused_for_text():
    images = [np.full((8, 8), 200, np.uint8), np.zeros((20, 10, 3), np.uint8)]
    context = LoadContext(("a", "b"), "image")
    adapter = _py("headtohead.testing.models:tiny_cnn", context, model_args={"n_classes": 2}, image_size=16)
    batch = adapter.preprocess(images)
    assert batch.shape == (2, 3, 16, 16)
    # No normalisation: pixel 200 becomes 200/255.
    assert torch.allclose(batch[0], torch.full((3, 16, 16), 200 / 255))
    assert adapter.forward(batch).shape == (2, 2)
    with pytest.raises(ModelError, match="cannot read raw text; return a callable"):
        _py("headtohead.testing.models:tiny_mlp", LoadContext(("a", "b"), "text"))


def test_factory_callable_returning_probabilities():
    adapter = _py(
        "headtohead.testing.models:linear_probabilities",
        outputs="probabilities",
        model_args={"n_features": 4, "n_classes": 3, "label_names": ["virginica", "setosa", "versicolor"]},
    )
    raw = adapter.preprocess(IRIS_X[:3])
    assert isinstance(raw, list) and np.array_equal(np.stack(raw), IRIS_X[:3])  # raw examples, as a list
    scores = adapter.forward(adapter.preprocess(IRIS_X[:3]))
    assert scores.shape == (3, 3) and adapter.output_kind == "probabilities"
    np.testing.assert_allclose(scores.sum(axis=1), 1.0)
    assert adapter.label_names == ("virginica", "setosa", "versicolor")
    text = _py(
        "headtohead.testing.models:keyword_classifier",
        LoadContext(("neg", "pos"), "text"),
        outputs="probabilities",
        model_args={"keywords": {"neg": ["bad"], "pos": ["good"]}},
    )
    assert text.forward(["good, good!", "bad"]).argmax(axis=1).tolist() == [1, 0]
    assert text.label_names == ("neg", "pos")


def test_factory_beside_the_experiment_file(tmp_path):
    (tmp_path / "my_models.py").write_text(
        "import numpy as np\n"
        "class Scorer:\n"
        "    classes_ = ['x', 'y']\n"
        "    def __call__(self, batch):\n"
        "        return np.tile([0.0, 1.0], (len(batch), 1))\n"
        "def build():\n"
        "    return Scorer()\n"
        "def wrong_shape():\n"
        "    return lambda batch: np.zeros(len(batch))\n"
        "def needs_missing():\n"
        "    import no_such_dependency_h2h\n"
    )
    context = LoadContext(("x", "y"), "text_pair", base_dir=tmp_path)
    adapter = _py("my_models:build", context)
    assert adapter.label_names == ("x", "y")
    assert adapter.forward([("a", "b")]).tolist() == [[0.0, 1.0]]
    with pytest.raises(ModelError, match=r"returned scores of shape \(2,\) for 2 examples"):
        _py("my_models:wrong_shape", context).forward([("a", "b"), ("c", "d")])
    with pytest.raises(ModelError, match="raised ModuleNotFoundError: No module named 'no_such_dependency_h2h'"):
        _py("my_models:needs_missing", context)
    (tmp_path / "broken_models.py").write_text("import no_such_dependency_h2h\n")
    with pytest.raises(ModelError, match="needs module 'no_such_dependency_h2h', which is not installed"):
        _py("broken_models:build", context)


def test_factory_import_errors_are_model_errors():
    cases = [
        ("no_such_package_h2h.models:build", "module 'no_such_package_h2h.models' not found; put it on PYTHONPATH"),
        ("headtohead.testing.models:no_factory", "has no attribute 'no_factory'"),
        ("headtohead.testing.models", "must look like 'package.module:factory'"),
        ("headtohead.testing.models:np", "not a callable factory"),
    ]
    for source, message in cases:
        with pytest.raises(ModelError, match=message):
            _py(source)
    with pytest.raises(ModelError, match=r"model_args \['bogus'\] failed"):
        _py("headtohead.testing.models:tiny_mlp", model_args={"bogus": 1})
