"""One vocabulary across commands: the shared options on every command that runs models, one name
for the level, ``--model``/``--baseline`` one meaning each, renamed options still working (and
saying so once, after the output), margins read at the edge."""

from __future__ import annotations

import json
import textwrap

import pytest

from headtohead.cli.main import main

EXPERIMENT = textwrap.dedent("""\
    name: vocabulary
    data: {path: sklearn:iris}
    models:
      - {name: mlp, kind: python, source: "headtohead.testing.models:tiny_mlp",
         model_args: {n_features: 4, n_classes: 3}}
    eval: {batch_size: 16, device: cpu}
    stats: {n_resamples: 200}
    speed: {min_seconds: 0.02, rounds: 5, precision: null, min_iterations: 5, warmup_iterations: 1, warmup_seconds: 0.0,
            pipeline_iterations: 0, memory: false, n_resamples: 200, num_batches: 1}
    sweep: {precision: [fp32], batch_size: [8]}
    """)

SHARED = ("--out", "--set", "--resume", "--no-resume", "--overwrite", "--offline", "--deterministic")


def _help(capsys, command: str) -> str:
    main([command, "--help"])  # returns normally, as every command that succeeds
    return capsys.readouterr().out


@pytest.mark.parametrize("command", ["run", "sweep", "train", "suite"])
def test_commands_that_run_models_share_the_options(capsys, command):
    shown = _help(capsys, command)
    assert all(option in shown for option in SHARED), shown


def test_bench_shares_all_but_resume(capsys):
    shown = _help(capsys, "bench")  # speed only: there is no finished quality pass to go on from
    assert all(option in shown for option in SHARED if "resume" not in option) and "--resume" not in shown


def test_the_level_is_alpha_and_old_spellings_are_hidden(capsys):
    for command in ("gate", "plan", "suite"):
        assert "--alpha" in _help(capsys, command)
    assert "--confidence" not in _help(capsys, "gate")
    sweep = _help(capsys, "sweep")
    assert "--only" in sweep and "--model" not in sweep and "-m " not in sweep


@pytest.fixture
def experiment(tmp_path):
    path = tmp_path / "exp.yaml"
    path.write_text(EXPERIMENT)
    return path


def test_sweep_reads_margins_as_the_gate_does(experiment, tmp_path, capsys):
    out = tmp_path / "out"
    main(["sweep", str(experiment), "--precision", "fp32", "--max-accuracy-drop", "0.5pp", "--out", str(out)])
    saved = json.loads((out / "sweep.json").read_text())
    assert saved["settings"]["max_accuracy_drop"] == 0.005
    assert saved["recommendation"]["constraints"]["max_accuracy_drop"] == 0.005
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        main(["sweep", str(experiment), "--max-accuracy-drop", "0.5%", "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2 and err.startswith("error: --max-accuracy-drop 0.5%: '%' is ambiguous")
    assert len(err.splitlines()) == 1


def test_sweep_only_picks_models_and_model_is_its_old_spelling(experiment, tmp_path, capsys):
    main(["sweep", str(experiment), "--precision", "fp32", "--only", "mlp", "--out", str(tmp_path / "a")])
    assert "deprecated" not in capsys.readouterr().err
    main(["sweep", str(experiment), "--precision", "fp32", "-m", "mlp", "--out", str(tmp_path / "b")])
    captured = capsys.readouterr()
    assert "Recommended:" in captured.out
    assert captured.err.count("--model (in h2h sweep) is deprecated") == 1 and "now --only" in captured.err
    with pytest.raises(SystemExit) as info:
        main(["sweep", str(experiment), "--only", "mlp", "--model", "mlp", "--out", str(tmp_path / "c")])
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2 and "give only --only" in err and len(err.splitlines()) == 1


def test_plan_reads_the_gap_as_a_margin(capsys):
    main(["plan", "--accuracy", "0.9", "--delta", "5pp"])
    points = capsys.readouterr().out
    main(["plan", "--accuracy", "0.9", "--delta", "0.05"])
    assert capsys.readouterr().out == points


def test_min_accuracy_drop_is_an_old_spelling(experiment, tmp_path, capsys):
    out = tmp_path / "out"
    main(["sweep", str(experiment), "--precision", "fp32", "--min-accuracy-drop", "2pp", "--out", str(out)])
    assert json.loads((out / "sweep.json").read_text())["settings"]["max_accuracy_drop"] == 0.02
    assert capsys.readouterr().err.count("--min-accuracy-drop is deprecated") == 1


def test_plan_counts_models_with_n_models(capsys):
    main(["plan", "--accuracy", "0.9", "--delta", "2pp", "--n-models", "3"])
    three = capsys.readouterr()
    main(["plan", "--accuracy", "0.9", "--delta", "2pp", "--models", "3"])
    old = capsys.readouterr()
    main(["plan", "--accuracy", "0.9", "--delta", "2pp"])
    assert old.out == three.out != capsys.readouterr().out
    assert "deprecated" not in three.err and old.err.count("--models (a count in h2h plan) is deprecated") == 1
