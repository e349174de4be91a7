"""Errors in the gold labels, in real runs: a pair's fragility in its verdict, the examples every model got wrong
with one answer (``label_suspects.csv``), and ``data.label_ok`` leaving flagged rows out of every statistic."""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pytest

import headtohead
from headtohead.adapters.predictions import write_prediction_file
from headtohead.cli.main import main
from headtohead.errors import DataError
from headtohead.report.formats.terminal import render_text
from headtohead.report.sections.run import terminal_document
from headtohead.stats.fragility import pair_fragility

LABELS = ("c0", "c1", "c2")


def _case(root):
    """300 examples, three classes: 30 only a right, 12 only b right, 5 both wrong with one answer (c2 for gold c1),
    3 both wrong with different answers, 250 both right."""
    gold = ["c0"] * 42 + ["c1"] * 8 + ["c2"] * 250
    a = ["c0"] * 30 + ["c1"] * 12 + ["c2"] * 5 + ["c0"] * 3 + ["c2"] * 250
    b = ["c1"] * 30 + ["c0"] * 12 + ["c2"] * 5 + ["c2"] * 3 + ["c2"] * 250
    ids = [f"s{i:03d}" for i in range(300)]
    rows = [
        {"id": i, "text": f"example {k} says {g}", "label": g} for k, (i, g) in enumerate(zip(ids, gold, strict=True))
    ]
    pd.DataFrame(rows).to_csv(root / "dev.csv", index=False)
    write_prediction_file(root / "a.csv", ids, a)
    write_prediction_file(root / "b.csv", ids, b)
    return np.array(gold), np.array(a), np.array(b), ids


def _experiment(root, **data):
    return {
        "name": "labels",
        "data": {"path": str(root / "dev.csv"), "id_column": "id", "label_names": list(LABELS), **data},
        "models": [
            {"name": "a", "kind": "predictions", "source": str(root / "a.csv")},
            {"name": "b", "kind": "predictions", "source": str(root / "b.csv")},
        ],
        "eval": {"device": "cpu"},
        "stats": {"n_resamples": 100},
        "speed": {"enabled": False},
    }


def test_a_prediction_file_run_states_its_fragility_and_lists_the_label_suspects(tmp_path):
    gold, a, b, ids = _case(tmp_path)
    outcome = headtohead.run(_experiment(tmp_path), out_dir=tmp_path / "out", report=True)
    pair = outcome.result.stats.comparison("a", "b")
    assert (pair.table.only_a_correct, pair.table.only_b_correct, pair.winner) == (30, 12, "a")
    index = {name: k for k, name in enumerate(LABELS)}
    y, pa, pb = (np.array([index[v] for v in x]) for x in (gold, a, b))
    expected = pair_fragility(y, pa, pb, 3, family=[pair.p_value], index=0, alpha=0.05)
    assert pair.fragility == expected == 3 and pair.answers_differ == 45
    clause = "holds unless 3 of the 45 examples where their answers differ are mislabelled"
    assert clause in pair.verdict
    assert clause in render_text(terminal_document(outcome.result))
    # the examples both got wrong with the same answer, in the file and in the report
    with open(tmp_path / "out" / "label_suspects.csv", newline="") as handle:
        found = list(csv.DictReader(handle))
    assert [(r["index"], r["example_id"], r["gold"], r["answer"], r["confidence"]) for r in found] == [
        (str(i), ids[i], "c1", "c2", "") for i in range(42, 47)
    ]
    assert [r["input"] for r in found] == [f"example {i} says c1" for i in range(42, 47)]
    suspects = outcome.result.stats.label_suspects
    assert suspects.n_suspects == 5 and suspects.models == ["a", "b"] and suspects.rows[0].input == "example 42 says c1"
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Gold labels to check" in html and "On 5 of the 300 examples every model (a, b)" in html


def test_one_model_has_no_label_suspects(tmp_path):
    _case(tmp_path)
    experiment = _experiment(tmp_path)
    experiment["models"] = experiment["models"][:1]
    outcome = headtohead.run(experiment, out_dir=tmp_path / "out")
    assert outcome.result.stats.label_suspects is None
    assert not (tmp_path / "out" / "label_suspects.csv").exists()


def test_label_ok_leaves_exactly_the_flagged_rows_out_of_every_statistic(tmp_path):
    gold, a, b, ids = _case(tmp_path)
    frame = pd.read_csv(tmp_path / "dev.csv")
    flagged = [0, 1, 42]  # two examples only a got right, one suspect
    frame["verified"] = ["no" if i in flagged else "Yes" for i in range(300)]
    frame.loc[5, "verified"] = "TRUE"
    frame.loc[6, "verified"] = "1"
    frame.to_csv(tmp_path / "dev.csv", index=False)
    outcome = headtohead.run(_experiment(tmp_path, label_ok="verified"), out_dir=tmp_path / "out")
    result = outcome.result
    assert result.dataset.n_examples == 297 and result.dataset.skipped == {"label_ok false": 3}
    pair = result.stats.comparison("a", "b")
    assert (pair.table.only_a_correct, pair.table.only_b_correct, pair.n_examples) == (28, 12, 297)
    assert result.stats.label_suspects.n_suspects == 4
    predictions = headtohead.load_predictions(tmp_path / "out")
    assert len(predictions.y_true) == 297
    assert "; 3 rows left out: label_ok false" in terminal_document(result).subtitle
    # the same counts as a run on the data without those rows
    kept = [i for i in range(300) if i not in flagged]
    pd.read_csv(tmp_path / "dev.csv").iloc[kept].drop(columns=["verified"]).to_csv(tmp_path / "kept.csv", index=False)
    plain = _experiment(tmp_path)
    plain["data"]["path"] = str(tmp_path / "kept.csv")
    for name, pred in (("a", a), ("b", b)):
        write_prediction_file(tmp_path / f"{name}.csv", [ids[i] for i in kept], pred[kept])
    again = headtohead.run(plain).result.stats.comparison("a", "b")
    assert (again.p_value, again.fragility) == (pair.p_value, pair.fragility)


@pytest.mark.parametrize(
    ("value", "message"),
    [("maybe", "holds 'maybe' in row 8"), ("", "holds an empty cell in row 8"), ("2", "holds '2' in row 8")],
)
def test_a_label_ok_value_but_true_or_false_is_refused_in_one_line(tmp_path, capsys, value, message):
    _case(tmp_path)
    frame = pd.read_csv(tmp_path / "dev.csv")
    frame["ok"] = "true"
    frame.loc[7, "ok"] = value
    frame.to_csv(tmp_path / "dev.csv", index=False)
    with pytest.raises(DataError, match=message):
        headtohead.run(_experiment(tmp_path, label_ok="ok"))
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--data", str(tmp_path / "dev.csv"), "--model", f"a={tmp_path / 'a.csv'}",
              "--set", "data.label_ok=ok", "--set", "data.id_column=id", "--out", str(tmp_path / "cli")])  # fmt: skip
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "data.label_ok" in err and len(err.splitlines()) == 1


def test_a_missing_label_ok_column_is_refused_in_one_line(tmp_path):
    _case(tmp_path)
    with pytest.raises(DataError, match=r"no column 'verifed' \(data.label_ok\)"):
        headtohead.run(_experiment(tmp_path, label_ok="verifed"))
