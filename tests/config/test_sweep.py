"""The sweep section, its expansion into variants, the CLI option parsing and the capability answers
(no model is loaded here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from headtohead.cli.sweep import parse_list
from headtohead.config import experiment_from_dict, load_experiment
from headtohead.config.sweep import SweepConfig, sweep_with_options
from headtohead.errors import ConfigError
from headtohead.sweeps.capabilities import backend_unsupported, is_out_of_memory, precision_unsupported
from headtohead.sweeps.grid import VariantSpec, expand_grid, native_backend, variant_name

BASE = {"data": {"path": "sklearn:iris"}, "models": [{"name": "m", "kind": "sklearn", "source": "m.skops"}]}


def test_defaults_scalars_and_the_experiment_section():
    config = SweepConfig()
    assert config.precision == ["fp32"] and config.backend == ["pytorch"] and config.batch_size is None
    assert SweepConfig(precision="int8", batch_size=8, compile=True).model_dump(
        include={"precision", "batch_size", "compile"}
    ) == {"precision": ["int8"], "batch_size": [8], "compile": [True]}
    exp = experiment_from_dict(
        {**BASE, "sweep": {"batch_size": [1, 8], "precision": ["fp32", "bf16", "int8"], "max_accuracy_drop": 0.01}}
    )
    assert exp.sweep is not None and exp.sweep.batch_size == [1, 8] and exp.sweep.max_accuracy_drop == 0.01
    assert experiment_from_dict(BASE).sweep is None


@pytest.mark.parametrize(
    "section, fragment",
    [
        ({"precision": ["fp64"]}, "precision"),
        ({"batch_size": [8, 8]}, "twice"),
        ({"batch_size": [0]}, "positive"),
        ({"sparsity": [1.0]}, "up to (not including) 1.0"),
        ({"backend": []}, "at least one value"),
        ({"max_lenght": [64]}, "max_lenght"),
    ],
)
def test_bad_sections_are_one_line_config_errors(section, fragment):
    with pytest.raises(ConfigError) as info:
        experiment_from_dict({**BASE, "sweep": section})
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_text_grid_collapses_channels_last_and_skips_impossible_combinations():
    config = SweepConfig(
        precision=["fp32", "int8"],
        backend=["pytorch", "onnxruntime"],
        compile=[False, True],
        channels_last=[False, True],
        max_length=[64, 128],
    )
    grid = expand_grid(config, model="bert", modality="text", parent_max_length=128)
    assert grid.parent == VariantSpec(max_length=128)
    assert grid.parent not in grid.variants and len(set(grid.variants)) == len(grid.variants)
    assert any("channels_last is ignored" in note for note in grid.notes)
    assert not any(v.channels_last for v in grid.variants)
    # 2 backends × 2 precisions × 2 compile × 2 lengths = 16 combinations, minus the parent;
    # the 4 compiled ONNX Runtime ones cannot exist
    assert len(grid.variants) == 11 and len(grid.skipped) == 4
    assert all(spec.backend == "onnxruntime" and spec.compile for spec, _ in grid.skipped)
    assert all("torch.compile applies to the PyTorch backend" in reason for _, reason in grid.skipped)
    names = [variant_name("bert", v, grid.parent) for v in grid.variants]
    assert "bert[int8,max_length=64]" in names and "bert[onnxruntime,int8]" in names and "bert[compile]" in names


def test_image_and_onnx_grids():
    config = SweepConfig(channels_last=[False, True], max_length=[32], backend=["pytorch", "onnxruntime"])
    grid = expand_grid(config, model="cnn", modality="image")
    assert any("max_length is ignored" in note for note in grid.notes)
    assert {variant_name("cnn", v, grid.parent) for v in grid.variants} == {"cnn[channels_last]", "cnn[onnxruntime]"}
    assert [reason for _, reason in grid.skipped] == [
        "channels_last is a PyTorch memory format; ONNX Runtime picks its own layouts"
    ]
    onnx = expand_grid(
        SweepConfig(precision=["fp32", "int8"], backend=["onnxruntime"]), model="o", modality="features", kind="onnx"
    )
    assert native_backend("onnx") == "onnxruntime" and onnx.parent.backend == "onnxruntime"
    assert [variant_name("o", v, onnx.parent) for v in onnx.variants] == ["o[int8]"]


def test_cli_lists_and_merging_with_the_section():
    assert parse_list("1, 8,32", "int", option="--batch-size") == [1, 8, 32]
    assert parse_list("0.0,0.5", "float", option="--sparsity") == [0.0, 0.5]
    assert parse_list("False,yes", "bool", option="--compile") == [False, True]
    with pytest.raises(ConfigError, match=r"--batch-size 'x' is not a valid int"):
        parse_list("1,x", "int", option="--batch-size")
    with pytest.raises(ConfigError, match=r"--compile 'maybe' is not true or false"):
        parse_list("maybe", "bool", option="--compile")
    base = SweepConfig(precision=["fp32", "int8"], max_latency_ms=50)
    merged = sweep_with_options(base, {"batch_size": [1, 8], "precision": None, "max_memory_mb": 300.0})
    assert merged.precision == ["fp32", "int8"] and merged.batch_size == [1, 8]
    assert merged.max_latency_ms == 50 and merged.max_memory_mb == 300.0
    with pytest.raises(ConfigError, match=r"^--precision: .*\(sweep.precision\)$"):
        sweep_with_options(None, {"precision": ["fp64"]})


def test_capability_answers_on_this_cpu():
    assert precision_unsupported("fp32", "cpu") is None
    assert precision_unsupported("bf16", "cpu") is None
    assert "CUDA" in precision_unsupported("fp16", "cpu")
    assert "onnxruntime backend" in precision_unsupported("bf16", "cpu", "onnxruntime")
    assert precision_unsupported("int8", "cpu", "onnxruntime") is None
    assert backend_unsupported("pytorch", "cpu") is None
    assert "unknown backend" in backend_unsupported("tensorrt", "cpu")


def test_out_of_memory_is_recognised_in_its_forms():
    assert is_out_of_memory(MemoryError())
    assert is_out_of_memory(RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate 1 GB"))
    assert is_out_of_memory(RuntimeError("[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Failed to allocate memory"))
    assert not is_out_of_memory(ValueError("expected 3 channels"))


def test_the_config_and_the_package_import_without_torch():
    code = (
        "import sys, headtohead.config.sweep, headtohead.sweeps, headtohead.results.sweep; "
        "print(sorted(m for m in ('torch', 'onnxruntime', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_sweep_section_is_frozen():
    config = SweepConfig()
    with pytest.raises(ValidationError):
        config.precision = ["int8"]  # type: ignore[misc]


def test_the_example_experiment_validates():
    exp = load_experiment(Path(__file__).resolve().parents[2] / "examples" / "sweep-minilm.yaml")
    assert exp.sweep is not None and exp.sweep.batch_size == [1, 8, 32, 128]
    grid = expand_grid(exp.sweep, model="minilm", modality="text", parent_max_length=64)
    assert [variant_name("minilm", v, grid.parent) for v in grid.variants] == [
        "minilm[bf16]",
        "minilm[int8]",
        "minilm[onnxruntime]",
        "minilm[onnxruntime,bf16]",
        "minilm[onnxruntime,int8]",
    ]
