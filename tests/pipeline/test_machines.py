"""``h2h machines``: results of ``h2h train`` made on this machine, edited to look like other machines."""

from __future__ import annotations

import json

import pytest
import torch
import typer
import yaml
from typer.testing import CliRunner

from headtohead.config import Experiment
from headtohead.errors import ConfigError, ResultsError
from headtohead.pipeline.machines import compare_machines, load_training, machine_label
from headtohead.results.training import MachineComparison
from headtohead.results.training_file import TrainingResult
from headtohead.testing.data import make_text_table

A100 = {"index": 0, "name": "NVIDIA A100-SXM4-80GB", "driver": "550.54", "cuda": "12.4", "memory_total_mb": 81920.0}


@pytest.fixture(scope="module")
def here(tmp_path_factory):
    """One real ``h2h train`` output of this machine (two tiny text models, a few steps)."""
    from headtohead.pipeline.training import train_experiment
    from headtohead.testing.text import make_tiny_bert, make_tiny_roberta

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("compare")
    make_text_table(root / "train.csv", n_per_class=16, seed=1)
    make_text_table(root / "dev.csv", n_per_class=5, seed=2)
    make_tiny_bert(root / "bert", seed=1)
    make_tiny_roberta(root / "roberta", seed=2)
    raw = {
        "name": "bench",
        "data": {"path": "dev.csv", "train": "train.csv"},
        "models": [
            {"name": "bert", "kind": "transformers", "source": "bert", "max_length": 16},
            {"name": "roberta", "kind": "transformers", "source": "roberta", "max_length": 16},
        ],
        "eval": {"batch_size": 10, "device": "cpu"},
        "train": {"epochs": 2, "batch_size": 8, "timing_warmup_steps": 1},
    }
    if "speed" in Experiment.model_fields:
        raw["speed"] = {"enabled": False}
    (root / "exp.yaml").write_text(yaml.safe_dump(raw))
    try:
        train_experiment(root / "exp.yaml", out_dir=root / "cpu-box")
    finally:
        torch.set_num_threads(before)
    return root / "cpu-box"


def _edited(here, target, *, hostname="gpu-box", gpus=(A100,), torch_version=None, faster=4.0, settings=None):
    """A copy of this machine's training.json made to look as if it came from another machine."""
    raw = json.loads((here / "training.json").read_text())
    env = raw["environment"]
    env.update(hostname=hostname, gpus=list(gpus), cuda_available=bool(gpus))
    if torch_version:
        env["torch"] = torch_version
    for run in raw["training"]["runs"]:
        run["steps"]["compute_ns"] = [int(c / faster) for c in run["steps"]["compute_ns"]]
        run["steps"]["data_wait_ns"] = [int(c / faster) for c in run["steps"]["data_wait_ns"]]
        for epoch in run["epochs"]:
            epoch["train_s"] /= faster
        if gpus:
            run["cuda_max_allocated_mb"] = 1500.0
    raw["training"]["settings"].update(settings or {})
    target.mkdir(parents=True)
    (target / "training.json").write_text(json.dumps(raw))
    return target / "training.json"


def _same_software_a100(here):
    """An A100 with this machine's CUDA and driver versions when it has a GPU (a CPU box has none to differ)."""
    gpus = json.loads((here / "training.json").read_text())["environment"]["gpus"]
    return {**A100, "cuda": gpus[0]["cuda"], "driver": gpus[0]["driver"]} if gpus else A100


def test_models_by_machines_normalised_to_the_baseline(here, tmp_path):
    gpu = _edited(here, tmp_path / "gpu", gpus=(_same_software_a100(here),))
    comparison = compare_machines([here / "results.json", gpu])
    cpu_label = machine_label(load_training(here)[0])
    assert [m.label for m in comparison.machines] == [cpu_label, "NVIDIA A100-SXM4-80GB"]
    assert comparison.baseline == cpu_label and comparison.models == ["bert", "roberta"]
    _, cpu_summary, _ = load_training(here / "results.json")
    _, gpu_summary, _ = load_training(gpu)
    for model in ("bert", "roberta"):
        fast, slow = gpu_summary.run(model), cpu_summary.run(model)
        cell = comparison.cell(model, "NVIDIA A100-SXM4-80GB")
        assert cell.samples_per_s == pytest.approx(fast.samples_per_s)
        assert cell.speedup_vs_baseline == pytest.approx(fast.samples_per_s / slow.samples_per_s)
        assert cell.speedup_vs_baseline == pytest.approx(4.0, rel=0.01)
        assert cell.epoch_time_vs_baseline == pytest.approx(0.25)
        assert cell.memory_kind == "cuda" and cell.peak_memory_mb == 1500.0
        base = comparison.cell(model, cpu_label)
        assert base.speedup_vs_baseline == 1.0 and base.memory_kind == "rss"
    # same software; a CPU box has no CUDA version to differ in. A model's share of time waiting for data is
    # measured, and a loaded machine can make these tiny models wait: that warning is not about the software
    assert [w for w in comparison.warnings if "waits for data" not in w] == []


def test_differing_software_settings_and_baselines_are_named(here, tmp_path):
    gpu = _edited(here, tmp_path / "gpu", torch_version="2.13.0")
    other = _edited(
        here,
        tmp_path / "v100",
        hostname="old",
        gpus=[{**A100, "name": "Tesla V100-SXM2-16GB", "cuda": "11.8"}],
        settings={"precision": "fp16"},
        faster=2.0,
    )
    comparison = compare_machines([here, gpu, other], baseline="Tesla V100-SXM2-16GB")
    assert comparison.baseline == "Tesla V100-SXM2-16GB"
    assert comparison.cell("bert", "NVIDIA A100-SXM4-80GB").speedup_vs_baseline == pytest.approx(2.0, rel=0.01)
    # a setting known to move scores: a warning each (the same words as h2h report's)
    torch_version = next(w for w in comparison.warnings if w.startswith("torch version differs: "))
    assert "; NVIDIA A100-SXM4-80GB 2.13.0 — the torch version is known to move scores" in torch_version
    precision = next(w for w in comparison.warnings if w.startswith("dtype differs: "))
    assert precision.endswith("fp32; Tesla V100-SXM2-16GB fp16 — the numeric precision is known to move scores")
    software = next(w for w in comparison.warnings if w.startswith("software versions differ"))
    assert "torch" not in software and "cuda 12.4 (NVIDIA A100-SXM4-80GB) vs 11.8" in software
    assert not any(w.startswith("training settings differ") for w in comparison.warnings)  # only precision did
    assert not any(w.startswith("device") for w in comparison.warnings)  # the machines are what is compared
    assert compare_machines([here, gpu, other], baseline="2").baseline == "NVIDIA A100-SXM4-80GB"
    with pytest.raises(
        ConfigError, match="--baseline 'Tesla V100' is not one of the machines — did you mean Tesla V100-SXM2-16GB"
    ):
        compare_machines([here, gpu, other], baseline="Tesla V100")


def test_same_hardware_twice_is_told_apart_and_bad_inputs_are_refused(here, tmp_path):
    twin = _edited(here, tmp_path / "twin", hostname="other-host", gpus=(), faster=1.0)
    comparison = compare_machines([here, twin])
    labels = [m.label for m in comparison.machines]
    assert labels[0].endswith(" @ " + load_training(here)[0].hostname) and labels[1].endswith(" @ other-host")
    with pytest.raises(ConfigError, match="at least two machines"):
        compare_machines([here])
    plain = tmp_path / "plain"
    plain.mkdir()
    run_only = json.loads((here / "results.json").read_text())
    run_only.pop("training", None)  # an `h2h run` output: no training record
    (plain / "results.json").write_text(json.dumps(run_only))
    with pytest.raises(ResultsError, match="no training record"):
        compare_machines([here, plain / "results.json"])
    bad = tmp_path / "bad" / "training.json"
    bad.parent.mkdir()
    bad.write_text(json.dumps({"schema_version": 99}))
    with pytest.raises(ResultsError, match="schema version 99"):
        compare_machines([here, bad])


def test_the_cli_prints_the_tables_and_writes_json(here, tmp_path):
    from headtohead.cli.machines import machines

    gpu = _edited(here, tmp_path / "gpu", torch_version="2.13.0")
    app = typer.Typer()
    app.command("machines")(machines)
    app.command("noop")(lambda: None)
    result = CliRunner().invoke(
        app,
        [
            "machines",
            str(here / "results.json"),
            str(gpu),
            "--label",
            "laptop",
            "--label",
            "a100",
            "--json",
            str(tmp_path / "cmp.json"),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "Ratios (×) are to the baseline machine: laptop" in result.output
    for title in ("training samples/s (× baseline)", "time per epoch", "peak memory"):
        assert title in result.output
    assert "(4.00×)" in result.output and "torch version differs: laptop " in result.output
    saved = MachineComparison.model_validate_json((tmp_path / "cmp.json").read_text())
    assert [m.label for m in saved.machines] == ["laptop", "a100"]
    assert TrainingResult.model_validate_json((here / "training.json").read_text()).training.runs


def test_the_old_name_compare_still_works_and_says_it_is_deprecated(here, tmp_path, capsys):
    from headtohead.cli.main import main

    gpu = _edited(here, tmp_path / "gpu", torch_version="2.13.0")
    main(["compare", str(here / "results.json"), str(gpu), "--label", "laptop", "--label", "a100"])
    captured = capsys.readouterr()
    assert "'h2h compare' is deprecated" in captured.err and "'h2h machines'" in captured.err
    assert "Ratios (×) are to the baseline machine: laptop" in captured.out
    main(["machines", str(here / "results.json"), str(gpu)])
    assert "deprecated" not in capsys.readouterr().err
    main(["--help"])
    listed = capsys.readouterr().out
    commands = [line.split()[1] for line in listed.splitlines() if line.startswith("│ ") and len(line.split()) > 2]
    assert "machines" in commands and "compare" not in commands  # hidden from the list of commands


def test_prices_answer_which_machine_is_cheaper_for_the_job(here, tmp_path):
    from headtohead.pipeline.machines import parse_prices
    from headtohead.report.sections.machines import cheapest_lines

    gpu = _edited(here, tmp_path / "gpu")  # 4× faster per epoch
    raw = json.loads(gpu.read_text())
    for run in raw["training"]["runs"]:  # a GPU energy counter read 600 J over the run
        run["cost"] = {"seconds": run["end_to_end_s"], "energy_j": 600.0, "energy_source": "NVML (test)"}
    gpu.write_text(json.dumps(raw))
    prices = parse_prices(["a100=4.0", "1=0.5"])  # by label and by position
    comparison = compare_machines([here, gpu], labels=["laptop", "a100"], prices=prices)
    _, cpu_summary, _ = load_training(here)
    slow = cpu_summary.run("bert")
    cpu, fast = comparison.cell("bert", "laptop"), comparison.cell("bert", "a100")
    assert cpu.cost_per_epoch == pytest.approx(0.5 * slow.time_per_epoch_s / 3600)
    assert fast.cost_per_epoch == pytest.approx(4.0 * slow.time_per_epoch_s / 4 / 3600)
    assert fast.cost_vs_baseline == pytest.approx(2.0)  # 8× the price for 4× the speed: twice the cost per epoch
    assert fast.cost_end_to_end == pytest.approx(4.0 * fast.end_to_end_s / 3600)
    assert fast.energy_per_epoch_j == pytest.approx(600.0 / len(slow.epochs)) and cpu.energy_per_epoch_j is None
    assert cheapest_lines(comparison)[0].startswith("bert: cheapest per epoch on laptop (")
    assert "a100" in cheapest_lines(comparison)[0] and "(2.00×)" in cheapest_lines(comparison)[0]


@pytest.mark.parametrize(
    ("items", "message"),
    [
        (["a100"], "give LABEL=PRICE_PER_HOUR"),
        (["a100=0"], "price above 0"),
        (["a100=-2"], "price above 0"),
        (["a100=cheap"], "give LABEL=PRICE_PER_HOUR"),
    ],
)
def test_bad_prices_are_one_line(items, message):
    from headtohead.pipeline.machines import parse_prices

    with pytest.raises(ConfigError, match=message):
        parse_prices(items)


def test_a_price_for_an_unknown_machine_is_refused(here, tmp_path):
    gpu = _edited(here, tmp_path / "gpu")
    with pytest.raises(ConfigError, match="'h100' is not one of the machines"):
        compare_machines([here, gpu], labels=["laptop", "a100"], prices={"h100": 3.0})
