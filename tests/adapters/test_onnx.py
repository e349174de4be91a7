"""``kind: onnx`` (ONNX Runtime) and the export path: a tiny BERT and a tiny CNN exported with the dynamo
exporter, read back through the adapter, checked against PyTorch, quantised to int8."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from headtohead.adapters import ADAPTERS, LoadContext, create_adapter
from headtohead.config.schema import MODEL_KINDS, ModelConfig, model_settings
from headtohead.data.base import Dataset
from headtohead.engines.batching import plan_batches
from headtohead.engines.evaluate import evaluate_model
from headtohead.errors import ModelError
from headtohead.testing.data import make_image_folder, make_text_rows
from headtohead.testing.models import tiny_cnn
from headtohead.testing.text import make_tiny_bert

LABELS = ("negative", "positive")


@pytest.fixture(scope="module")
def text_data() -> Dataset:
    rows = make_text_rows(10, seed=3)
    return Dataset("rows", "text", [r["text"] for r in rows], [LABELS.index(r["label"]) for r in rows], LABELS)


@pytest.fixture(scope="module")
def bert(tmp_path_factory, text_data):
    """A tiny BERT, its transformers adapter, and its ONNX export (one export for the whole module)."""
    from headtohead.sweeps.onnx_export import export_onnx

    root = tmp_path_factory.mktemp("onnx-bert")
    folder = make_tiny_bert(root / "bert", LABELS)
    context = LoadContext(label_names=LABELS, modality="text")
    torch_adapter = create_adapter(
        model_settings(name="pt", kind="transformers", source=str(folder), max_length=32), context
    )
    example = torch_adapter.preprocess(list(text_data.examples[:3]))
    path = export_onnx(torch_adapter.module, example, root / "bert.onnx", label_names=LABELS)
    return folder, path, torch_adapter, context


def onnx_config(path, **kw) -> ModelConfig:
    return model_settings(name="ort", kind="onnx", source=str(path), **kw)


def test_onnx_kind_is_registered():
    assert "onnx" in MODEL_KINDS and ADAPTERS["onnx"].endswith(":OnnxRuntimeAdapter")


def test_exported_bert_predicts_like_pytorch_through_the_engine(bert, text_data):
    folder, path, torch_adapter, context = bert
    ort = create_adapter(onnx_config(path, tokenizer=str(folder), max_length=32), context)
    assert ort.label_names == LABELS  # read from the file's metadata
    plan = plan_batches(len(text_data), 7)  # other batch sizes and lengths than the export example
    a, b = evaluate_model(torch_adapter, text_data, plan), evaluate_model(ort, text_data, plan)
    assert a.alignment.how == b.alignment.how == "identical"
    np.testing.assert_allclose(b.proba, a.proba, atol=1e-5)
    assert (a.pred == b.pred).all()
    torch_params = torch_adapter.num_parameters()
    assert 0.9 * torch_params < ort.num_parameters() < 1.1 * torch_params and ort.parameter_bytes() > 0
    short = create_adapter(onnx_config(path, tokenizer=str(folder), max_length=5), context)
    assert short.preprocess(["a rather long sentence with many more words than five"])["input_ids"].shape[1] == 5


def test_text_pairs_and_the_feed_fill_token_types(bert):
    from headtohead.adapters.onnx_runtime import session_feed

    folder, path, _, _ = bert
    pairs = create_adapter(
        onnx_config(path, tokenizer=str(folder)), LoadContext(label_names=LABELS, modality="text_pair")
    )
    scores = pairs.forward(pairs.to_device(pairs.preprocess([("a film", "it was good"), ("dull", "bad")])))
    assert scores.shape == (2, 2)
    feed = session_feed(
        pairs.session, {"input_ids": np.ones((2, 4), np.int32), "attention_mask": np.ones((2, 4))}, model="ort"
    )
    assert feed["token_type_ids"].dtype == np.int64 and not feed["token_type_ids"].any()
    assert feed["attention_mask"].dtype == np.int64
    with pytest.raises(ModelError, match="the ONNX graph needs input 'input_ids'"):
        session_feed(pairs.session, {"pixel_values": np.zeros((1, 3))}, model="ort")


@pytest.mark.parametrize(
    "change, fragment",
    [
        ({"source": "missing.onnx"}, "not found"),
        ({"source": "weights.bin"}, "is not an .onnx file"),
        ({"tokenizer": None}, "needs its tokenizer"),
        ({"tokenizer": "no-such-folder"}, "tokenizer folder"),
        ({"source": "garbage.onnx"}, "ONNX Runtime cannot load"),
        ({"max_length": 100000}, "beyond its tokenizer's limit"),
    ],
)
def test_bad_onnx_configs_are_one_line_model_errors(bert, tmp_path, change, fragment):
    folder, path, _, _ = bert
    (tmp_path / "weights.bin").write_bytes(b"\0")
    (tmp_path / "garbage.onnx").write_bytes(b"not a protobuf at all")
    fields = {"source": str(path), "tokenizer": str(folder), **change}
    context = LoadContext(label_names=LABELS, modality="text", base_dir=tmp_path)
    with pytest.raises(ModelError) as info:
        create_adapter(model_settings(name="ort", kind="onnx", **fields), context)
    assert fragment in str(info.value) and "'ort'" in str(info.value) and "\n" not in str(info.value)


def test_mismatch_is_detected_and_int8_quantisation_runs(bert, tmp_path, text_data):
    from headtohead.adapters.onnx_runtime import create_session
    from headtohead.sweeps.onnx_export import check_against_torch, quantize_onnx_int8

    _, path, torch_adapter, _ = bert
    session = create_session(path, device="cpu", model="ort", threads=1)
    batches = [torch_adapter.preprocess(list(text_data.examples[i : i + n])) for i, n in ((0, 4), (4, 1), (5, 9))]
    good = check_against_torch(session, torch_adapter.forward, batches, atol=1e-4, rtol=1e-4, model="ort")
    assert good.passed and good.max_abs_diff < 1e-4 and good.n_batches == 3 and len(set(good.shapes)) == 3
    bad = check_against_torch(
        session, lambda b: torch_adapter.forward(b) + 0.5, batches, atol=1e-4, rtol=1e-4, model="ort"
    )
    assert not bad.passed and "MISMATCH, not measured" in bad.summary()
    quantized = quantize_onnx_int8(path, tmp_path / "int8.onnx")
    ops = {node.op_type for node in onnx.load(str(quantized)).graph.node}
    assert {"MatMulInteger", "DynamicQuantizeLinear"} <= ops
    int8 = create_session(quantized, device="cpu", model="ort")
    out = int8.run(None, {k: v.numpy() for k, v in batches[0].items()})[0]
    assert out.shape == (4, 2) and np.isfinite(out).all()


def test_exported_image_model_with_its_own_normalisation(tmp_path):
    import torch

    from headtohead.config.schema import DataConfig
    from headtohead.data.images import load_image_folder
    from headtohead.sweeps.onnx_export import export_onnx

    module = tiny_cnn(2).eval()
    path = export_onnx(module, torch.randn(2, 3, 32, 32), tmp_path / "cnn.onnx")
    data = load_image_folder(
        str(make_image_folder(tmp_path / "images", n_per_class=3, size=40)), DataConfig(path=str(tmp_path / "images"))
    )
    context = LoadContext(label_names=data.label_names, modality="image")
    mean, std = [0.5, 0.5, 0.5], [0.25, 0.25, 0.25]
    adapter = create_adapter(onnx_config(path, mean=mean, std=std), context)
    assert adapter.label_names is None  # no names in the file: the engine assumes dataset order and says so
    batch = adapter.preprocess(list(data.examples[:4]))
    assert batch.shape == (4, 3, 32, 32) and batch.dtype == np.float32  # the graph's fixed size
    with torch.inference_mode():
        expected = module(torch.from_numpy(batch)).numpy()
    np.testing.assert_allclose(adapter.forward(adapter.to_device(batch)), expected, atol=1e-5)
    result = evaluate_model(adapter, data, plan_batches(len(data), 4))
    assert result.alignment.how == "unnamed" and adapter.warnings
    with pytest.raises(ModelError, match="does not fit the graph's fixed input of 32×32"):
        create_adapter(onnx_config(path, image_size=64), context)
    with pytest.raises(ModelError, match="one value per channel"):
        create_adapter(onnx_config(path, mean=[0.5], std=[0.2, 0.2, 0.2]), context)
