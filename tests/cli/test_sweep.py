"""``h2h sweep``: options become the sweep section, the table and the recommendation are printed,
mistakes are one line and exit code 2."""

from __future__ import annotations

import json
import textwrap

import pytest

from headtohead.cli.main import main

EXPERIMENT = textwrap.dedent("""\
    name: cli-sweep
    data: {path: sklearn:iris}
    models:
      - {name: mlp, kind: python, source: "headtohead.testing.models:tiny_mlp",
         model_args: {n_features: 4, n_classes: 3}}
    eval: {batch_size: 16, device: cpu}
    stats: {n_resamples: 200}
    speed: {min_seconds: 0.02, rounds: 5, precision: null, min_iterations: 5, warmup_iterations: 1, warmup_seconds: 0.0,
            pipeline_iterations: 0, memory: false, n_resamples: 200, num_batches: 1}
    sweep: {precision: [fp32, bf16], max_latency_ms: 500}
    """)


@pytest.fixture
def experiment(tmp_path):
    path = tmp_path / "exp.yaml"
    path.write_text(EXPERIMENT)
    return path


def test_sweep_command_prints_the_table_verdicts_and_recommendation(experiment, tmp_path, capsys):
    out = tmp_path / "out"
    main(["sweep", str(experiment), "--batch-size", "4,32", "--precision", "fp32,int8", "--out", str(out)])
    printed = capsys.readouterr().out
    assert "mlp[int8]" in printed and "Recommended:" in printed
    assert "mlp[int8]: " in printed and "McNemar p = " in printed  # the verdict against the parent
    saved = json.loads((out / "sweep.json").read_text())
    # the options replace the section's lists; the rest of the section (the latency budget) stays
    assert saved["settings"]["batch_size"] == [4, 32] and saved["settings"]["precision"] == ["fp32", "int8"]
    assert saved["settings"]["max_latency_ms"] == 500
    assert saved["recommendation"]["constraints"]["max_latency_ms"] == 500
    cells = {c["name"]: c for c in saved["models"][0]["cells"]}
    assert set(cells) == {"mlp", "mlp[int8]"} and [p["batch_size"] for p in cells["mlp"]["points"]] == [4, 32]
    assert (out / "sweep.md").is_file() and (out / "sweep.png").is_file()


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["--batch-size", "1,x"], "--batch-size 'x' is not a valid int"),
        (["--precision", "fp32,fp64"], "--precision: "),
        (["--sparsity", "0.5,1.5"], "--sparsity: "),
        (["--model", "mpl"], "sweep.models names 'mpl'"),
    ],
)
def test_sweep_mistakes_are_one_line(experiment, tmp_path, capsys, argv, fragment):
    with pytest.raises(SystemExit) as info:
        main(["sweep", str(experiment), "--out", str(tmp_path / "o"), *argv])
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2 and fragment in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
