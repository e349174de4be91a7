"""``h2h suite`` through the real entry point: Demšar's worked example on --scores, bad input, a kill and --resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from sim.sample import sample_run

from headtohead.cli.main import main
from headtohead.results import save_result
from headtohead.results.suite import load_suite_result

# Demšar (2006), Table 6 (see tests/stats/test_across_datasets.py for why voting carries a fourth decimal).
DEMSAR_CSV = """dataset,C4.5,C4.5+m,C4.5+cf,C4.5+m+cf
adult (sample),0.763,0.768,0.771,0.798
breast cancer,0.599,0.591,0.590,0.569
breast cancer wisconsin,0.954,0.971,0.968,0.967
cmc,0.628,0.661,0.654,0.657
ionosphere,0.882,0.888,0.886,0.898
iris,0.936,0.931,0.916,0.931
liver disorders,0.661,0.668,0.609,0.685
lung cancer,0.583,0.583,0.563,0.625
lymphography,0.775,0.838,0.866,0.875
mushroom,1.000,1.000,1.000,1.000
primary tumor,0.940,0.962,0.965,0.962
rheum,0.619,0.666,0.614,0.669
voting,0.972,0.981,0.9751,0.9749
wine,0.957,0.978,0.946,0.970
"""
# The same paper's Table 6 ranks (lower is better), as printed.
DEMSAR_RANKS = """dataset,C4.5,C4.5+m,C4.5+cf,C4.5+m+cf
1,4,3,2,1
2,1,2,3,4
3,4,1,2,3
4,4,1,3,2
5,4,2,3,1
6,1,2.5,4,2.5
7,3,2,4,1
8,2.5,2.5,4,1
9,4,3,2,1
10,2.5,2.5,2.5,2.5
11,4,2.5,1,2.5
12,3,2,4,1
13,4,1,2,3
14,3,1,4,2
"""


def test_demsar_worked_example_on_scores(tmp_path, capsys):
    table = tmp_path / "demsar.csv"
    table.write_text(DEMSAR_CSV)
    main(["suite", "--scores", str(table), "--metric", "auc", "--out", str(tmp_path / "out")])
    printed = capsys.readouterr().out
    result = load_suite_result(tmp_path / "out" / "suite.json")
    ranks = result.average_ranks
    assert [round(ranks[m], 3) for m in ("C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf")] == [3.143, 2.000, 2.893, 1.964]
    assert round(result.friedman.statistic, 2) == 9.28 and round(result.iman_davenport.statistic, 2) == 3.69
    assert round(result.nemenyi_cd, 2) == 1.25 and result.input == "scores" and result.metric == "auc"
    assert (
        "χ²_F = 9.28" in printed and "Iman–Davenport F = 3.69" in printed and "critical difference is 1.25" in printed
    )
    raw = json.loads((tmp_path / "out" / "suite.json").read_text())
    assert raw["schema_version"] == 1 and {"statistic", "p_value"} <= set(raw["friedman"])
    assert {"wilcoxon_p", "holm_p", "p_a_better", "p_equivalent", "p_b_better"} <= set(raw["pairs"][0])


def test_demsar_control_from_the_command_line_with_a_papers_files(tmp_path, capsys):
    """Demšar §3.2.2 with C4.5 as the control: C4.5+m and C4.5+m+cf are better (Holm over 3); suite.tex and the
    vector CD diagram land beside suite.html."""
    table = tmp_path / "demsar.csv"
    table.write_text(DEMSAR_CSV)
    main(
        ["suite", "--scores", str(table), "--metric", "auc", "--baseline", "C4.5", "--out", str(tmp_path / "out")]
        + ["--figure-size", "3.5x1.6"]
    )
    printed = capsys.readouterr().out
    result = load_suite_result(tmp_path / "out" / "suite.json")
    assert result.baseline == "C4.5" and [c.model for c in result.control if c.rank_significant] == [
        "C4.5+m",
        "C4.5+m+cf",
    ]
    assert "Against the baseline C4.5" in printed and "suite.tex" in printed
    assert {"suite.html", "suite.tex", "cd.svg", "cd.pdf"} <= {p.name for p in (tmp_path / "out").iterdir()}
    assert 'width="252pt" height="115.2pt"' in (tmp_path / "out" / "cd.svg").read_text()  # --figure-size 3.5x1.6


def test_demsar_published_ranks_with_lower_is_better(tmp_path):
    table = tmp_path / "ranks.csv"
    table.write_text(DEMSAR_RANKS)
    # ranks have no scale headtohead knows: the Bayesian test's ROPE is given in ranks (issue 41)
    main(["suite", "--scores", str(table), "--lower-is-better", "--metric", "rank", "--rope", "0.5"]
         + ["--out", str(tmp_path / "out")])  # fmt: skip
    result = load_suite_result(tmp_path / "out" / "suite.json")
    assert round(result.average_ranks["C4.5+cf"], 3) == 2.893 and not result.higher_is_better
    assert round(result.friedman.statistic, 2) == 9.28 and round(result.nemenyi_cd, 2) == 1.25


def _runs(tmp_path: Path) -> list[str]:
    paths = []
    for i in range(3):
        result, _ = sample_run({"a": 0.8, "b": 0.85}, n_examples=300, seed=i, speed=False, n_resamples=100)
        (tmp_path / f"r{i}").mkdir()
        save_result(result, tmp_path / f"r{i}" / "results.json")
        paths.append(str(tmp_path / f"r{i}" / "results.json"))
    return paths


VALID = (
    "datasets: [{name: a, data: {path: 'sklearn:iris'}}, {name: b, data: {path: 'sklearn:wine'}}]\n"
    "models: [{name: x, kind: sklearn, source: x.skops}, {name: y, kind: sklearn, source: y.skops}]\n"
)


def _suite_file(tmp_path: Path, text: str) -> str:
    (tmp_path / "s.yaml").write_text(text)
    return str(tmp_path / "s.yaml")


CASES = {
    "nothing to compare": (lambda t: ["suite"], "nothing to compare"),
    "scores file missing": (lambda t: ["suite", "--scores", str(t / "none.csv")], "none.csv: file not found"),
    "no dataset column": (lambda t: ["suite", "--scores", _table(t, "name,a,b\nx,1,2\n")], "no 'dataset' column"),
    "one model column": (lambda t: ["suite", "--scores", _table(t, "dataset,a\nx,1\n")], "1 model column(s)"),
    "a model column twice": (
        lambda t: ["suite", "--scores", _table(t, "dataset,a,a,c\nx,1,2,3\ny,2,1,3\n")],
        "column 'a' appears 2 times in the header",
    ),
    "a model column twice but for a space": (
        lambda t: ["suite", "--scores", _table(t, "dataset,a,a ,c\nx,1,2,3\ny,2,1,3\n")],
        "columns 'a' and 'a ' differ only in spaces around the name",
    ),
    "a baseline that is no model": (
        lambda t: ["suite", "--scores", _table(t, "dataset,a,b\nx,1,2\ny,2,1\n"), "--baseline", "c"],
        "--baseline c: not one of the models",
    ),
    "a cell that is text": (
        lambda t: ["suite", "--scores", _table(t, "dataset,a,b\nx,1,good\n")],
        "line 2, column b: 'good' is not a number",
    ),
    "suite and scores": (
        lambda t: ["suite", "x.yaml", "--scores", _table(t, "dataset,a,b\nx,1,2\n")],
        "not two of them",
    ),
    "set on a table": (
        lambda t: ["suite", "--scores", _table(t, "dataset,a,b\nx,1,2\ny,2,1\n"), "--set", "a=1"],
        "--set applies to a suite file",
    ),
    "unknown key in the suite": (
        lambda t: ["suite", _suite_file(t, VALID + "across: {metrc: accuracy}\n")],
        "s.yaml:3: across.metrc: unknown key",
    ),
    "missing suite file": (lambda t: ["suite", str(t / "nope.yaml")], "suite file not found"),
    "unknown metric of a run": (
        lambda t: ["suite", *_runs(t), "--metric", "acc"],
        "--metric acc: not a metric of a run",
    ),
    "direction of accuracy": (lambda t: ["suite", *_runs(t), "--lower-is-better"], "higher is better for accuracy"),
    "one run": (lambda t: ["suite", _runs(t)[0]], "a suite compares models across at least two data sets"),
    "a figure size without x": (
        lambda t: ["suite", "--scores", _table(t, "dataset,a,b\nx,1,2\ny,2,1\n"), "--figure-size", "3.5"],
        "--figure-size '3.5': not a width and a height joined by 'x'; give WIDTHxHEIGHT in inches",
    ),
    "a figure of zero width": (
        lambda t: ["suite", "--scores", _table(t, "dataset,a,b\nx,1,2\ny,2,1\n"), "--figure-size", "0x1.6"],
        "the width must be more than 0",
    ),
    "a figure of negative height": (
        lambda t: ["suite", "--scores", _table(t, "dataset,a,b\nx,1,2\ny,2,1\n"), "--figure-size", "3.5x-2"],
        "the height must be more than 0",
    ),
    "a figure size that is text": (
        lambda t: ["suite", "--scores", _table(t, "dataset,a,b\nx,1,2\ny,2,1\n"), "--figure-size", "wide x 2"],
        "the width 'wide' is not a number",
    ),
    "a figure of zero height in the suite file": (
        lambda t: ["suite", _suite_file(t, VALID + "across: {figure: {width: 3.5, height: 0}}\n")],
        "s.yaml:3: across.figure.height",
    ),
}


def _table(folder: Path, text: str) -> str:
    (folder / "t.csv").write_text(text)
    return str(folder / "t.csv")


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_one_line_and_exit_2(case, tmp_path, monkeypatch, capsys):
    build, expected = CASES[case]
    argv = build(tmp_path)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        main([*argv, "--out", str(tmp_path / "out")] if "--out" not in argv else argv)
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and "Traceback" not in err, err
    assert expected in err, err


def _suite(root: Path) -> Path:
    from headtohead.config.suite import load_suite
    from headtohead.testing.suite_models import RECIPE, fit_recipe

    datasets = ("digits", "breast_cancer", "wine", "iris")
    suite = {
        "name": "killed",
        "datasets": [{"name": d, "data": {"path": f"sklearn:{d}", "split": {"eval_fraction": 0.3}}} for d in datasets],
        "models": [{"name": m, "kind": "sklearn", "source": f"models/{{dataset}}/{m}.skops"} for m in RECIPE],
        "speed": {"enabled": False},
        "stats": {"n_resamples": 200},
    }
    path = root / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    for d in load_suite(path).datasets:
        fit_recipe(d.data, root / "models" / d.name)
    return path


def _finished(folder: Path) -> bool:
    try:
        raw = json.loads((folder / "results.json").read_text())
    except (OSError, ValueError):
        return False
    return raw.get("stats") is not None and len(raw.get("models", [])) == 3


@pytest.mark.slow
def test_a_suite_killed_mid_way_resumes_and_skips_what_finished(tmp_path, capsys, until):
    path = _suite(tmp_path)
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    process = subprocess.Popen(
        [sys.executable, "-m", "headtohead.cli.main", "suite", str(path), "--out", str(out)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    until(lambda: _finished(out / "digits"), process)
    process.send_signal(signal.SIGKILL)  # kill -9: no handler runs
    process.wait()
    done = [d for d in ("digits", "breast_cancer", "wine", "iris") if _finished(out / d)]
    assert "digits" in done and len(done) < 4, done  # killed mid-suite
    assert not (out / "suite.json").exists()
    stamps = {d: (out / d / "results.json").stat().st_mtime_ns for d in done}
    capsys.readouterr()
    main(["suite", str(path), "--out", str(out), "--resume"])
    printed = capsys.readouterr().out
    for d in done:
        assert f"{d}: finished in an earlier run; skipped (--resume)" in printed
        assert (out / d / "results.json").stat().st_mtime_ns == stamps[d]
    rerun = [d for d in ("digits", "breast_cancer", "wine", "iris") if d not in done]
    assert all(f"{d}: running" in printed for d in rerun)
    result = load_suite_result(out / "suite.json")
    assert len(result.finished) == 4 and [d.reused for d in result.datasets] == [
        d in done for d in ("digits", "breast_cancer", "wine", "iris")
    ]
    assert result.friedman is not None and (out / "suite.html").is_file()


def test_a_failed_data_set_exits_2_after_saving_the_others(tmp_path, capsys):
    suite = {
        "name": "f",
        "datasets": [
            {"name": "iris", "data": {"path": "sklearn:iris"}},
            {"name": "wine", "data": {"path": "sklearn:wine"}},
        ],
        "models": [
            {"name": "a", "kind": "sklearn", "source": "models/{dataset}/a.skops"},
            {"name": "b", "kind": "sklearn", "source": "models/{dataset}/b.skops"},
        ],
        "speed": {"enabled": False},
    }
    path = tmp_path / "f.yaml"
    path.write_text(yaml.safe_dump(suite))
    with pytest.raises(SystemExit) as info:
        main(["suite", str(path), "--out", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert info.value.code == 2 and len(captured.err.strip().splitlines()) == 1
    assert "2 data set(s) failed (iris, wine)" in captured.err and "iris: failed" in captured.out
    assert load_suite_result(tmp_path / "out" / "suite.json").statistics_note is not None
