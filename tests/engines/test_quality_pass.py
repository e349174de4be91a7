"""The fast quality pass: the length-grouped plan, preprocessing ahead, CUDA transfers (fake GPU).

What may change is when work happens and how batches are padded; what may not: every
model sees the same batches, predictions line up with ``plan.order``, and each example's
prediction is what the model gives it alone.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
import torch

from headtohead.adapters import LoadContext, create_adapter
from headtohead.adapters.base import ModelAdapter
from headtohead.config import model_settings
from headtohead.data import Dataset
from headtohead.engines.batching import padded_positions, plan_batches
from headtohead.engines.evaluate import evaluate_model
from headtohead.engines.planning import example_lengths, plan_evaluation, text_lengths
from headtohead.engines.transfer import ScoreCollector
from headtohead.errors import ModelError
from headtohead.runtime.devices import use_backend
from headtohead.testing.fake_device import FakeCudaBackend

LABELS = ("neg", "pos")
# Characters: 1, 10, 2, 9, 3, 8, 4, 7 (a known answer for padding).
SIZES = [1, 10, 2, 9, 3, 8, 4, 7]


class TextLookup(ModelAdapter):
    """Scores each text by a table keyed by its length; records every batch it preprocessed."""

    kind = "python"
    modalities = ("text", "text_pair")

    def __init__(self, name, table, *, delay=0.0, device="cpu", module=None):
        super().__init__(
            model_settings(name=name, kind="python", source="x:y"), LoadContext(LABELS, "text", device=device)
        )
        self.table, self.delay, self.module = table, delay, module
        self.label_names = LABELS
        self.seen: list[list[str]] = []
        self.threads: set[str] = set()
        self.moved: list[tuple[str, bool]] = []

    @classmethod
    def load(cls, config, context):  # pragma: no cover - built directly
        raise AssertionError

    def preprocess(self, examples):
        self.seen.append(list(examples))
        self.threads.add(threading.current_thread().name)
        if self.delay:
            time.sleep(self.delay * (len(self.seen) % 3))  # uneven: the consumer catches up sometimes
        return torch.tensor([len(e) for e in examples])

    def forward(self, inputs):
        return torch.as_tensor(self.table[inputs.numpy()], dtype=torch.float32)


class FakeGpuLookup(TextLookup):
    """The lookup model "on" a fake GPU: moving a batch only logs where it happened."""

    def __init__(self, name, table, streams_of):
        super().__init__(name, table, device="cuda:0", module=torch.nn.Identity())
        self.streams_of = streams_of

    def to_device(self, inputs):
        streams = self.streams_of()
        self.moved.append((streams.stream, bool(getattr(inputs, "h2h_pinned", False))))
        streams.log.append(("moved", int(inputs.shape[0])))
        return inputs

    def forward(self, inputs):
        self.streams_of().log.append(("forward", int(inputs.shape[0])))
        return super().forward(inputs)


def _texts(sizes=SIZES):
    return ["x" * n for n in sizes]


def _data(texts):
    labels = np.arange(len(texts)) % 2
    return Dataset("mem", "text", texts, labels, LABELS)


def _table(max_len=64, seed=0):
    return np.random.default_rng(seed).normal(size=(max_len + 1, 2))


# -- the plan ------------------------------------------------------------------------
def test_plan_groups_lengths_and_pads_less_on_a_known_set():
    texts = _texts()
    lengths = text_lengths(texts)
    in_order, grouped = plan_batches(8, 2), plan_evaluation(_data(texts), 2, seed=0)
    assert padded_positions(in_order, lengths) == 2 * (10 + 9 + 8 + 7) == 68
    assert padded_positions(grouped, lengths) == 2 * (10 + 8 + 4 + 2) == 48  # the least possible; 55 are real
    assert sorted(map(sorted, (b.tolist() for b in grouped))) == [[0, 2], [1, 3], [4, 6], [5, 7]]
    assert grouped.order[:2].tolist() == [1, 3]  # the longest batch first: a batch too big fails at once


def test_plan_keeps_full_batches_and_a_seeded_order():
    rng = np.random.default_rng(3)
    lengths = rng.integers(1, 200, 1003)
    a, b = plan_batches(1003, 32, seed=7, lengths=lengths), plan_batches(1003, 32, seed=7, lengths=lengths)
    assert a.hash() == b.hash() and plan_batches(1003, 32, seed=8, lengths=lengths).hash() != a.hash()
    assert sorted(a.order.tolist()) == list(range(1003))
    batches = list(a)
    assert [len(x) for x in batches] == [32] * 31 + [11]  # only the last is short (sharding needs it)
    spans = [(lengths[x].min(), lengths[x].max()) for x in batches]
    assert all(hi - lo <= 12 for lo, hi in spans)  # each batch holds similar lengths
    assert padded_positions(a, lengths) < 0.6 * padded_positions(plan_batches(1003, 32), lengths)


def test_plan_for_images_and_features_keeps_dataset_order():
    features = Dataset("mem", "features", np.zeros((10, 2)), np.zeros(10), ("a",))
    assert example_lengths(features) == (None, "none")
    assert plan_evaluation(features, 3, seed=1).order.tolist() == list(range(10))


def test_plan_counts_tokens_of_the_first_model_that_can(tmp_path):
    from headtohead.testing.text import make_tiny_bert

    texts = [
        "a b c d e f g",
        "abcdefghijklmnopqrstuvwxyz",
        "the film",
        "bad",
        "good film indeed, quite good",
        "x y",
        "fine",
        "a long, long, long sentence with many words in it",
    ] * 3
    folder = make_tiny_bert(tmp_path / "bert", LABELS, seed=1)
    models = [
        model_settings(name="skl", kind="sklearn", source="m.joblib"),
        model_settings(name="bert", kind="transformers", source=str(folder), max_length=16),
    ]
    context = LoadContext(LABELS, "text", base_dir=tmp_path)
    lengths, unit = example_lengths(_data(texts), models, context)
    adapter = create_adapter(models[1], context)
    tokens = adapter.preprocess(texts)["attention_mask"].sum(1).numpy()
    assert unit == "tokens of model bert" and lengths.tolist() == tokens.tolist()
    by_tokens = plan_evaluation(_data(texts), 4, seed=0, models=models, context=context)
    by_chars = plan_batches(len(texts), 4, lengths=text_lengths(texts))
    least = padded_positions(plan_batches(len(texts), 4, lengths=tokens), tokens)
    assert padded_positions(by_tokens, tokens) == least <= padded_positions(by_chars, tokens)
    pairs = Dataset("mem", "text_pair", [(t, t[::-1]) for t in texts], np.arange(len(texts)) % 2, LABELS)
    pair_context = LoadContext(LABELS, "text_pair", base_dir=tmp_path)
    pair_lengths, _ = example_lengths(pairs, models, pair_context)
    pair_tokens = create_adapter(models[1], pair_context).preprocess(list(pairs.examples))["attention_mask"].sum(1)
    assert pair_lengths.tolist() == pair_tokens.tolist()  # truncated to 16 like the model's own batches
    # A model folder that cannot be read leaves the plan to characters (its load reports the error).
    broken = [model_settings(name="gone", kind="transformers", source=str(tmp_path / "missing"))]
    assert example_lengths(_data(texts), broken, context)[1] == "characters"


# -- the pass --------------------------------------------------------------------------
def test_every_model_sees_the_same_batches_of_the_plan():
    texts = _texts([3, 17, 5, 9, 12, 1, 30, 8, 8, 2, 6] * 4)
    plan = plan_evaluation(_data(texts), 4, seed=5)
    a, b = TextLookup("a", _table(seed=1)), TextLookup("b", _table(seed=2))
    ea, eb = evaluate_model(a, _data(texts), plan), evaluate_model(b, _data(texts), plan)
    expected = [[texts[i] for i in batch] for batch in plan]
    assert a.seen == b.seen == expected
    assert ea.plan_hash == eb.plan_hash == plan.hash()


def test_preprocessing_ahead_changes_nothing_but_the_thread():
    texts = _texts(list(np.random.default_rng(0).integers(1, 60, 97)))
    plan = plan_evaluation(_data(texts), 8, seed=2)
    inline, ahead = TextLookup("m", _table()), TextLookup("m", _table(), delay=0.002)
    e0 = evaluate_model(inline, _data(texts), plan, prefetch=0)
    e1 = evaluate_model(ahead, _data(texts), plan, prefetch=3)
    assert inline.seen == ahead.seen == [[texts[i] for i in batch] for batch in plan]
    assert inline.threads == {threading.current_thread().name} and ahead.threads == {"h2h-preprocess"}
    np.testing.assert_array_equal(e0.proba, e1.proba)
    np.testing.assert_array_equal(e0.pred, e1.pred)
    # rows line up with plan.order: example i's probabilities come from the table at its length
    expected = torch.softmax(torch.as_tensor(_table()[[len(texts[i]) for i in plan.order]]), 1).numpy()
    np.testing.assert_allclose(e1.proba, expected, atol=1e-6)


def test_a_preprocessing_error_reaches_the_caller_and_stops_the_thread():
    class Failing(TextLookup):
        def preprocess(self, examples):
            if len(self.seen) == 2:
                raise ModelError("model 'm': example 0 of the batch is int 3, expected a string")
            return super().preprocess(examples)

    texts = _texts(list(range(1, 41)))
    before = threading.active_count()
    with pytest.raises(ModelError, match="expected a string"):
        evaluate_model(Failing("m", _table()), _data(texts), plan_batches(40, 4), prefetch=2)
    assert threading.active_count() == before


def test_predictions_equal_each_example_evaluated_alone(tmp_path, one_torch_thread):
    from headtohead.testing.text import make_tiny_bert

    rng = np.random.default_rng(0)
    words = ["good", "bad", "film", "plot", "dull", "great", "acting", "very", "not", "a", "the", "story"]
    texts = [" ".join(rng.choice(words, rng.integers(1, 25))) for _ in range(120)]
    folder = make_tiny_bert(tmp_path / "bert", LABELS, texts=texts, seed=3)
    config = model_settings(name="bert", kind="transformers", source=str(folder), max_length=64)
    context = LoadContext(LABELS, "text", base_dir=tmp_path)
    adapter, data = create_adapter(config, context), _data(texts)
    batched = evaluate_model(adapter, data, plan_evaluation(data, 16, seed=0, models=[config], context=context))
    alone = evaluate_model(adapter, data, plan_batches(len(data), 1))  # no padding at all
    proba = np.empty_like(batched.proba)
    proba[plan_evaluation(data, 16, seed=0, models=[config], context=context).order] = batched.proba
    np.testing.assert_allclose(proba, alone.proba, atol=1e-5)
    assert (proba.argmax(1) == alone.pred).all()


def test_image_workers_give_what_the_thread_gives(tmp_path, one_torch_thread):
    from headtohead.config.schema import DataConfig
    from headtohead.data import create_dataset
    from headtohead.testing.data import make_image_folder

    root = make_image_folder(tmp_path / "img", ("a", "b"), n_per_class=9, size=(20, 14))
    data = create_dataset(DataConfig(path=str(root)), seed=0).eval
    config = model_settings(name="net", kind="timm", source="test_resnet", image_size=32)
    adapter = create_adapter(config, LoadContext(data.label_names, "image"))
    plan = plan_batches(len(data), 4)
    in_thread = evaluate_model(adapter, data, plan, workers=0)
    in_workers = evaluate_model(adapter, data, plan, workers=1)
    np.testing.assert_array_equal(in_thread.proba, in_workers.proba)


# -- CUDA transfers on the fake GPU --------------------------------------------------------
def test_cuda_path_copies_on_a_side_stream_and_waits_only_at_the_end():
    texts = _texts(list(np.random.default_rng(1).integers(1, 60, 45)))
    data, plan = _data(texts), plan_evaluation(_data(texts), 4, seed=0)
    reference = evaluate_model(TextLookup("m", _table()), data, plan)
    backend = FakeCudaBackend()
    with use_backend(backend):
        model = FakeGpuLookup("m", _table(), lambda: backend.transfers[-1])
        on_gpu = evaluate_model(model, data, plan)
    streams = backend.transfers[-1]
    np.testing.assert_array_equal(on_gpu.proba, reference.proba)
    assert model.moved == [("side", True)] * len(plan)  # pinned, then copied on the side stream
    assert streams.count("pin") == len(plan)
    # the compute stream waits on each batch's own copy event, right before its forward pass …
    log = [entry for entry in streams.log if entry[0] in ("record", "compute waits", "forward", "moved")]
    forwards = [i for i, (op, _) in enumerate(log) if op == "forward"]
    for batch, at in enumerate(forwards):
        waited = log[at - 1]
        assert waited[0] == "compute waits"
        recorded = [i for i, entry in enumerate(log) if entry == ("record", waited[1])][0]
        assert log[recorded - 1] == ("moved", len(list(plan)[batch]))
    # … the next batch is already on its way while this one computes …
    assert [op for op, _ in log[:4]] == ["moved", "record", "moved", "record"]
    # … and the host waits once, for the one copy of all scores back (45 × 2 floats).
    assert streams.count("host waits") == 1 and backend.sync_calls == []
    assert streams.count("used on compute") == len(plan) and streams.count("used on side") == 1


def test_scores_come_back_in_few_large_copies():
    backend = FakeCudaBackend()
    streams = backend.transfer_streams("cuda:0")
    collector = ScoreCollector(100, streams, flush_elements=60)  # a copy every 30 rows of 2 scores
    rows = torch.arange(200, dtype=torch.float32).reshape(100, 2)
    for start in range(0, 100, 10):
        collector.add(rows[start : start + 10])
    assert collector.host_copies == 3 and streams.count("host waits") == 0  # nothing waited for yet
    np.testing.assert_array_equal(collector.result(), rows.numpy())
    assert collector.host_copies == 4 and streams.count("host waits") == 4


def test_overlap_only_where_a_core_is_spare(monkeypatch):
    from headtohead.engines import prefetch

    texts = _texts(list(range(1, 30)))
    monkeypatch.setattr(prefetch, "available_cores", lambda: 2)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)  # both cores compute: a thread beside them would only preempt them
        busy = TextLookup("m", _table())
        evaluate_model(busy, _data(texts), plan_batches(29, 4))
        torch.set_num_threads(1)
        spare = TextLookup("m", _table())
        evaluate_model(spare, _data(texts), plan_batches(29, 4))
    finally:
        torch.set_num_threads(before)
    assert busy.threads == {threading.current_thread().name} and spare.threads == {"h2h-preprocess"}
    assert busy.seen == spare.seen


def test_predictions_go_back_to_dataset_order():
    from headtohead.results.predictions import Predictions

    order = np.array([2, 0, 3, 1])
    saved = Predictions(order, np.array([1, 0, 1, 0]), LABELS)
    saved.add("m", np.array([1, 1, 0, 0]), np.array([[0.1, 0.9], [0.2, 0.8], [0.7, 0.3], [0.6, 0.4]]))
    mine = saved.in_dataset_order("m")
    assert mine.pred.tolist() == [1, 0, 1, 0]  # example 0 was row 1, example 1 row 3 …
    np.testing.assert_allclose(mine.proba[:, 1], [0.8, 0.4, 0.9, 0.3])
