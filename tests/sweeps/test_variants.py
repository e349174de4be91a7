"""Variants behind the adapter interface: int8, bf16, pruning, truncation, NHWC, torch.compile, and the
reasons a variant cannot be built — on a tiny BERT, a tiny CNN and a tiny MLP."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from headtohead.adapters import LoadContext, create_adapter
from headtohead.config.schema import model_settings
from headtohead.data.base import Dataset
from headtohead.engines.batching import plan_batches
from headtohead.engines.evaluate import evaluate_model
from headtohead.errors import ModelError
from headtohead.sweeps.grid import VariantSpec
from headtohead.sweeps.transforms import VariantError, state_numbers
from headtohead.sweeps.variants import BuildOptions, VariantAdapter, build_variant
from headtohead.testing.data import make_text_rows
from headtohead.testing.text import make_tiny_bert

LABELS = ("negative", "positive")


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    folder = make_tiny_bert(tmp_path_factory.mktemp("variants") / "bert", LABELS, max_position_embeddings=64)
    return create_adapter(
        model_settings(name="bert", kind="transformers", source=str(folder), max_length=32),
        LoadContext(label_names=LABELS, modality="text"),
    )


@pytest.fixture(scope="module")
def texts() -> Dataset:
    rows = make_text_rows(12, seed=5)
    return Dataset("rows", "text", [r["text"] for r in rows], [LABELS.index(r["label"]) for r in rows], LABELS)


def options(tmp_path, batches=()) -> BuildOptions:
    return BuildOptions(workdir=tmp_path, check_batches=[list(b) for b in batches], threads=1)


def parent_spec(adapter) -> VariantSpec:
    return VariantSpec(max_length=getattr(adapter, "max_length", None))


def build(adapter, tmp_path, **changes) -> VariantAdapter:
    spec = parent_spec(adapter)
    target = VariantSpec(**{**spec.__dict__, **changes})
    return build_variant(adapter, target, spec, name=f"{adapter.name}[x]", options=options(tmp_path))


def weights(module) -> list[torch.Tensor]:
    return [m.weight.detach().clone() for m in module.modules() if isinstance(m, torch.nn.Linear)]


def test_int8_quantises_a_copy_and_stays_close(bert, texts, tmp_path):
    before = weights(bert.module)
    int8 = build(bert, tmp_path, precision="int8")
    assert isinstance(int8, VariantAdapter) and int8.name == "bert[x]" and int8.label_names == LABELS
    kinds = {type(m).__module__ for m in int8.module.modules()}
    assert any("quantized" in k for k in kinds)
    assert all(torch.equal(a, b) for a, b in zip(before, weights(bert.module)))  # the parent is untouched
    assert any("torch.ao.quantization.quantize_dynamic" in note for note in int8.notes)
    # packed int8 weights count (they are not Parameters), and they are smaller than fp32
    assert state_numbers(int8.module)[1] < bert.parameter_bytes() and int8.num_parameters() > 0
    plan = plan_batches(len(texts), 8)
    a, b = evaluate_model(bert, texts, plan), evaluate_model(int8, texts, plan)
    # the tiny model's weights are deliberately large (varied predictions), so int8 moves some scores:
    # by a median of 0.01-0.05 here, depending on the thread count and the quantized kernels chosen
    assert (a.pred == b.pred).mean() >= 0.75 and np.median(np.abs(a.proba - b.proba)) < 0.1


def test_bf16_runs_under_autocast_and_truncation_is_the_variants_own(bert, tmp_path):
    bf16 = build(bert, tmp_path, precision="bf16")
    assert bf16.module is bert.module  # autocast needs no copy
    logits = bf16.forward(bf16.to_device(bf16.preprocess(["a good film", "a bad film"])))
    assert logits.dtype == torch.bfloat16 and logits.shape == (2, 2)
    assert bert.forward(bert.preprocess(["a good film"])).dtype == torch.float32
    short = build(bert, tmp_path, max_length=4)
    assert short.max_length == 4 and bert.max_length == 32
    assert short.preprocess(["a good film with a long tail of words"])["input_ids"].shape[1] == 4
    with pytest.raises(VariantError) as info:
        build(bert, tmp_path, max_length=500)
    assert info.value.stage == "capability" and "beyond what model 'bert' can read (64 positions)" in info.value.reason


def test_pruning_zeroes_a_copy(bert, tmp_path):
    sparse = build(bert, tmp_path, sparsity=0.5)
    zeros = [float((w == 0).float().mean()) for w in weights(sparse.module)]
    assert all(0.45 <= z <= 0.55 for z in zeros)
    assert all(float((w == 0).float().mean()) < 0.01 for w in weights(bert.module))
    assert "Linear/Conv weights are zero (50.0%)" in sparse.notes[0]


def test_unavailable_variants_give_their_reason(bert, tmp_path):
    with pytest.raises(VariantError, match="fp16 autocast runs on CUDA here, not on cpu") as info:
        build(bert, tmp_path, precision="fp16")
    assert info.value.stage == "capability"
    with pytest.raises(VariantError, match="bf16 is not available with the onnxruntime backend"):
        build(bert, tmp_path, backend="onnxruntime", precision="bf16")
    with pytest.raises(ModelError, match="variants are built by h2h sweep"):
        VariantAdapter.load(bert.config, bert.context)
    callable_model = create_adapter(
        model_settings(
            name="words",
            kind="python",
            source="headtohead.testing.models:keyword_classifier",
            model_args={"keywords": {"negative": ["bad"], "positive": ["good"]}},
            outputs="probabilities",
        ),
        LoadContext(label_names=LABELS, modality="text"),
    )
    with pytest.raises(VariantError, match="has no PyTorch module; only batch_size, max_length"):
        build(callable_model, tmp_path, precision="int8")


def test_channels_last_image_variant_matches_its_parent(tmp_path):
    from headtohead.testing.data import make_image_folder

    folder = make_image_folder(tmp_path / "images", n_per_class=2, size=24)
    images = [str(p) for p in sorted(folder.rglob("*.png"))]
    cnn = create_adapter(
        model_settings(
            name="cnn", kind="python", source="headtohead.testing.models:tiny_cnn", model_args={"n_classes": 2}
        ),
        LoadContext(label_names=("a", "b"), modality="image"),
    )
    nhwc = build(cnn, tmp_path, channels_last=True)
    batch = nhwc.to_device(nhwc.preprocess(images))
    assert batch.is_contiguous(memory_format=torch.channels_last)
    assert nhwc.module is not cnn.module
    assert next(cnn.module.parameters()).is_contiguous()  # the parent keeps its layout
    torch.testing.assert_close(nhwc.forward(batch), cnn.forward(cnn.preprocess(images)), atol=1e-5, rtol=1e-5)


def test_onnx_variant_of_a_feature_model_is_checked_and_quantised(tmp_path):
    mlp = create_adapter(
        model_settings(
            name="mlp",
            kind="python",
            source="headtohead.testing.models:tiny_mlp",
            model_args={"n_features": 4, "n_classes": 3},
        ),
        LoadContext(label_names=("a", "b", "c"), modality="features"),
    )
    rows = np.random.default_rng(0).normal(size=(9, 4)).astype(np.float32)
    opts = options(tmp_path, batches=[rows[:4], rows[4:5], rows[5:]])
    spec = VariantSpec()
    ort = build_variant(mlp, VariantSpec(backend="onnxruntime"), spec, name="mlp[onnxruntime]", options=opts)
    assert ort.session is not None and ort.module is None and ort.device == "cpu"
    assert any("ONNX check: max |Δlogit|" in n for n in ort.notes)
    np.testing.assert_allclose(
        ort.forward(ort.to_device(ort.preprocess(rows))), mlp.forward(mlp.preprocess(rows)).numpy(), atol=1e-5
    )
    int8 = build_variant(
        mlp, VariantSpec(backend="onnxruntime", precision="int8"), spec, name="mlp[onnxruntime,int8]", options=opts
    )
    assert len(opts.exports) == 1 and len(opts.quantized) == 1  # one export shared, quantised once
    assert int8.forward(int8.to_device(int8.preprocess(rows))).shape == (9, 3)


@pytest.mark.slow
def test_compiled_variant_predicts_like_its_parent(tmp_path):
    mlp = create_adapter(
        model_settings(
            name="mlp",
            kind="python",
            source="headtohead.testing.models:tiny_mlp",
            model_args={"n_features": 4, "n_classes": 3},
        ),
        LoadContext(label_names=("a", "b", "c"), modality="features"),
    )
    compiled = build(mlp, tmp_path, compile=True)
    rows = np.random.default_rng(1).normal(size=(6, 4)).astype(np.float32)
    torch.testing.assert_close(
        compiled.forward(compiled.preprocess(rows)), mlp.forward(mlp.preprocess(rows)), atol=1e-5, rtol=1e-5
    )
    assert "torch.compile" in compiled.notes[0]
