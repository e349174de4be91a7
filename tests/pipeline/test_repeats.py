"""Repeated runs (``repeats:``, issue 41): k runs of one model as its passes, each seeded its own, stored per run,
what the runs show, the comparison over every run, and bad input refused in one line."""

from __future__ import annotations

import json
import logging
import warnings
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

import headtohead
from headtohead.cli.main import main
from headtohead.report.formats.terminal import render_text
from headtohead.report.rows.summary import summary_rows
from headtohead.report.sections.run import run_document
from headtohead.results.predictions import Predictions
from headtohead.stats.repeat_pool import two_level_gap
from headtohead.testing.chat_server import Reply, ScriptedChatServer, last_prompt_text
from headtohead.testing.data import make_text_rows, write_text_table


def _frame(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = rng.choice(["neg", "pos"], n)
    return pd.DataFrame({"text": [str(i) for i in range(n)], "label": labels}), (labels == "pos").astype(int)


def _stochastic(y: np.ndarray, p_right: np.ndarray, run_sd: float = 0.0):
    """A model right on example ``i`` with probability ``p_right[i]`` (shifted by a whole-run draw), drawn afresh on
    every run from NumPy's global generator — which headtohead seeds per repeat."""

    def predict(texts):
        rows = np.array([int(t) for t in texts])
        p = p_right[rows] + np.random.normal(0.0, run_sd) if run_sd else p_right[rows]  # noqa: NPY002 - seeded per run
        right = np.random.random(len(rows)) < p  # noqa: NPY002
        return np.eye(2)[np.where(right, y[rows], 1 - y[rows])]

    return predict


def _quiet():
    logging.getLogger("headtohead").setLevel(logging.ERROR)
    warnings.simplefilter("ignore")


def test_a_stochastic_python_model_run_5_times_stores_five_passes_and_the_changed_share_matches(tmp_path):
    frame, y = _frame(120, seed=3)
    model = _stochastic(y, np.full(120, 0.7))
    out = tmp_path / "out"
    run = headtohead.compare(
        {"coin": model, "rule": lambda texts: np.eye(2)[[int(t) % 2 for t in texts]]},
        frame,
        outputs={"coin": "probabilities", "rule": "probabilities"},
        repeats={"coin": 5},
        stats={"n_resamples": 100},
        out_dir=out,
    )
    record = run.result.model("coin")
    assert [p.key for p in record.passes] == ["r1", "r2", "r3", "r4", "r5"] and {p.factor for p in record.passes} == {
        "repeat"
    }
    assert record.passes[1].varies == "run 2 of 5 (seed 104771)" and not run.result.model("rule").passes
    stored = Predictions.load(out / "predictions.npz")["coin"]
    assert stored.pred.shape == (5, 120) and stored.factor == "repeat"
    assert len({tuple(row) for row in stored.pred}) == 5  # each run its own seed: five different runs
    changed = float((~(stored.pred == stored.pred[0]).all(axis=0)).mean())
    raw = json.loads((out / "results.json").read_text())
    (steady,) = raw["stats"]["repeats"]["models"]
    assert steady["changed_share"] == changed and steady["n_repeats"] == 5
    correct = stored.pred == Predictions.load(out / "predictions.npz").y_true
    assert steady["pass_all"] == pytest.approx(correct.all(axis=0).mean())
    assert steady["pass_any"] == pytest.approx(correct.any(axis=0).mean())
    accuracy = steady["spreads"][0]
    assert accuracy["metric"] == "accuracy" and accuracy["values"] == pytest.approx(list(correct.mean(axis=1)))
    assert accuracy["sd"] == pytest.approx(float(np.std(correct.mean(axis=1), ddof=1)))
    (pool,) = raw["stats"]["repeats"]["pools"]
    gap = two_level_gap(correct, _rule_correct(out))
    assert (pool["model_a"], pool["model_b"]) == ("coin", "rule") and pool["p_value"] == pytest.approx(gap.p_value)
    # the same run again gives the same five runs: a repeat's seed is derived from the run's
    again = headtohead.compare(
        {"coin": model, "rule": lambda texts: np.eye(2)[[int(t) % 2 for t in texts]]},
        frame,
        outputs={"coin": "probabilities", "rule": "probabilities"},
        repeats={"coin": 5},
        stats={"n_resamples": 100},
        out_dir=tmp_path / "again",
    )
    assert np.array_equal(Predictions.load(tmp_path / "again" / "predictions.npz")["coin"].pred, stored.pred)
    assert again.result.stats.repeats == run.result.stats.repeats
    text = render_text(run_document(run.result), width=200)
    assert "Repeated runs" in text and f"the answer changed across runs on {steady['changed']} of 120 examples" in text
    assert "pass^5" in text and "mean of 5 runs" in text
    floor = stats_t_floor(correct.mean(axis=1))
    assert steady["two_runs_differ"] == pytest.approx(floor)
    assert steady["means_differ"] == pytest.approx(floor / np.sqrt(5))
    assert f"two runs of coin differ by up to {100 * floor:.1f} pp (95 %); two means of 5 runs by up to" in text


def stats_t_floor(accuracy: np.ndarray) -> float:
    """An independent noise floor: Student's t prediction bound on the gap of two new runs."""
    from scipy import stats

    return float(stats.t.ppf(0.975, len(accuracy) - 1) * np.sqrt(2) * np.std(accuracy, ddof=1))


def _rule_correct(out: Path) -> np.ndarray:
    stored = Predictions.load(out / "predictions.npz")
    return (stored["rule"].pred == stored.y_true)[None, :]


def test_one_repeat_is_todays_run_exactly(tmp_path):
    frame, y = _frame(80, seed=4)
    models = {
        "a": _stochastic(y, np.full(80, 0.8)),
        "b": lambda texts: np.eye(2)[[int(t) % 2 for t in texts]],
    }
    kwargs = dict(outputs={"a": "probabilities", "b": "probabilities"}, stats={"n_resamples": 100})
    plain = headtohead.compare(models, frame, **kwargs).result
    once = headtohead.compare(models, frame, repeats=1, **kwargs).result
    assert not once.model("a").passes and once.stats.repeats is None
    assert once.stats.comparisons == plain.stats.comparisons and once.stats.models == plain.stats.models


def test_equal_models_of_opposite_strengths_are_rarely_called_different_over_every_run():
    """Done-when of issue 41 (a short version; the audit runs 200): two stochastic models, equal on average, right
    with probability 0.75 ± 0.2 by example (opposite), drawn afresh every run, plus whole-run noise."""
    _quiet()
    better = 0
    for seed in range(12):
        frame, y = _frame(200, seed)
        strength = np.random.default_rng(seed + 1000).choice([-0.2, 0.2], 200)
        run = headtohead.compare(
            {"a": _stochastic(y, 0.75 + strength, 0.03), "b": _stochastic(y, 0.75 - strength, 0.03)},
            frame,
            outputs={"a": "probabilities", "b": "probabilities"},
            repeats=5,
            stats={"n_resamples": 100},
            seed=seed,
        )
        (pool,) = run.result.stats.repeats.pools
        assert pool.n_repeats_a == pool.n_repeats_b == 5 and pool.n_examples == 200
        better += pool.significant
    assert better <= 2  # 5 % of 12 is 0.6; the level over 200 runs is the audit's (tests/stats/test_repeat_pool.py)


@pytest.mark.slow
def test_seeded_runs_through_compare_say_better_at_most_8_percent():
    """The done-when of issue 41 through headtohead.compare, on the first 60 of its 200 seeds.

    The 200 runs of the same design are the audit's row (``benchmarks/audit/repeats.py``, "through
    headtohead.compare(repeats=5)", ``docs/audit.md``: 1.5 %); here 60, so the suite keeps its time. Pooling the
    runs as independent examples says "better" about 21 % of the time (issue 41's simulation): some 13 of 60,
    where the bound allows 4.
    """
    _quiet()
    better, runs = 0, 60
    for seed in range(runs):
        frame, y = _frame(200, seed)
        strength = np.random.default_rng(seed + 1000).choice([-0.2, 0.2], 200)
        run = headtohead.compare(
            {"a": _stochastic(y, 0.75 + strength, 0.03), "b": _stochastic(y, 0.75 - strength, 0.03)},
            frame,
            outputs={"a": "probabilities", "b": "probabilities"},
            repeats=5,
            stats={"n_resamples": 100},
            seed=seed,
        )
        better += run.result.stats.repeats.pools[0].significant
    assert better / runs <= 0.08


def _cli_error(capsys, tmp_path: Path, experiment: dict) -> str:
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(experiment))
    with pytest.raises(SystemExit) as info:
        main(["run", str(path), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    errors = [line for line in err.splitlines() if line and not line.startswith("warning: ")]
    assert info.value.code == 2 and len(errors) == 1 and errors[0].startswith("error: "), err
    assert "Traceback" not in err
    return errors[0]


@pytest.mark.parametrize(
    ("model", "eval_", "said"),
    [
        ({"kind": "python", "source": "pkg.mod:make", "repeats": 0}, {}, "repeats is 0; it counts the model's runs"),
        ({"kind": "python", "source": "pkg.mod:make", "repeats": -2}, {}, "repeats is -2"),
        ({"kind": "python", "source": "pkg.mod:make"}, {"repeats": 0}, "eval.repeats is 0"),
        ({"kind": "predictions", "source": "{p}", "repeats": 3}, {}, "nothing to re-run"),
        ({"kind": "lm-eval", "source": "samples.jsonl", "repeats": 3}, {}, "nothing to re-run"),
        ({"kind": "inspect", "source": "log.eval", "repeats": 3}, {}, "nothing to re-run"),
        (
            {
                "kind": "openai",
                "source": "m",
                "base_url": "http://127.0.0.1:9/v1",
                "prompts": {"count": 3},
                "repeats": 2,
            },
            {},
            "prompts: and repeats: 2 together are not supported",
        ),
    ],
)
def test_bad_repeats_are_refused_in_one_line(tmp_path, capsys, model, eval_, said):
    rows = make_text_rows(10, classes=("neg", "pos"), seed=1)
    write_text_table(tmp_path / "dev.csv", rows)
    pd.DataFrame({"prediction": [r["label"] for r in rows]}).to_csv(tmp_path / "p.csv", index=False)
    entry = {"name": "m", **{k: v.format(p=tmp_path / "p.csv") if isinstance(v, str) else v for k, v in model.items()}}
    experiment = {
        "data": {"path": str(tmp_path / "dev.csv")},
        "models": [entry, {"name": "b", "kind": "predictions", "source": str(tmp_path / "p.csv")}],
        "eval": {"device": "cpu", **eval_},
    }
    assert said in _cli_error(capsys, tmp_path, experiment)


def test_eval_repeats_reaches_every_model_that_runs_and_leaves_stored_answers_read_once():
    from headtohead.config.schema import Experiment

    exp = Experiment.model_validate(
        {
            "data": {"path": "x.csv"},
            "models": [
                {"name": "a", "kind": "python", "source": "pkg.mod:make"},
                {"name": "b", "kind": "python", "source": "pkg.mod:make", "repeats": 2},
                {"name": "c", "kind": "predictions", "source": "p.csv"},
            ],
            "eval": {"repeats": 4},
        }
    )
    assert [len(m.pass_specs()) for m in exp.models] == [4, 2, 0]
    with pytest.raises(ValueError, match="is run several times .* no sequential test yet"):
        Experiment.model_validate(
            {
                "data": {"path": "x.csv"},
                "models": [
                    {"name": "a", "kind": "python", "source": "pkg.mod:make"},
                    {"name": "c", "kind": "predictions", "source": "p.csv"},
                ],
                "eval": {"repeats": 3, "until_decided": True},
            }
        )


def test_stored_files_given_as_repeats_are_pooled_as_runs(tmp_path):
    frame, y = _frame(60, seed=9)
    rng = np.random.default_rng(2)
    runs = [np.where(rng.random(60) < 0.8, y, 1 - y) for _ in range(3)]
    files = []
    for k, pred in enumerate(runs):
        path = tmp_path / f"r{k + 1}.csv"
        pd.DataFrame({"prediction": np.array(["neg", "pos"])[pred]}).to_csv(path, index=False)
        files.append(str(path))
    run = headtohead.compare(
        {"llm": files, "base": np.array(["neg", "pos"])[np.where(rng.random(60) < 0.6, y, 1 - y)]},
        frame,
        passes={"llm": "repeat"},
        stats={"n_resamples": 100},
    )
    summary = run.result.stats.repeats
    assert [m.name for m in summary.models] == ["llm"] and summary.models[0].n_repeats == 3
    correct = np.array(runs) == y[None, :]
    assert summary.models[0].pass_all == pytest.approx(correct.all(axis=0).mean())
    assert run.result.stats.model("llm").accuracy.value == pytest.approx(correct.mean())


class _Sampled:
    """Answers by the seed a request carries: the label for an even seed's hash, the other one otherwise."""

    def __init__(self, truth: dict[str, str]) -> None:
        self.truth, self.seeds = truth, []

    def __call__(self, number: int, payload: dict) -> Reply:
        self.seeds.append(payload.get("seed"))
        prompt = last_prompt_text(payload)
        text = max((t for t in self.truth if t in prompt), key=len)
        flip = zlib.crc32(f"{text}|{payload.get('seed')}".encode()) % 3 == 0
        label = self.truth[text]
        return Reply(text=label if not flip else ("negative" if label == "positive" else "positive"))


def test_an_endpoint_is_sent_each_repeats_seed_and_the_cache_keeps_repeats_apart(tmp_path, monkeypatch):
    monkeypatch.setenv("H2H_CACHE_DIR", str(tmp_path / "cache"))
    rows = make_text_rows(10, classes=("negative", "positive"), seed=5)
    write_text_table(tmp_path / "dev.csv", rows)
    script = _Sampled({r["text"]: r["label"] for r in rows})
    with ScriptedChatServer(script) as server:
        experiment = {
            "data": {"path": str(tmp_path / "dev.csv")},
            "models": [
                {
                    "name": "llm",
                    "kind": "openai",
                    "source": "scripted",
                    "base_url": server.base_url,
                    "repeats": 3,
                    "temperature": 0.7,
                },
                {"name": "once", "kind": "openai", "source": "scripted", "base_url": server.base_url},
            ],
            "eval": {"device": "cpu"},
            "stats": {"n_resamples": 100},
        }
        first = headtohead.run(experiment, out_dir=tmp_path / "a").result
        sent = server.counts.requests
        assert sent == 20 * 4  # three repeats and one run, none answered from another's cache
        assert sorted({s for s in script.seeds if s is not None}) == [42, 104771, 209500]
        assert script.seeds.count(None) == 20  # a model run once sends no seed (its cache keys unchanged)
        headtohead.run(experiment, out_dir=tmp_path / "b")
        assert server.counts.requests == sent  # a second identical run: every repeat from its own cache entry
    assert [p.key for p in first.model("llm").passes] == ["r1", "r2", "r3"]


def test_the_gate_decides_a_repeated_model_over_every_run(tmp_path):
    frame, y = _frame(300, seed=21)
    models = {"base": _stochastic(y, np.full(300, 0.8)), "cand": _stochastic(y, np.full(300, 0.8))}
    run = headtohead.compare(
        models,
        frame,
        outputs={"base": "probabilities", "cand": "probabilities"},
        repeats=4,
        stats={"n_resamples": 100},
        out_dir=tmp_path,
    )
    outcome = headtohead.gate(run, baseline="base", candidate="cand", max_accuracy_drop="20pp")
    (decision,) = outcome.decisions
    stored = Predictions.load(tmp_path / "predictions.npz")
    gap = two_level_gap(stored["cand"].pred == stored.y_true, stored["base"].pred == stored.y_true)
    assert (decision.estimate, decision.low, decision.high) == pytest.approx((gap.estimate, gap.low, gap.high))
    assert decision.outcome == "pass" and decision.method == "two-level t over 4 × 4 runs"
    with pytest.raises(headtohead.ConfigError, match="the gate over runs tests accuracy only"):
        headtohead.gate(run, baseline="base", candidate="cand", max_accuracy_drop=0.2, metric="f1_macro")


def test_a_repeat_whose_every_answer_is_unreadable_scores_zero_and_the_run_goes_on(tmp_path, monkeypatch):
    """An answer that cannot be read is the model's wrong answer, even when a whole repeat gives only such answers
    (a sampled small LLM can): that run counts 0 %, the others as they came; no "no prediction" error."""
    monkeypatch.setenv("H2H_CACHE_DIR", str(tmp_path / "cache"))
    rows = make_text_rows(12, classes=("negative", "positive"), seed=6)
    write_text_table(tmp_path / "dev.csv", rows)
    truth = {r["text"]: r["label"] for r in rows}

    def script(number: int, payload: dict) -> Reply:
        if payload.get("seed") == 104771:  # the second repeat's seed: it rambles
            return Reply(text="I would rather not say.")
        prompt = last_prompt_text(payload)
        return Reply(text=truth[max((t for t in truth if t in prompt), key=len)])

    with ScriptedChatServer(script) as server:
        experiment = {
            "data": {"path": str(tmp_path / "dev.csv")},
            "models": [
                {"name": "llm", "kind": "openai", "source": "scripted", "base_url": server.base_url, "repeats": 3},
                {"name": "once", "kind": "openai", "source": "scripted", "base_url": server.base_url},
            ],
            "eval": {"device": "cpu"},
            "stats": {"n_resamples": 100},
        }
        run = headtohead.run(experiment, out_dir=tmp_path / "out")
    stored = Predictions.load(tmp_path / "out" / "predictions.npz")["llm"]
    assert (stored.pred[1] == -1).all() and (stored.pred[[0, 2]] != -1).all()
    (steady,) = run.result.stats.repeats.models
    accuracy = steady.spreads[0]
    assert accuracy.metric == "accuracy" and accuracy.values == pytest.approx([1.0, 0.0, 1.0])
    pooled = run.result.stats.model("llm").accuracy
    assert pooled.value == pytest.approx(2 / 3)
    # bounds a share can reach: two runs differ by at most 100 pp, three shares have an SD of at most √(1/3)
    assert steady.two_runs_differ == steady.means_differ == 1.0
    assert accuracy.sd == pytest.approx(np.sqrt(1 / 3)) and accuracy.sd_high == pytest.approx(np.sqrt(1 / 3))
    answered = summary_rows(run.result)["llm"]["accuracy_answered"]
    assert answered.value is None and answered.note == "none answered"  # the second run's is unknown, not 0
    text = render_text(run_document(run.result))
    assert "no prediction for any example" not in text
