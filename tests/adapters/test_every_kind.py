"""The families' contract: every registered kind loads a tiny instance, predicts, and its labels line up with the data.

Each kind's tiny instance is made here on the fly (a new family adds one maker; a kind without
one fails). A kind is skipped only when its extra is not installed, and the skip says which.
Where the instance is built to know the answers (stored predictions, a keyword rule, a separable
estimator, a server that reads the label off the text), every prediction must be right, in the
data's label order, although the model lists its labels in another order.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from headtohead.adapters import LoadContext, create_adapter
from headtohead.adapters.prediction_files import write_prediction_file
from headtohead.config.models import FAMILIES, MODEL_KINDS, model_settings
from headtohead.config.models.prompting import PromptSettings
from headtohead.data.base import Dataset
from headtohead.engines.batching import plan_batches
from headtohead.engines.evaluate import evaluate_model
from headtohead.errors import ModelError
from headtohead.runtime.extras import installed
from headtohead.testing.chat_server import Reply, ScriptedChatServer, last_prompt_text

LABELS = ("negative", "positive")
N = 12

Made = tuple[dict[str, Any], Dataset, bool]  # the entry's keys, the data, whether every answer must be right


def _text() -> Dataset:
    labels = np.arange(N) % 2
    texts = [f"a {'good' if k else 'bad'} film, take {i}" for i, k in enumerate(labels)]
    return Dataset("mem", "text", texts, labels, LABELS, ids=tuple(f"ex{i}" for i in range(N)))


def _images() -> Dataset:
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 256, (24, 24, 3), dtype=np.uint8) for _ in range(4)]
    return Dataset("mem", "image", images, np.arange(4) % 2, LABELS)


def _predictions(tmp: Path, stack: contextlib.ExitStack) -> Made:
    data = _text()
    write_prediction_file(tmp / "p.csv", data.ids, [LABELS[k] for k in data.labels], label_names=LABELS)
    return {"source": "p.csv"}, data, True


def _python(tmp: Path, stack: contextlib.ExitStack) -> Made:
    keywords = {"positive": ["good"], "negative": ["bad"]}  # the model's order is not the data's
    return (
        {"source": "headtohead.testing.models:keyword_classifier", "model_args": {"keywords": keywords}},
        _text(),
        True,
    )


def _sklearn(tmp: Path, stack: contextlib.ExitStack) -> Made:
    import joblib
    from sklearn.linear_model import LogisticRegression

    labels = np.arange(N) % 2
    features = (np.eye(2)[labels] * 4.0 + np.random.default_rng(0).normal(0, 0.1, (N, 2))).astype(np.float32)
    estimator = LogisticRegression().fit(features, np.array(LABELS)[labels])
    joblib.dump(estimator, tmp / "m.joblib")
    return {"source": "m.joblib", "allow_pickle": True}, Dataset("mem", "features", features, labels, LABELS), True


def _openai(tmp: Path, stack: contextlib.ExitStack) -> Made:
    def answer(number: int, payload: dict[str, Any]) -> Reply:
        return Reply(text="positive" if "good" in last_prompt_text(payload) else "negative")

    server = stack.enter_context(ScriptedChatServer(answer))
    return {"source": "m", "base_url": server.base_url}, _text(), True


def _transformers(tmp: Path, stack: contextlib.ExitStack) -> Made:
    from headtohead.testing.text import make_tiny_bert

    return {"source": str(make_tiny_bert(tmp / "bert", LABELS)), "max_length": 16}, _text(), False


def _onnx(tmp: Path, stack: contextlib.ExitStack) -> Made:
    from headtohead.sweeps.onnx_export import export_onnx

    bert, data = _transformers(tmp, stack)[:2]
    torch_model = create_adapter(model_settings(name="pt", kind="transformers", **bert), _context(data, tmp))
    example = torch_model.preprocess(list(data.examples[:2]))
    export_onnx(torch_model.module, example, tmp / "m.onnx", label_names=LABELS)
    return {"source": "m.onnx", "tokenizer": bert["source"], "max_length": 16}, data, False


def _causal_lm(tmp: Path, stack: contextlib.ExitStack) -> Made:
    from headtohead.testing.tiny_llm import build_tiny_llama

    return {"source": str(build_tiny_llama(tmp / "llama"))}, _text(), False


def _timm(tmp: Path, stack: contextlib.ExitStack) -> Made:
    return {"source": "test_resnet", "image_size": 32}, _images(), False


def _torchvision(tmp: Path, stack: contextlib.ExitStack) -> Made:
    return {"source": "resnet18", "image_size": 32}, _images(), False


def _lm_eval(tmp: Path, stack: contextlib.ExitStack) -> Made:
    # lm-eval's samples file of a generation task, every document right by exact_match (the format as lm-eval writes it)
    data = _text()
    data = Dataset("mem", "text", data.examples, data.labels, LABELS, ids=tuple(f"tiny/{i}" for i in range(N)))
    lines = [
        {"doc_id": i, "doc": {"text": t}, "target": "x", "arguments": {"gen_args_0": {"arg_0": t, "arg_1": {}}},
         "resps": [["x"]], "filtered_resps": ["x"], "filter": "none", "metrics": ["exact_match"],
         "doc_hash": f"h{i}", "exact_match": 1.0}
        for i, t in enumerate(data.examples)
    ]  # fmt: skip
    (tmp / "samples_tiny_2026-01-01T00-00-00.000000.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return {"source": str(tmp)}, data, True


def _inspect(tmp: Path, stack: contextlib.ExitStack) -> Made:
    from inspect_ai.log import read_eval_log

    from headtohead.testing.harness_logs import inspect_log

    log = read_eval_log(str(inspect_log(tmp / "logs", seed=0, epochs=1, samples=N)))
    # the samples the log scored right, as data whose labels are what each was right on
    kept = [s for s in log.samples if s.scores and s.scores["choice"].value == "C"]
    labels = np.array([k % 2 for k in range(len(kept))])
    data = Dataset("mem", "text", [s.input for s in kept], labels, LABELS, ids=tuple(str(s.id) for s in kept))
    return {"source": str(log.location)}, data, True


def _cascade(tmp: Path, stack: contextlib.ExitStack) -> Made:
    # built from two models of a run once they ran (tests/pipeline/test_cascade_runs.py): never loaded itself
    return {"cheap": "a", "expensive": "b", "max_drop": "1pp"}, _text(), True


TINY: dict[str, Callable[[Path, contextlib.ExitStack], Made]] = {
    "transformers": _transformers,
    "timm": _timm,
    "torchvision": _torchvision,
    "sklearn": _sklearn,
    "python": _python,
    "onnx": _onnx,
    "predictions": _predictions,
    "openai": _openai,
    "causal-lm": _causal_lm,
    "lm-eval": _lm_eval,
    "inspect": _inspect,
    "cascade": _cascade,
}


def _context(data: Dataset, tmp: Path) -> LoadContext:
    return LoadContext(label_names=data.label_names, modality=data.modality, base_dir=tmp, response_cache=False)


@pytest.fixture
def stack() -> Iterator[contextlib.ExitStack]:
    with contextlib.ExitStack() as opened:
        yield opened


@pytest.mark.parametrize("row", FAMILIES, ids=MODEL_KINDS)
def test_every_kind_loads_predicts_and_its_labels_line_up(row, tmp_path, stack, monkeypatch):
    if row.extra is not None and not installed(row.extra):
        pytest.skip(f'kind {row.kind} needs pip install "headtohead[{row.extra}]", which is not installed')
    assert row.kind in TINY, f"kind {row.kind} is registered but has no tiny instance in this test"
    monkeypatch.setenv("H2H_CACHE_DIR", str(tmp_path / "cache"))
    entry, data, knows_the_answers = TINY[row.kind](tmp_path, stack)
    if model_settings(name=row.kind, kind=row.kind, **entry).parts():  # built by the run from its parts
        with pytest.raises(ModelError, match="is built from its parts' predictions after they ran") as refused:
            create_adapter(model_settings(name=row.kind, kind=row.kind, **entry), _context(data, tmp_path))
        assert "\n" not in str(refused.value)
        return
    model = create_adapter(model_settings(name=row.kind, kind=row.kind, **entry), _context(data, tmp_path))
    plan = plan_batches(len(data), 4)
    evaluation = evaluate_model(model, data, plan, prefetch=0, workers=0)
    truth = np.asarray(data.labels)[plan.order]
    assert evaluation.pred.shape == truth.shape
    assert set(evaluation.pred.tolist()) <= set(range(len(LABELS)))  # every example answered, in the data's labels
    if knows_the_answers:
        assert evaluation.pred.tolist() == truth.tolist()
    else:  # random weights: the model's outputs are named by the data's labels, in its order
        assert tuple(model.label_names) == LABELS
    if evaluation.proba is not None:
        np.testing.assert_allclose(evaluation.proba.sum(axis=1), 1.0, rtol=1e-5)
    answers = model.answer_record()  # the hook the engine reads: every LLM family's answers, the others none
    if issubclass(row.settings, PromptSettings) or row.kind == "inspect":  # an Inspect log keeps the answers too
        assert answers is not None and sorted(answers.readings) == list(range(len(data)))
    else:
        assert answers is None


def test_every_kind_has_a_tiny_instance():
    assert set(TINY) == set(MODEL_KINDS)
