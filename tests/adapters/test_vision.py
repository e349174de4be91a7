"""timm and torchvision adapters, and the safe checkpoint I/O they share (weights.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from headtohead.adapters import LoadContext, create_adapter
from headtohead.adapters.weights import (
    read_checkpoint,
    read_checkpoint_extra,
    read_checkpoint_labels,
    save_checkpoint,
    unwrap_state_dict,
)
from headtohead.config.schema import model_settings
from headtohead.errors import ModelError

LABELS = ("cat", "dog", "fox")
CONTEXT = LoadContext(label_names=LABELS, modality="image")


def _images(n: int = 4) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    # Different sizes and a grey one: the transforms must bring them all to one shape.
    shapes = [(40, 30, 3), (24, 24, 3), (33, 50), (64, 64, 3)]
    return [rng.integers(0, 256, shapes[i % 4], dtype=np.uint8) for i in range(n)]


def _timm(**overrides) -> object:
    fields = {"name": "net", "kind": "timm", "source": "test_resnet", "image_size": 32, **overrides}
    return create_adapter(model_settings(**fields), CONTEXT)


@pytest.fixture(scope="module")
def timm_model():
    return _timm()


@pytest.fixture(scope="module")
def batch(timm_model):
    return timm_model.preprocess(_images())


# -- timm --------------------------------------------------------------------------


def test_timm_random_init_builds_head_for_dataset(timm_model, batch):
    assert batch.shape == (4, 3, 32, 32) and batch.dtype == torch.float32
    logits = timm_model.forward(batch)
    assert logits.shape == (4, 3)
    assert timm_model.label_names == LABELS
    assert not timm_model.module.training
    assert timm_model.output_kind == "logits"
    assert any("random weights" in w for w in timm_model.warnings)
    assert timm_model.num_parameters() == sum(p.numel() for p in timm_model.module.parameters()) > 0


def test_timm_transform_follows_model_data_config():
    import timm
    from timm.data import resolve_data_config

    adapter = _timm(image_size=None)
    expected = resolve_data_config({}, model=timm.create_model("test_resnet", num_classes=3))["input_size"]
    assert tuple(adapter.preprocess(_images(1)).shape[1:]) == expected


def test_timm_init_is_seeded(batch, timm_model):
    again = _timm()
    other_seed = create_adapter(
        model_settings(name="n", kind="timm", source="test_resnet", image_size=32),
        LoadContext(label_names=LABELS, modality="image", seed=7),
    )
    assert torch.equal(again.forward(batch), timm_model.forward(batch))
    assert not torch.equal(other_seed.forward(batch), timm_model.forward(batch))


def test_save_checkpoint_roundtrip_gives_identical_logits_and_labels(tmp_path, timm_model, batch):
    path = save_checkpoint(
        timm_model.module, tmp_path / "net.safetensors", label_names=["fox", "cat", "dog"], extra={"epochs": 3}
    )
    assert read_checkpoint_labels(path) == ("fox", "cat", "dog")
    assert read_checkpoint_extra(path) == {"epochs": 3}
    reloaded = create_adapter(
        model_settings(name="re", kind="timm", source="test_resnet", image_size=32, checkpoint="net.safetensors"),
        LoadContext(label_names=LABELS, modality="image", base_dir=tmp_path, seed=99),
    )
    assert torch.equal(reloaded.forward(batch), timm_model.forward(batch))
    assert reloaded.label_names == ("fox", "cat", "dog")
    assert reloaded.warnings == []


def test_checkpoint_with_other_class_count_rebuilds_head(tmp_path, batch):
    import timm

    five = timm.create_model("test_resnet", num_classes=5)
    save_checkpoint(five, tmp_path / "five.safetensors", label_names=list("abcde"))
    torch.save(five.state_dict(), tmp_path / "five.pt")
    named = _timm(checkpoint=str(tmp_path / "five.safetensors"))
    unnamed = _timm(checkpoint=str(tmp_path / "five.pt"))
    assert named.forward(batch).shape == (4, 5) and named.label_names == tuple("abcde")
    # Five outputs for a three-class dataset and no names: unknown, never the dataset's.
    assert unnamed.label_names is None
    assert torch.allclose(unnamed.forward(batch), named.forward(batch))


def test_torch_state_dict_and_wrappers_load_with_weights_only(tmp_path, timm_model, batch):
    state = timm_model.module.state_dict()
    torch.save(state, tmp_path / "plain.pt")
    torch.save({"epoch": 4, "state_dict": {f"module.{k}": v for k, v in state.items()}}, tmp_path / "ddp.pth")
    torch.save({"model": state, "label_names": ["a", "b", "c"]}, tmp_path / "wrapped.bin")
    expected = timm_model.forward(batch)
    for name in ("plain.pt", "ddp.pth", "wrapped.bin"):
        adapter = _timm(checkpoint=str(tmp_path / name))
        assert torch.equal(adapter.forward(batch), expected), name
    assert _timm(checkpoint=str(tmp_path / "wrapped.bin")).label_names == ("a", "b", "c")


def test_full_pickled_module_needs_allow_pickle(tmp_path, timm_model, batch):
    torch.save(timm_model.module, tmp_path / "whole.pt")
    with pytest.raises(ModelError, match=r"arbitrary code, so set allow_pickle: true only if you trust") as err:
        _timm(checkpoint=str(tmp_path / "whole.pt"))
    assert "timm.models.resnet.ResNet" in str(err.value) and "\n" not in str(err.value)
    trusted = _timm(checkpoint=str(tmp_path / "whole.pt"), allow_pickle=True)
    assert torch.equal(trusted.forward(batch), timm_model.forward(batch))


def test_damaged_and_missing_checkpoints_are_model_errors(tmp_path, timm_model):
    path = save_checkpoint(timm_model.module, tmp_path / "full.safetensors")
    data = path.read_bytes()
    (tmp_path / "cut.safetensors").write_bytes(data[: len(data) // 2])
    (tmp_path / "junk.pt").write_bytes(b"this is not a checkpoint at all")
    with pytest.raises(ModelError, match="corrupt or truncated"):
        _timm(checkpoint=str(tmp_path / "cut.safetensors"))
    with pytest.raises(ModelError, match="corrupt"):
        _timm(checkpoint=str(tmp_path / "junk.pt"))
    with pytest.raises(ModelError, match="not found"):
        _timm(checkpoint=str(tmp_path / "absent.safetensors"))


def test_checkpoint_of_another_architecture_names_keys(tmp_path, timm_model):
    import timm

    save_checkpoint(timm.create_model("test_efficientnet", num_classes=3), tmp_path / "eff.safetensors")
    with pytest.raises(ModelError, match=r"does not fit architecture 'ResNet': \d+ missing keys \(conv1") as err:
        _timm(checkpoint=str(tmp_path / "eff.safetensors"))
    assert re.search(r"\d+ unexpected keys \(blocks\.", str(err.value))
    state = dict(timm_model.module.state_dict())
    state["conv1.0.weight"] = torch.zeros(8, 3, 5, 5)
    save_checkpoint(state, tmp_path / "reshaped.safetensors")
    with pytest.raises(ModelError, match=r"1 shape mismatches \(conv1.0.weight: checkpoint \(8, 3, 5, 5\) vs model"):
        _timm(checkpoint=str(tmp_path / "reshaped.safetensors"))


def test_unknown_timm_architecture_suggests_a_name():
    with pytest.raises(ModelError, match="timm has no architecture 'resnet10x' — did you mean resnet10t"):
        _timm(source="resnet10x")


def test_timm_bad_model_args_and_label_count():
    with pytest.raises(ModelError, match=r"does not accept model_args \['no_such_arg'\]"):
        _timm(model_args={"no_such_arg": 1})
    with pytest.raises(ModelError, match="label_names .* gives 2 names but the model has 3 outputs"):
        _timm(label_names=["x", "y"], model_args={"num_classes": 3})


def test_pretrained_offline_fails_fast(monkeypatch, waits):
    with pytest.raises(ModelError, match="not available offline"):
        _timm(pretrained=True)  # HF_HUB_OFFLINE=1 (conftest)
    # Without the flag, an unreachable hub is detected before the download retries begin.
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "0")  # one offline rule for every family (headtohead.runtime.offline)
    monkeypatch.setattr("headtohead.adapters.timm_models.reachable", lambda url: False)
    with pytest.raises(ModelError, match="cannot be reached"):
        _timm(pretrained=True)
    assert waits.none()  # no back-off, no connection: it fails at once however loaded the machine is


def test_image_paths_are_read(tmp_path, timm_model):
    from PIL import Image

    Image.fromarray(_images(1)[0]).save(tmp_path / "a.png")
    assert timm_model.preprocess([str(tmp_path / "a.png")]).shape == (1, 3, 32, 32)


# -- torchvision -------------------------------------------------------------------


def _tv(**overrides) -> object:
    fields = {"name": "tv", "kind": "torchvision", "source": "resnet18", "image_size": 32, **overrides}
    return create_adapter(model_settings(**fields), CONTEXT)


def test_torchvision_resnet18_forward_shape_and_roundtrip(tmp_path):
    adapter = _tv()
    batch = adapter.preprocess(_images())
    assert batch.shape == (4, 3, 32, 32)
    logits = adapter.forward(batch)
    assert logits.shape == (4, 3) and adapter.label_names == LABELS
    save_checkpoint(adapter.module, tmp_path / "r18.safetensors", label_names=LABELS)
    assert torch.equal(_tv(checkpoint=str(tmp_path / "r18.safetensors")).forward(batch), logits)


def test_torchvision_unknown_and_non_classifier_names():
    with pytest.raises(ModelError, match="no classification model 'resnet19' — did you mean resnet18"):
        _tv(source="resnet19")
    with pytest.raises(ModelError, match="not an image classifier"):
        _tv(source="fasterrcnn_resnet50_fpn")


def test_torchvision_pretrained_offline_is_model_error():
    with pytest.raises(ModelError, match="not available offline"):
        _tv(pretrained=True)


@pytest.fixture
def fake_resnet18_weights(monkeypatch):
    """Stand-in ImageNet weights (random, 1000 classes) so the pretrained paths run offline."""
    import torchvision

    weights = torchvision.models.ResNet18_Weights.DEFAULT
    torch.manual_seed(1)
    state = torchvision.models.resnet18(num_classes=1000).state_dict()
    monkeypatch.setattr(type(weights), "get_state_dict", lambda self, *a, **k: state)
    monkeypatch.setattr(
        "headtohead.adapters.torchvision_models.TorchvisionAdapter._download", lambda self, fetch: fetch()
    )
    return state


def test_torchvision_pretrained_backbone_gets_new_head(fake_resnet18_weights):
    adapter = _tv(pretrained=True)
    own = adapter.module.state_dict()
    assert torch.equal(own["layer1.0.conv1.weight"], fake_resnet18_weights["layer1.0.conv1.weight"])
    assert own["fc.weight"].shape == (3, 512)
    assert adapter.label_names == LABELS
    assert any("new, randomly initialised 3-class head" in w for w in adapter.warnings)
    assert adapter.preprocess(_images(1)).shape == (1, 3, 32, 32)  # the weights' transform, resized


def test_torchvision_pretrained_head_kept_with_its_categories(fake_resnet18_weights):
    context = LoadContext(label_names=tuple(f"c{i}" for i in range(1000)), modality="image")
    adapter = create_adapter(model_settings(name="tv", kind="torchvision", source="resnet18", pretrained=True), context)
    assert torch.equal(adapter.module.state_dict()["fc.weight"], fake_resnet18_weights["fc.weight"])
    assert adapter.label_names[:2] == ("tench", "goldfish") and adapter.warnings == []
    # No image_size: the weights' own transform crops to 224.
    assert adapter.preprocess(_images(1)).shape == (1, 3, 224, 224)


# -- weights.py helpers ------------------------------------------------------------


def test_unwrap_state_dict_refuses_objects_without_tensors():
    with pytest.raises(ModelError, match="no tensors found"):
        unwrap_state_dict({"epoch": 3, "config": {"lr": 0.1}}, source="x.pt")
    compiled = unwrap_state_dict({"_orig_mod.fc.weight": torch.zeros(1)})
    assert list(compiled) == ["fc.weight"]


def test_save_checkpoint_stores_tied_weights_and_refuses_other_suffixes(tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 2))
    model[1].weight = model[0].weight  # tied
    path = save_checkpoint(model, tmp_path / "tied.safetensors")
    loaded = read_checkpoint(path, model="m")
    assert set(loaded.state_dict) == set(model.state_dict()) and loaded.label_names is None
    with pytest.raises(ModelError, match="ending in .safetensors"):
        save_checkpoint(model, tmp_path / "tied.pt")
