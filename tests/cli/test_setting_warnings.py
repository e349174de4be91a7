"""Stored runs compared where a setting known to move scores differs: h2h report, the gate across two files,
a suite over runs (issue 41, point 5). Real runs of fake models of known accuracy, through the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

import headtohead
from headtohead.cli.main import main
from headtohead.testing import known
from headtohead.testing.data import write_text_table

BATCH_WARNING = "— the batch size is known to move scores"


def _model(name: str, accuracy: float, seed: int) -> dict:
    return {
        "name": name,
        "kind": "python",
        "source": "headtohead.testing.known:known_accuracy",
        "model_args": {"accuracy": accuracy, "seed": seed, "label_names": ["negative", "positive"]},
        "outputs": "probabilities",
    }


def _experiment(root: Path, data: Path) -> Path:
    experiment = {
        "name": "envwarn",
        "data": {"path": str(data)},
        "models": [_model("strong", 0.9, 1), _model("weak", 0.8, 2)],
        "speed": {"enabled": False},
        "stats": {"n_resamples": 200},
    }
    path = root / f"{data.stem}.yaml"
    path.write_text(yaml.safe_dump(experiment))
    return path


def _run(experiment: Path, out: Path, batch_size: int) -> Path:
    headtohead.run(experiment, out_dir=out, overrides=[f"eval.batch_size={batch_size}"])  # as h2h run --set
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One experiment run at eval.batch_size 8 and 32 on one data set, and at 8 and 32 on another."""
    root = tmp_path_factory.mktemp("envwarn")
    first = write_text_table(root / "first.csv", known.known_accuracy_rows(120, seed=5))
    second = write_text_table(root / "second.csv", known.known_accuracy_rows(100, seed=6))
    exp_first, exp_second = _experiment(root, first), _experiment(root, second)
    return {
        "b8": _run(exp_first, root / "b8", 8),
        "b32": _run(exp_first, root / "b32", 32),
        "again8": _run(exp_first, root / "again8", 8),
        "other8": _run(exp_second, root / "other8", 8),
        "other32": _run(exp_second, root / "other32", 32),
    }


def _warnings(text: str) -> list[str]:
    return [line.removeprefix("warning: ") for line in text.splitlines() if line.startswith("warning: ")]


def _report(paths, capsys, tmp_path) -> tuple[list[str], str, str]:
    md = tmp_path / "report.md"
    main(["report", *map(str, paths), "--md", str(md), "--html", str(tmp_path / "report.html")])
    err = capsys.readouterr().err
    return _warnings(err), err, md.read_text().replace("\\", "")  # Markdown's escapes (batch\\_size) taken out


def test_two_runs_at_batch_sizes_8_and_32_name_batch_size(runs, capsys, tmp_path):
    warned, _, markdown = _report([runs["b8"], runs["b32"]], capsys, tmp_path)
    # the two runs share a name and a host: the report tells them apart by folder
    assert len(warned) == 1 and warned[0].startswith("batch_size of strong and weak differs: envwarn @ ")
    assert f"({runs['b8']}) 8, envwarn @ " in warned[0] and warned[0].endswith(f"({runs['b32']}) 32 {BATCH_WARNING}")
    assert "batch_size of strong and weak differs" in markdown and BATCH_WARNING in markdown
    html = (tmp_path / "report.html").read_text()
    assert html.count("batch_size of strong and weak differs") == 1


def test_identical_runs_warn_nothing(runs, capsys, tmp_path):
    warned, err, markdown = _report([runs["b8"], runs["again8"]], capsys, tmp_path)
    assert warned == [] and "note:" not in err and "Read with care" not in markdown


def _rewritten(source: Path, to: Path, edit) -> Path:
    shutil.copytree(source, to)
    raw = json.loads((to / "results.json").read_text())
    edit(raw)
    (to / "results.json").write_text(json.dumps(raw))
    return to


def test_a_torch_version_difference_is_named(runs, capsys, tmp_path):
    def older_torch(raw):
        raw["environment"]["torch"] = "2.3.0"
        raw["name"] = "older"

    other = _rewritten(runs["again8"], tmp_path / "older", older_torch)
    warned, _, _ = _report([runs["b8"], other], capsys, tmp_path)
    torch = [w for w in warned if w.startswith("torch version differs")]
    assert len(torch) == 1 and torch[0].endswith("older 2.3.0 — the torch version is known to move scores")
    assert len(warned) == 1  # nothing else differs


def test_an_old_record_without_the_field_reads_unknown_and_warns_nothing(runs, capsys, tmp_path):
    def version_7(raw):
        raw["schema_version"] = 7
        del raw["environment"]["onnxruntime"]
        raw["name"] = "old"

    old = _rewritten(runs["again8"], tmp_path / "old", version_7)
    new = _rewritten(runs["b8"], tmp_path / "new", lambda raw: raw["environment"].update(onnxruntime="1.20.1"))
    warned, err, _ = _report([old, new], capsys, tmp_path)
    assert warned == []  # unknown is not different, even where the newer run has a version
    assert "note: not recorded in every run, so not checked: onnxruntime version (unknown in old)" in err


def test_the_gate_across_two_files_names_the_same_setting(runs, capsys, tmp_path):
    main(["gate", str(runs["b8"]), str(runs["b32"]), "--baseline", "strong", "--candidate", "strong",
          "--max-accuracy-drop", "5pp", "--junit", str(tmp_path / "gate.xml")])  # fmt: skip  # exit 0: not worse
    captured = capsys.readouterr()
    warning = f"batch_size of strong differs: b8 8, b32 32 {BATCH_WARNING}"
    assert _warnings(captured.err) == [warning]
    assert f"<system-err>warning: {warning}</system-err>" in (tmp_path / "gate.xml").read_text()
    assert captured.out.startswith("PASS: strong (candidate run) is not worse than strong (baseline run)")
    assert "− strong (baseline run) = 0.00 pp" in captured.out and "over 120 examples" in captured.out


def test_the_gate_within_one_run_or_across_alike_runs_warns_nothing(runs, capsys):
    for args in ([str(runs["b8"])], [str(runs["b8"]), str(runs["again8"])]):
        main(["gate", *args, "--baseline", "weak", "--candidate", "strong", "--max-accuracy-drop", "5pp"])
        captured = capsys.readouterr()
        assert captured.out.startswith("PASS: strong is not worse than weak") and _warnings(captured.err) == []


def test_a_suite_over_runs_names_the_same_setting(runs, capsys, tmp_path):
    main(["suite", str(runs["b8"] / "results.json"), str(runs["other32"] / "results.json"), "--out",
          str(tmp_path / "suite")])  # fmt: skip
    printed = capsys.readouterr().out
    saved = json.loads((tmp_path / "suite" / "suite.json").read_text())
    warning = f"batch_size of strong and weak differs: b8 8, other32 32 {BATCH_WARNING}"
    assert warning in saved["warnings"] and " ".join(warning.split()) in " ".join(printed.split())
    assert not any("data fingerprint" in w for w in saved["warnings"])  # other data sets: the point of a suite


def test_a_suite_over_alike_runs_warns_nothing_of_settings(runs, capsys, tmp_path):
    main(["suite", str(runs["b8"]), str(runs["other8"])])
    assert "differs:" not in capsys.readouterr().out


def _refused(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    return capsys.readouterr().err.strip()


def test_the_gate_across_two_files_refuses_other_data_and_speed_in_one_line(runs, capsys):
    both = ["--baseline", "strong", "--candidate", "strong"]
    other = _refused(["gate", str(runs["b8"]), str(runs["other8"]), *both, "--max-accuracy-drop", "5pp"], capsys)
    assert other.startswith("error: ") and "the runs evaluated different data" in other and "\n" not in other
    speed = _refused(["gate", str(runs["b8"]), str(runs["b32"]), *both, "--max-slowdown", "5%"], capsys)
    assert "two runs' speeds were not measured side by side" in speed and "\n" not in speed
    three = [str(runs["b8"]), str(runs["b32"]), str(runs["again8"])]
    assert "3 results files given" in _refused(["gate", *three, *both, "--max-accuracy-drop", "5pp"], capsys)
