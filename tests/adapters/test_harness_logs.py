"""Other harnesses' logs as contenders: real lm-evaluation-harness and Inspect runs, made offline, compared.

lm-eval runs two tiny GPT-2s (its ``hf`` model type on local folders) on a local multiple-choice
group of two tasks; model b runs without 3 documents of one task. Inspect runs its ``mockllm``
model over 4 epochs, one sample refused and (for b) one raising an error and two answered in
words its scorer cannot read. The logs are made once
per session (lm-eval takes a minute a run on a busy machine).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize, stats

import headtohead
from headtohead.data.logged import LOGS
from headtohead.results import Predictions
from headtohead.results.files import PREDICTIONS_FILE
from headtohead.stats.paired import difference_interval

MISSING = (4, 11, 19)
#: The samples b's model answers in words, without ANSWER: (Inspect scores them wrong, invalid_response_format).
PROSE = ("s7", "s8")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def lm_eval_logs(built_once) -> tuple[Path, Path]:
    """Two lm-eval runs of two tiny GPT-2s over a group of two tasks (built once per session: about 30 s)."""
    pytest.importorskip("lm_eval", reason='lm-eval is not installed (pip install "headtohead[lm-eval]")')
    from headtohead.testing.harness_logs import LM_EVAL_TASKS, build_tiny_gpt2, run_lm_eval, write_lm_eval_group

    def build(root: Path) -> None:
        from concurrent.futures import ThreadPoolExecutor

        tasks = write_lm_eval_group(root)
        a, b = build_tiny_gpt2(root / "model-a", seed=0), build_tiny_gpt2(root / "model-b", seed=1)
        keep = {LM_EVAL_TASKS[0]: [i for i in range(30) if i not in MISSING], LM_EVAL_TASKS[1]: list(range(30))}
        # the two lm_eval processes side by side: the other xdist workers wait for this folder (built_once)
        with ThreadPoolExecutor(2) as pool:
            runs = [
                pool.submit(run_lm_eval, a, tasks, root / "out-a"),
                pool.submit(run_lm_eval, b, tasks, root / "out-b", samples=keep),
            ]
            for run in runs:
                run.result()

    root = built_once("lm-eval-logs", build)
    a, b = ([f.parent for f in (root / out).rglob("samples_*.jsonl")][0] for out in ("out-a", "out-b"))
    return a, b


@pytest.fixture(scope="session")
def inspect_logs(tmp_path_factory) -> tuple[Path, Path]:
    pytest.importorskip("inspect_ai", reason='inspect-ai is not installed (pip install "headtohead[inspect]")')
    from headtohead.testing.harness_logs import inspect_log

    root = tmp_path_factory.mktemp("inspect")
    return inspect_log(root / "a", seed=0, epochs=4), inspect_log(root / "b", seed=1, epochs=4, prose=PROSE)


def _acc(folder: Path, task: str) -> dict[int, dict]:
    """Each document's logged line, by doc_id, read here straight from the samples file."""
    (file,) = folder.glob(f"samples_{task}_*.jsonl")
    return {line["doc_id"]: line for line in map(json.loads, file.read_text().splitlines())}


def test_two_lm_eval_logs_give_statsmodels_mcnemar_on_the_documents_both_hold(lm_eval_logs, tmp_path):
    from statsmodels.stats.contingency_tables import mcnemar

    a, b = lm_eval_logs
    task = "tinycolours"
    experiment = {
        "data": {"path": LOGS},
        "models": [
            {"name": "a", "kind": "lm-eval", "source": str(a), "tasks": [task]},
            {"name": "b", "kind": "lm-eval", "source": str(b), "tasks": [task]},
        ],
        "speed": {"enabled": False},
    }
    result = headtohead.run(experiment, out_dir=tmp_path / "run").result
    # the 3 documents b never ran are named and left out; the paired set is the other 27
    assert result.dataset.n_examples == 27
    (reason,) = result.dataset.skipped
    assert result.dataset.skipped[reason] == 3
    assert all(f"{task}/{doc}" in reason for doc in MISSING) and "'a'" in reason
    # statsmodels' McNemar on the 2x2 table counted here from the logs' own acc, on the intersection
    lines_a, lines_b = _acc(a, task), _acc(b, task)
    shared = sorted(set(lines_a) & set(lines_b))
    right_a = np.array([lines_a[d]["acc"] == 1.0 for d in shared])
    right_b = np.array([lines_b[d]["acc"] == 1.0 for d in shared])
    table = [
        [np.sum(right_a & right_b), np.sum(right_a & ~right_b)],
        [np.sum(~right_a & right_b), np.sum(~right_a & ~right_b)],
    ]
    (pair,) = result.stats.comparisons
    assert pair.table.only_a_correct == table[0][1] and pair.table.only_b_correct == table[1][0]
    assert pair.table.only_a_correct + pair.table.only_b_correct > 0  # the two models disagree somewhere
    assert pair.p_value == pytest.approx(mcnemar(table, exact=False, correction=False).pvalue, rel=1e-12)
    assert [m.quality.accuracy for m in result.models] == pytest.approx([right_a.mean(), right_b.mean()])
    # class probabilities: the softmax of each document's per-choice log-likelihoods, the choices the classes
    assert result.dataset.label_names == ["red", "blue", "green", "gold"]  # the task's choices, by their text
    predictions = Predictions.load(tmp_path / "run" / PREDICTIONS_FILE)
    proba = predictions.in_dataset_order("a").proba
    lls = np.array([[float(r[0]) for r in lines_a[d]["filtered_resps"]] for d in shared])
    np.testing.assert_allclose(proba, np.exp(lls) / np.exp(lls).sum(axis=1, keepdims=True), rtol=1e-5)


def test_an_inspect_log_of_4_epochs_is_clustered_by_sample_without_an_option(inspect_logs, tmp_path):
    from inspect_ai.log import read_eval_log

    a, b = inspect_logs
    experiment = {
        "data": {"path": LOGS},
        "models": [
            {"name": "a", "kind": "inspect", "source": str(a)},
            {"name": "b", "kind": "inspect", "source": str(b)},
        ],
        "speed": {"enabled": False},
    }
    result = headtohead.run(experiment, out_dir=tmp_path / "run").result
    assert result.stats.settings.group_column == "sample" and result.stats.settings.n_groups == 12
    assert result.dataset.n_examples == 48
    (pair,) = result.stats.comparisons
    assert pair.test == "mcnemar-clustered"
    # failures: a's refused sample in 4 epochs; b's refused one, its erroring one and its two answered in prose
    assert [m.quality.n_failed for m in result.models] == [4, 16]
    # the interval of the gap, computed here from the logs by Inspect's reader: the cluster-robust score interval
    right: dict[str, dict[tuple[str, int], bool]] = {}
    for name, path in (("a", a), ("b", b)):
        log = read_eval_log(str(path))
        right[name] = {
            (str(s.id), s.epoch): s.error is None
            and s.output.stop_reason != "content_filter"
            and (s.scores or {}).get("choice") is not None
            and s.scores["choice"].value == "C"
            for s in log.samples
        }
    keys = sorted(right["a"])
    d = np.array([int(right["a"][k]) - int(right["b"][k]) for k in keys], dtype=float)
    samples = np.array([k[0] for k in keys])
    sums = np.array([d[samples == s].sum() for s in np.unique(samples)])
    sizes = np.array([(samples == s).sum() for s in np.unique(samples)], dtype=float)
    z, total, n = stats.norm.ppf(0.975), d.sum(), len(d)

    def excess(theta: float) -> float:  # score statistic minus z²: zero at the interval's ends
        return (total - theta * n) ** 2 - z * z * np.sum((sums - theta * sizes) ** 2)

    gap = total / n
    low, high = optimize.brentq(excess, -1.0, gap), optimize.brentq(excess, gap, 1.0)
    accuracy = pair.difference("accuracy")
    assert accuracy.difference == pytest.approx(gap)
    assert (accuracy.ci_low, accuracy.ci_high) == pytest.approx((low, high), abs=1e-9)
    # grouping widens it beyond Tango's interval for 48 independent examples
    flat = difference_interval(pair.table.only_a_correct, pair.table.only_b_correct, n)
    assert low < float(flat[0]) and high > float(flat[1])


def test_h2h_suite_over_the_tasks_of_an_lm_eval_group(lm_eval_logs, tmp_path):
    from headtohead.cli.main import main
    from headtohead.results.suite import load_suite_result

    a, b = lm_eval_logs
    main(["suite", "--model", f"a=lm-eval:{a}", "--model", f"b=lm-eval:{b}", "--out", str(tmp_path / "suite")])
    suite = load_suite_result(tmp_path / "suite" / "suite.json")
    assert [d.name for d in suite.datasets] == ["tinycolours", "tinyshapes"]
    runs = {d: headtohead.load_result(tmp_path / "suite" / d / "results.json") for d in ("tinycolours", "tinyshapes")}
    assert {d: r.dataset.n_examples for d, r in runs.items()} == {"tinycolours": 27, "tinyshapes": 30}
    # two tasks: the Wilcoxon test cannot go below p = 0.5, nor can the Bayesian test give a verdict of its own
    said = " ".join(suite.verdict)
    assert "Practically better" not in said and "No Bayesian verdict with 2 data sets: below 4" in said


def test_h2h_run_compares_two_lm_eval_folders_without_data_sliced_by_task(lm_eval_logs, tmp_path, capsys):
    from headtohead.cli.main import main
    from headtohead.results import load_result

    a, b = lm_eval_logs
    out = tmp_path / "run"
    main(
        [
            "run",
            "--model",
            f"a=lm-eval:{a}",
            "--model",
            f"b=lm-eval:{b}",
            "--out",
            str(out),
            "--set",
            "speed.enabled=false",
        ]
    )
    printed = capsys.readouterr()
    assert "tinycolours/4, tinycolours/11, tinycolours/19" in printed.out + printed.err
    result = load_result(out / "results.json")
    assert result.experiment["data"]["path"] == LOGS and result.dataset.n_examples == 57
    tasks = {s.value for s in result.stats.slices.slices if s.column == "task"}
    assert tasks == {"tinycolours", "tinyshapes"}
    # each task keeps its own classes, named by their choices: no class is both a colour and a shape
    colours = [f"tinycolours:{w}" for w in ("red", "blue", "green", "gold")]
    shapes = [f"tinyshapes:{w}" for w in ("cube", "cone", "ring", "star")]
    assert result.dataset.label_names == colours + shapes
    gold = {
        task: {d: int(line["target"]) for d, line in _acc(a, task).items()} for task in ("tinycolours", "tinyshapes")
    }
    shared = {"tinycolours": sorted(set(gold["tinycolours"]) - set(MISSING)), "tinyshapes": sorted(gold["tinyshapes"])}
    counts = [sum(gold[t][d] == j for d in shared[t]) for t in ("tinycolours", "tinyshapes") for j in range(4)]
    assert result.dataset.class_counts == counts
    predictions = Predictions.load(out / PREDICTIONS_FILE)
    task_of = np.array([0] * len(shared["tinycolours"]) + [1] * len(shared["tinyshapes"]))  # the data's order
    for name in ("a", "b"):
        own = predictions.in_dataset_order(name)
        assert np.array_equal(own.pred // 4, task_of)  # a document's prediction is one of its own task's classes
        outside = np.where(task_of[:, None] == 0, own.proba[:, 4:], own.proba[:, :4])
        assert np.all(outside == 0) and np.allclose(own.proba.sum(axis=1), 1.0, atol=1e-6)
    per_class = {c.label: c.support for c in result.models[0].quality.per_class}
    assert per_class == dict(zip(colours + shapes, counts, strict=True))
    classes = {s.value for s in result.stats.slices.slices if s.column is None}
    assert classes <= set(colours + shapes)


def _exit_of(argv: list[str], capsys) -> tuple[int, str]:
    """The exit code and the last printed line of ``h2h <argv>``."""
    from headtohead.cli.main import main

    with pytest.raises(SystemExit) as stopped:
        main(argv)
    printed = capsys.readouterr()
    lines = [line for line in (printed.err + printed.out).splitlines() if line.strip()]
    return int(stopped.value.code), lines[-1]


def test_the_same_log_given_for_both_models_is_refused_in_one_line(lm_eval_logs, inspect_logs, tmp_path, capsys):
    a, _ = lm_eval_logs
    (task_file,) = a.glob("samples_tinycolours_*.jsonl")
    inspect_a, _ = inspect_logs
    for first, second in (
        (f"lm-eval:{a}", f"lm-eval:{a}"),
        (f"lm-eval:{a}", f"lm-eval:{a}/"),
        (f"lm-eval:{a}", f"lm-eval:{task_file}"),  # one task of the folder: its documents compared with themselves
        (str(inspect_a), str(inspect_a)),
    ):
        code, line = _exit_of(
            ["run", "--model", f"a={first}", "--model", f"b={second}", "--out", str(tmp_path / "r")], capsys
        )
        assert code == 2 and "'a' and 'b' read the same log" in line and "compared with itself" in line, line
    code, line = _exit_of(
        ["suite", "--model", f"a=lm-eval:{a}", "--model", f"b=lm-eval:{a}", "--out", str(tmp_path / "s")], capsys
    )
    assert code == 2 and "compared with itself" in line, line
    # the same run read by two metrics is two scoring rules over the same answers: allowed
    experiment = {
        "data": {"path": LOGS},
        "models": [
            {"name": "acc", "kind": "lm-eval", "source": str(a)},
            {"name": "norm", "kind": "lm-eval", "source": str(a), "metric": "acc_norm"},
        ],
        "speed": {"enabled": False},
    }
    assert headtohead.run(experiment, out_dir=tmp_path / "two-rules").result.dataset.n_examples == 60


def test_acc_norm_class_probabilities_are_argmaxed_by_the_choice_acc_norm_took(lm_eval_logs, tmp_path):
    """acc_norm takes the choice of the largest log-likelihood per character: the class probabilities are the softmax
    of those scores, so the most probable class is the one predicted (a softmax of the raw log-likelihoods is not)."""
    a, b = lm_eval_logs
    task, words = "tinycolours", ("red", "blue", "green", "gold")
    experiment = {
        "data": {"path": LOGS},
        "models": [
            {"name": name, "kind": "lm-eval", "source": str(path), "tasks": [task], "metric": "acc_norm"}
            for name, path in (("a", a), ("b", b))
        ],
        "speed": {"enabled": False},
    }
    result = headtohead.run(experiment, out_dir=tmp_path / "run").result
    predictions = Predictions.load(tmp_path / "run" / PREDICTIONS_FILE)
    lines = _acc(a, task)
    docs = sorted(set(lines) & set(_acc(b, task)))  # the documents both runs hold, in the data's order
    lls = np.array([[float(r[0]) for r in lines[d]["filtered_resps"]] for d in docs])
    per_char = lls / np.array([len(w) for w in words], dtype=float)
    assert (lls.argmax(axis=1) != per_char.argmax(axis=1)).sum() >= 2  # the two rules part ways on these documents
    own = predictions.in_dataset_order("a")
    expected = np.exp(per_char - per_char.max(axis=1, keepdims=True))
    np.testing.assert_allclose(own.proba, expected / expected.sum(axis=1, keepdims=True), rtol=1e-5)
    right = np.array([lines[d]["acc_norm"] == 1.0 for d in docs])
    y_true = np.asarray(predictions.y_true)[np.argsort(predictions.order, kind="stable")]
    assert np.array_equal(own.pred == y_true, right)  # acc_norm's own verdicts
    assert np.array_equal(
        own.proba.argmax(axis=1)[~right], own.pred[~right]
    )  # the most probable class is the one taken
    assert result.models[0].quality.accuracy == pytest.approx(right.mean())


def test_an_inspect_answer_its_scorer_could_not_read_is_a_failure_listed_with_its_input_and_gold(
    inspect_logs, tmp_path
):
    """Inspect scores a reply without ANSWER: wrong, with the reason invalid_response_format: the model's failure,
    counted as no prediction and listed with its input, gold and raw answer, as an LLM's unparseable answers are."""
    from inspect_ai.log import read_eval_log

    from headtohead.report.endpoint import endpoint_lines, unparseable_rows
    from headtohead.report.words.warnings import model_warnings

    a, b = inspect_logs
    log = read_eval_log(str(b))
    unread = {f"{s.id}#{s.epoch}": s for s in log.samples if s.scores and s.scores["choice"].reason == "invalid_response_format" and s.output.stop_reason != "content_filter"}  # fmt: skip
    assert sorted({key.split("#")[0] for key in unread}) == list(PROSE) and len(unread) == 8
    experiment = {
        "data": {"path": LOGS},
        "models": [
            {"name": "a", "kind": "inspect", "source": str(a)},
            {"name": "b", "kind": "inspect", "source": str(b)},
        ],
        "speed": {"enabled": False},
    }
    run = headtohead.run(experiment, out_dir=tmp_path / "run", report=True)
    model = run.result.model("b")
    predictions = Predictions.load(tmp_path / "run" / PREDICTIONS_FILE).in_dataset_order("b")
    ids = _dataset_ids(run)
    assert all(predictions.pred[ids.index(key)] == -1 for key in unread)  # no prediction: a wrong answer
    assert model.quality.n_failed == 16 and model.answers.n_unparseable == 8 and model.answers.n_failed == 8
    listed = {u.id: u for u in model.answers.unparseable}
    assert set(listed) == set(unread)
    for key, item in listed.items():
        sample = unread[key]
        assert item.input == sample.input and item.answer == sample.output.completion
        assert item.gold == ("yes" if sample.target == "A" else "no")  # the class of its right choice, by its text
    rows = unparseable_rows(model)
    assert {r["example"] for r in rows} == set(unread) and all("ANSWER" not in r["raw answer"] for r in rows)
    lines = endpoint_lines(model)
    assert (
        "read from its log" in lines[0]
        and "8 unparseable answers of the 40 that came back, 8 without an answer" in lines[2]
    )
    said = " ".join(model_warnings(model))
    assert "8 of the 40 answers in its log could not be read" in said and "prediction file" not in said
    assert "no answer in its log for 8 of 48 examples" in said and "fp16" not in said
    html = (tmp_path / "run" / "report.html").read_text()
    assert "Unparseable answers of b" in html and "I would say the s7 one is the first" in html
    answers = [json.loads(line) for line in (tmp_path / "run" / "answers" / "b.jsonl").read_text().splitlines()]
    assert len(answers) == 48 and sum(r["label"] is None and r["answer"] is not None for r in answers) == 8


def _dataset_ids(run) -> list[str]:
    """The run's example ids in the data's order (from the answers file every model with answers writes)."""
    rows = [json.loads(line) for line in (run.out_dir / "answers" / "a.jsonl").read_text().splitlines()]
    return [r["id"] for r in sorted(rows, key=lambda r: r["index"])]
