"""Logs as data: items joined by the log's own id, one-sided items named, the classes and outputs of a log's verdicts.

These run without lm-eval or Inspect installed: lm-eval's samples lines are written here in the
format lm-eval writes (``tests/adapters/test_harness_logs.py`` runs the real harnesses).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from headtohead.adapters.lm_eval_samples import LmEvalAdapter
from headtohead.adapters.logged import logged_outputs
from headtohead.config.models import model_settings
from headtohead.data.logged import CORRECT, INCORRECT, NO_CHOICE, LoggedRun, dataset_from_logs
from headtohead.errors import ConfigError, DataError, ModelError
from headtohead.pipeline.quick import quick_experiment


def _run(ids, correct, *, gold=None, chosen=None, choices=0, keys=None, columns=None, failed=None, groups=None):
    n = len(ids)
    return LoggedRun(
        source=f"log-{ids[0]}",
        ids=tuple(ids),
        texts=tuple(f"text {i}" for i in ids),
        keys=tuple(keys or ids),
        n_choices=np.full(n, choices),
        gold=np.array(gold if gold is not None else [-1] * n),
        correct=np.array(correct, dtype=bool),
        failed=np.array(failed if failed is not None else [False] * n, dtype=bool),
        chosen=np.array(chosen if chosen is not None else [-1] * n),
        columns=columns or {},
        groups=tuple(groups) if groups else None,
        group_column="sample" if groups else None,
    )


def test_the_items_every_log_holds_are_the_data_and_the_others_are_named():
    a = _run(["t/0", "t/1", "t/2", "t/3"], [1, 0, 1, 1])
    b = _run(["t/3", "t/1", "t/0", "t/9"], [0, 0, 1, 1])
    data = dataset_from_logs({"a": a, "b": b})
    assert data.ids == ("t/0", "t/1", "t/3")  # the first log's order
    assert data.label_names == (CORRECT, INCORRECT) and data.labels.tolist() == [0, 0, 0]
    assert sorted(data.skipped_ids) == ["t/2", "t/9"]
    reasons = " ".join(data.skipped)
    assert "'a'" in reasons and "t/2" in reasons and "'b'" in reasons and "t/9" in reasons
    pred = logged_outputs(b, np.array([2, 1, 0]), data.labels, data.label_names).pred
    assert pred.tolist() == [0, 1, 1]  # right exactly where b's log scored it right


def test_logs_holding_different_items_under_one_id_are_refused():
    a, b = _run(["x", "y"], [1, 1], keys=["k1", "k2"]), _run(["x", "y"], [1, 1], keys=["k1", "other"])
    with pytest.raises(DataError, match="different items under the same id.*y"):
        dataset_from_logs({"a": a, "b": b})
    with pytest.raises(DataError, match="the id.*'x' appear twice"):
        _run(["x", "x"], [1, 1])
    with pytest.raises(DataError, match="no item in common"):
        dataset_from_logs({"a": _run(["x"], [1]), "b": _run(["z"], [1])})


def test_multiple_choice_classes_are_the_choices_and_a_wrong_answer_naming_none_gets_its_own():
    a = _run(["q1", "q2", "q3"], [1, 0, 0], gold=[2, 0, 1], chosen=[2, 3, -1], choices=4)
    data = dataset_from_logs({"a": a, "b": _run(["q1", "q2", "q3"], [1, 1, 1], gold=[2, 0, 1], choices=4)})
    assert data.label_names == ("A", "B", "C", "D", NO_CHOICE) and data.labels.tolist() == [2, 0, 1]
    out = logged_outputs(a, np.arange(3), data.labels, data.label_names)
    assert out.pred.tolist() == [2, 3, 4] and out.proba is None


def test_each_task_keeps_its_own_classes_named_by_its_choices_when_every_item_offers_the_same():
    ids = ["sst/0", "sst/1", "arc/0", "arc/1"]
    choices = (("negative", "positive"), ("negative", "positive"), ("a cat", "a dog", "a fox"), ("red", "blue"))

    def run(correct, chosen):
        return LoggedRun(
            source="log",
            ids=tuple(ids),
            texts=tuple(ids),
            keys=tuple(ids),
            n_choices=np.array([2, 2, 3, 2]),
            gold=np.array([1, 0, 2, 0]),
            correct=np.array(correct, dtype=bool),
            failed=np.zeros(4, dtype=bool),
            chosen=np.array(chosen),
            choices=choices,
            columns={"task": ("sst", "sst", "arc", "arc")},
        )

    a, b = run([1, 0, 0, 1], [1, 1, 0, 0]), run([1, 1, 1, 1], [1, 0, 2, 0])
    data = dataset_from_logs({"a": a, "b": b})
    # sst offers the same choices everywhere: named by them; arc's change per question: positions
    assert data.label_names == ("sst:negative", "sst:positive", "arc:A", "arc:B", "arc:C")
    assert data.labels.tolist() == [1, 0, 4, 2]
    assert logged_outputs(a, np.arange(4), data.labels, data.label_names).pred.tolist() == [1, 1, 2, 2]
    one = dataset_from_logs({"a": LoggedRun(**{**a.__dict__, "columns": {}}), "b": b})  # one task: no prefix
    assert one.label_names == ("A", "B", "C")


def test_failures_are_no_prediction_and_slices_skip_id_like_fields():
    groups = [f"s{i // 2}" for i in range(8)]
    columns = {"topic": tuple("xy"[i % 2] for i in range(8)), "n": tuple(i // 2 for i in range(8))}
    a = _run(
        [f"{g}#{i}" for i, g in enumerate(groups)],
        [1] * 8,
        failed=[1, 0, 0, 0, 0, 0, 0, 0],
        columns=columns,
        groups=groups,
    )
    data = dataset_from_logs({"a": a, "b": a})
    assert data.group_column == "sample" and len(set(data.groups)) == 4
    assert set(data.columns) == {"topic", "sample"}  # 'n' has a value per sample: an id, no slice
    assert logged_outputs(a, np.arange(8), data.labels, data.label_names).pred.tolist()[:2] == [-1, 0]
    with pytest.raises(DataError, match="no field 'colour'"):
        dataset_from_logs({"a": a}, slice_columns=["colour"])


def _samples_file(folder: Path, task: str, metric_values, *, filters=("none",)) -> Path:
    lines = []
    for doc_id, value in enumerate(metric_values):
        for name in filters:
            lls = [-1.0 - doc_id % 3, -2.0, -0.5 * (doc_id % 2) - 1.5]
            lines.append(
                {
                    "doc_id": doc_id,
                    "doc": {"q": doc_id},
                    "target": "0",
                    "arguments": {
                        f"gen_args_{j}": {"arg_0": f"Q{doc_id}", "arg_1": f" {w}"}
                        for j, w in enumerate(["a", "bbbb", "cc"])
                    },
                    "resps": [[[str(x), "False"]] for x in lls],
                    "filtered_resps": [[str(x), "False"] for x in lls],
                    "filter": name,
                    "metrics": ["acc", "acc_norm", "brier"],
                    "doc_hash": f"h{doc_id}",
                    "acc": value,
                    "acc_norm": 1.0 - value,
                    "brier": 0.37,
                }
            )
    path = folder / f"samples_{task}_2026-01-01T00-00-00.000000.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_an_lm_eval_samples_file_reads_its_metric_its_choices_and_refuses_what_is_not_right_or_wrong(tmp_path):
    _samples_file(tmp_path, "mc", [1.0, 0.0, 1.0])
    entry = {"name": "m", "kind": "lm-eval", "source": str(tmp_path)}
    run = LmEvalAdapter.read_log(model_settings(**entry), tmp_path)
    assert run.ids == ("mc/0", "mc/1", "mc/2") and run.columns["task"] == ("mc",) * 3
    assert run.correct.tolist() == [True, False, True] and run.gold.tolist() == [0, 0, 0]
    lls = np.array([[-1.0 - d % 3, -2.0, -0.5 * (d % 2) - 1.5] for d in range(3)])  # as _samples_file writes them
    assert run.chosen.tolist() == [int(np.argmax(row)) for row in lls]  # acc: the largest log-likelihood
    # documents 1 and 2 are scored against their largest log-likelihood (a tie, a right answer it did not favour):
    # no probabilities for them, counted in a warning
    np.testing.assert_allclose(run.loglik[0], lls[0])
    assert np.isnan(run.loglik[1:]).all() and any("2 of 3 documents were scored acc against" in w for w in run.warnings)
    norm = LmEvalAdapter.read_log(model_settings(**entry, metric="acc_norm"), tmp_path)
    assert norm.correct.tolist() == [False, True, False]
    lengths = np.array([1.0, 4.0, 2.0])
    assert norm.chosen.tolist() == [int(np.argmax(row / lengths)) for row in lls]
    np.testing.assert_allclose(norm.loglik[[0, 2]], (lls / lengths)[[0, 2]])  # the scores acc_norm ranks by
    with pytest.raises(ModelError, match="brier = 0.37, not right"):
        LmEvalAdapter.read_log(model_settings(**entry, metric="brier"), tmp_path)
    with pytest.raises(ModelError, match="no metric 'acuracy'.*did you mean acc"):
        LmEvalAdapter.read_log(model_settings(**entry, metric="acuracy"), tmp_path)
    _samples_file(tmp_path, "mc", [1.0], filters=("strict", "flexible"))
    with pytest.raises(ModelError, match="filters flexible, strict; choose one with filter"):
        LmEvalAdapter.read_log(model_settings(**entry), tmp_path)


def test_without_data_every_model_must_be_a_log():
    with pytest.raises(
        ConfigError, match="give an experiment file.*--model without --data reads .*kind lm-eval, inspect"
    ):
        quick_experiment(None, ["a=lm-eval:runs/a", "b=preds.csv"])
    exp = quick_experiment(None, ["a=lm-eval:runs/a", "b=lm-eval:runs/b"])
    assert exp.data.path == "logs:" and exp.name == "logs-a-vs-b"
