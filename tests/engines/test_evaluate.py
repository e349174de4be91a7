"""The evaluation engine with fake adapters: identical order, label alignment, metrics = scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import metrics as skm

from headtohead.adapters.base import LoadContext, ModelAdapter
from headtohead.adapters.labels import align_labels
from headtohead.config import model_settings
from headtohead.data import Dataset
from headtohead.engines.batching import plan_batches
from headtohead.engines.evaluate import evaluate_model
from headtohead.errors import ModelError
from headtohead.stats.quality import compute_quality


class LookupAdapter(ModelAdapter):
    """Scores each example by a fixed table; records the examples it was shown."""

    kind = "python"
    modalities = ("features",)

    def __init__(self, name, scores, label_names, output_kind="logits"):
        super().__init__(
            model_settings(name=name, kind="python", source="x:y"), LoadContext(tuple(label_names), "features")
        )
        self.scores = scores
        self.label_names = tuple(label_names) if label_names is not None else None
        self.output_kind = output_kind
        self.seen: list[list[int]] = []

    @classmethod
    def load(cls, config, context):  # pragma: no cover - built directly in tests
        raise AssertionError

    def preprocess(self, examples):
        ids = [int(row[0]) for row in examples]
        self.seen.append(ids)
        return ids

    def forward(self, inputs):
        return self.scores[inputs]


def _dataset(n=50, k=3, seed=0):
    rng = np.random.default_rng(seed)
    features = np.arange(n, dtype=np.float32).reshape(n, 1)
    return Dataset("mem", "features", features, rng.integers(0, k, n), tuple(f"c{i}" for i in range(k)))


def test_every_model_sees_identical_batches_and_hash():
    data = _dataset()
    rng = np.random.default_rng(1)
    plan = plan_batches(len(data), 7)
    a = LookupAdapter("a", rng.normal(size=(50, 3)), data.label_names)
    b = LookupAdapter("b", rng.normal(size=(50, 3)), data.label_names)
    ea, eb = evaluate_model(a, data, plan), evaluate_model(b, data, plan)
    assert a.seen == b.seen and sum(a.seen, []) == list(range(50))
    assert [len(s) for s in a.seen] == [7] * 7 + [1]
    assert ea.plan_hash == eb.plan_hash == plan.hash()
    assert plan_batches(50, 8).hash() != plan.hash()


def test_probabilities_and_predictions_from_logits():
    data = _dataset()
    logits = np.random.default_rng(2).normal(size=(50, 3))
    ev = evaluate_model(LookupAdapter("a", logits, data.label_names), data, plan_batches(50, 16))
    np.testing.assert_allclose(ev.proba.sum(axis=1), 1, rtol=1e-5)
    np.testing.assert_array_equal(ev.pred, logits.argmax(axis=1))


def test_remapped_labels_give_the_same_predictions():
    data = _dataset()
    logits = np.random.default_rng(3).normal(size=(50, 3))
    straight = evaluate_model(LookupAdapter("a", logits, ["c0", "c1", "c2"]), data, plan_batches(50, 10))
    # the same model with its outputs stored in another order, and named accordingly
    permuted = evaluate_model(LookupAdapter("b", logits[:, [2, 0, 1]], ["c2", "c0", "c1"]), data, plan_batches(50, 10))
    assert permuted.alignment.how == "remapped"
    np.testing.assert_array_equal(straight.pred, permuted.pred)
    np.testing.assert_allclose(straight.proba, permuted.proba, rtol=1e-6)


def test_label_alignment_rules():
    assert align_labels(["C0", "c1"], ["c0", "c1"], model="m").how == "remapped"
    generic = align_labels(["LABEL_0", "LABEL_1"], ["neg", "pos"], model="m")
    assert generic.how == "generic" and "LABEL_0" in generic.warning
    assert align_labels(None, ["neg", "pos"], model="m").how == "unnamed"
    with pytest.raises(ModelError, match=r"labels 'cat', 'dog' do not match the dataset labels 'neg', 'pos'"):
        align_labels(["cat", "dog"], ["neg", "pos"], model="m")
    with pytest.raises(
        ModelError, match=r"cannot predict the dataset's class\(es\) 'pos': its 2 outputs are 'a', 'neg'"
    ):
        align_labels(["a", "neg"], ["neg", "pos"], model="m")


def test_probability_outputs_are_checked():
    data = _dataset()
    bad = np.full((50, 3), 0.5)
    with pytest.raises(ModelError, match="do not sum to 1"):
        evaluate_model(LookupAdapter("p", bad, data.label_names, "probabilities"), data, plan_batches(50, 10))
    nan = np.full((50, 3), np.nan)
    with pytest.raises(ModelError, match="NaN"):
        evaluate_model(LookupAdapter("n", nan, data.label_names), data, plan_batches(50, 10))


def test_quality_metrics_equal_scikit_learn():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 4, 300)
    proba = rng.dirichlet(np.ones(4), 300)
    pred = proba.argmax(axis=1)
    names = ["a", "b", "c", "d"]
    q = compute_quality(y, pred, proba, names)
    assert q.accuracy == skm.accuracy_score(y, pred)
    assert q.f1_macro == pytest.approx(skm.f1_score(y, pred, average="macro"))
    assert q.f1_weighted == pytest.approx(skm.f1_score(y, pred, average="weighted"))
    assert q.precision_macro == pytest.approx(skm.precision_score(y, pred, average="macro"))
    assert q.recall_weighted == pytest.approx(skm.recall_score(y, pred, average="weighted"))
    assert q.confusion_matrix == skm.confusion_matrix(y, pred).tolist()
    recalls = skm.recall_score(y, pred, average=None)
    assert [c.accuracy for c in q.per_class] == pytest.approx(recalls)
    assert [c.support for c in q.per_class] == np.bincount(y, minlength=4).tolist()
    assert q.confidence_mean == pytest.approx(proba.max(axis=1).mean())


# -- a test set holding some of the model's classes; NaN and infinite scores ---------------
def test_a_model_with_more_classes_than_the_data_predicts_over_all_of_them():
    data = _dataset(n=120, k=3)
    names = ["x", "c2", "y", "c0", "z", "c1"]  # three classes the data never holds, in between
    logits = np.random.default_rng(5).normal(size=(120, 6)) * 2
    ev = evaluate_model(LookupAdapter("wide", logits, names), data, plan_batches(120, 16))
    assert ev.alignment.how == "subset" and ev.alignment.outside == ("x", "y", "z")
    aligned = ["c0", "c1", "c2", "x", "y", "z"]
    # the prediction is the argmax over all six outputs, named in aligned order
    assert [aligned[p] for p in ev.pred] == [names[j] for j in logits.argmax(axis=1)]
    expected = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(ev.proba, expected[:, [3, 5, 1, 0, 2, 4]], rtol=1e-5)
    assert (ev.pred >= 3).sum() > 10  # the random model often names a class the data lacks

    q = compute_quality(data.labels, ev.pred, ev.proba, data.label_names, ev.alignment.outside)
    present = [0, 1, 2]
    assert q.accuracy == pytest.approx(skm.accuracy_score(data.labels, ev.pred))
    assert q.f1_macro == pytest.approx(skm.f1_score(data.labels, ev.pred, labels=present, average="macro"))
    assert q.precision_weighted == pytest.approx(
        skm.precision_score(data.labels, ev.pred, labels=present, average="weighted", zero_division=0)
    )
    assert q.balanced_accuracy == pytest.approx(
        np.mean(skm.recall_score(data.labels, ev.pred, labels=present, average=None))
    )
    assert [c.label for c in q.per_class] == ["c0", "c1", "c2"]
    union = sorted(set(present) | set(ev.pred.tolist()))
    assert q.confusion_labels == [aligned[i] for i in union]
    assert q.confusion_matrix == skm.confusion_matrix(data.labels, ev.pred, labels=union).tolist()
    assert q.predicted_outside == int((ev.pred >= 3).sum())


def test_nan_and_infinite_scores_leave_those_examples_without_a_prediction():
    data = _dataset(n=40, k=3)
    logits = np.random.default_rng(6).normal(size=(40, 3))
    logits[[3, 17]] = np.nan
    logits[25, 1] = np.inf
    plan = plan_batches(40, 8)
    ev = evaluate_model(LookupAdapter("n", logits, data.label_names), data, plan)
    bad = [3, 17, 25]
    assert ev.n_nonfinite == 3 and np.flatnonzero(ev.pred == -1).tolist() == bad
    assert np.isnan(ev.proba[bad]).all() and np.isfinite(np.delete(ev.proba, bad, axis=0)).all()
    np.testing.assert_array_equal(np.delete(ev.pred, bad), np.delete(logits.argmax(axis=1), bad))
    q = compute_quality(data.labels, ev.pred, ev.proba, data.label_names, example_index=plan.order)
    keep = np.setdiff1d(np.arange(40), bad)
    assert q.n_examples == 40 and q.n_failed == 3 and q.failed_examples == bad
    assert q.accuracy == pytest.approx(skm.accuracy_score(data.labels, ev.pred))  # a failure is a wrong answer
    assert q.answered.accuracy == pytest.approx(skm.accuracy_score(data.labels[keep], ev.pred[keep]))
    assert sum(map(sum, q.confusion_matrix)) == 40 and q.confusion_labels[-1] == "(no prediction)"


def test_a_training_epoch_that_diverged_is_an_error_and_wide_models_get_their_loss():
    import torch

    from headtohead.engines.train_loop import epoch_metrics

    data = _dataset(n=40, k=3)
    logits = np.random.default_rng(8).normal(size=(40, 3))
    logits[5] = np.nan
    diverged = LookupAdapter("d", logits, data.label_names)
    diverged.module = torch.nn.Identity()
    with pytest.raises(ModelError, match=r"model 'd' returned NaN or infinite scores for 1 of 40 evaluation examples"):
        epoch_metrics(diverged, data, batch_size=8)

    wide_logits = np.random.default_rng(9).normal(size=(40, 5))  # two classes the data does not hold
    wide = LookupAdapter("w", wide_logits, ["c0", "c1", "c2", "x", "y"])
    wide.module = torch.nn.Identity()
    metrics = epoch_metrics(wide, data, batch_size=8)
    proba = np.exp(wide_logits) / np.exp(wide_logits).sum(axis=1, keepdims=True)
    assert metrics["loss"] == pytest.approx(-np.log(proba[np.arange(40), data.labels]).mean(), rel=1e-5)
    assert metrics["accuracy"] == pytest.approx((wide_logits.argmax(axis=1) == data.labels).mean())
