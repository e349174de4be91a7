"""The noise floor (issue 41, item 4): ``--noise-floor`` runs every model that runs several times and states how far
two of its runs differ; a gap within a pair's larger floor is never called better; a model listed twice is worded
as one model's noise; bad input refused in one line."""

from __future__ import annotations

import json
import logging
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

import headtohead
from headtohead.cli.main import main
from headtohead.report.formats.terminal import render_text
from headtohead.report.sections.run import run_document
from headtohead.testing.known import known_accuracy_rows

_NOISY = textwrap.dedent(
    """
    import numpy as np

    LABELS = ["negative", "positive"]


    def make(accuracy=0.75, run_sd=0.0):
        # right on each example with probability `accuracy` (+ a whole-run shift), drawn afresh from NumPy's global
        # generator, which headtohead seeds per repeat
        shift = float(np.random.normal(0.0, run_sd)) if run_sd else 0.0

        def predict(texts):
            truth = np.array([LABELS.index(str(t).split()[-1]) for t in texts])
            right = np.random.random(len(truth)) < accuracy + shift
            return np.eye(2)[np.where(right, truth, 1 - truth)]

        return predict
    """
)


@pytest.fixture
def noisy_module(tmp_path, monkeypatch):
    (tmp_path / "noisy_model.py").write_text(_NOISY)
    monkeypatch.syspath_prepend(str(tmp_path))
    logging.getLogger("headtohead").setLevel(logging.ERROR)
    return tmp_path


def _experiment(tmp_path: Path, models: list[dict], **eval_: object) -> Path:
    rows = known_accuracy_rows(80, seed=7)
    pd.DataFrame(rows).to_csv(tmp_path / "dev.csv", index=False)
    experiment = {
        "name": "floor",
        "data": {"path": str(tmp_path / "dev.csv")},
        "models": models,
        "eval": {"device": "cpu", **eval_},
        "stats": {"n_resamples": 100},
        "speed": {"enabled": False},
    }
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(experiment))
    return path


def _noisy(name: str, accuracy: float = 0.75) -> dict:
    return {
        "name": name,
        "kind": "python",
        "source": "noisy_model:make",
        "model_args": {"accuracy": accuracy},
        "outputs": "probabilities",
    }


def _known(name: str, accuracy: float) -> dict:
    return {
        "name": name,
        "kind": "python",
        "source": "headtohead.testing.known:known_accuracy",
        "model_args": {"accuracy": accuracy, "seed": 3},
        "outputs": "probabilities",
    }


def test_noise_floor_runs_every_model_five_times_and_stores_each_floor(noisy_module, capsys):
    """``h2h run --noise-floor``: 5 runs of each model that runs; each model's single-run bound ``t_{0.975, 4}·√2·s``
    of its runs' accuracies and its floor, that over √5 (how far two means of 5 runs differ) — recomputed here from
    predictions.npz — in results.json and the report; a seeded model of fixed answers has the floor 0."""
    from scipy import stats

    from headtohead.results.predictions import Predictions

    path = _experiment(noisy_module, [_noisy("llm"), _known("rule", 0.7)])
    out = noisy_module / "out"
    main(["run", str(path), "--out", str(out), "--noise-floor"])
    raw = json.loads((out / "results.json").read_text())
    assert raw["experiment"]["eval"]["noise_floor"] is True
    models = raw["stats"]["repeats"]["models"]
    floors = {m["name"]: (m["n_repeats"], m["two_runs_differ"], m["means_differ"]) for m in models}
    stored = Predictions.load(out / "predictions.npz")
    accuracy = (stored["llm"].pred == stored.y_true).mean(axis=1)
    single = float(stats.t.ppf(0.975, 4) * np.sqrt(2) * np.std(accuracy, ddof=1))
    expected = single / np.sqrt(5)  # how far two means of 5 runs differ: the floor a gap over runs is held against
    assert floors["llm"][0] == 5 and floors["llm"][1] == pytest.approx(single) and single > 0.02
    assert floors["llm"][2] == pytest.approx(expected)
    assert floors["rule"] == (5, 0.0, 0.0)  # its answers are fixed by its own seed: five identical runs
    (pool,) = raw["stats"]["repeats"]["pools"]
    assert pool["noise_floor"] == pytest.approx(expected) and pool["floor_of"] == "llm"
    assert pool["within_floor"] == (abs(pool["estimate"]) <= expected)
    printed = " ".join(capsys.readouterr().out.split())
    assert (
        f"two runs of llm differ by up to {100 * single:.1f} pp (95 %); two means of 5 runs by up to "
        f"{100 * expected:.1f} pp: the noise floor its gaps are held against" in printed
    )
    # per slice (the classes), llm − rule over every run, in the slices' Holm family
    slices = raw["stats"]["slices"]
    assert [len(s["pairs"]) for s in slices["slices"]] == [0, 0] and slices["n_tests"] == 2
    for found in slices["slices"]:
        (over,) = found["repeat_pairs"]
        assert (over["model_a"], over["model_b"], over["n_examples"]) == ("llm", "rule", found["n_examples"])
    from headtohead.report.rows.where import slice_table
    from headtohead.results.records import RunResult

    result = RunResult.model_validate(raw)
    columns, rows = slice_table(result)
    assert [c.key for c in columns][-2:] == ["llm − rule over runs (pp)", "llm − rule over runs Holm p"]
    assert [r.cells["llm − rule over runs (pp)"].value for r in rows] == [
        s["repeat_pairs"][0]["estimate"] for s in slices["slices"]
    ]
    text = " ".join(render_text(run_document(result), width=250).split())
    assert "A pair with a model run several times ('over runs') is compared on the slice over every run" in text


def test_a_model_listed_twice_is_worded_as_its_own_noise_never_as_better(noisy_module):
    """Issue 41's "a model compared with itself": the same settings under two names, under --noise-floor. Each
    repeat is seeded alike in both copies, so their answers agree run by run; the words say so and point at the
    floor measured across runs seeded apart."""
    path = _experiment(noisy_module, [_noisy("llm"), {**_noisy("llm"), "name": "again"}, _known("rule", 0.9)])
    out = noisy_module / "out"
    main(["run", str(path), "--out", str(out), "--noise-floor"])
    raw = json.loads((out / "results.json").read_text())
    twins = next(p for p in raw["stats"]["repeats"]["pools"] if {p["model_a"], p["model_b"]} == {"llm", "again"})
    assert twins["same_settings"] and not twins["significant"] and twins["estimate"] == 0.0
    others = [p for p in raw["stats"]["repeats"]["pools"] if p is not twins]
    assert not any(p["same_settings"] for p in others)
    from headtohead.results.records import RunResult

    text = " ".join(render_text(run_document(RunResult.model_validate(raw)), width=200).split())
    assert "llm and again are one model listed twice (the same settings, run with the same seeds" in text
    assert (
        "is that model's own run-to-run noise, not a difference of models; its noise floor, from runs seeded " in text
    )
    assert "llm's noise floor (two means of 5 runs of llm differ by up to" in text


def test_a_gap_within_the_noise_floor_is_never_called_better():
    """A pair whose test alone says "better" (Holm p ≤ α) but whose gap is no larger than the larger floor: no
    winner, the ranking ties them, and the words say why; the same gap outside the floor is called better."""
    from headtohead.report.words.repeats import pool_sentence
    from headtohead.results.repeats import RepeatPool, RepeatSummary
    from headtohead.stats.repeat_pool import _decided

    pool = RepeatPool(
        model_a="llm",
        model_b="enc",
        n_repeats_a=5,
        n_repeats_b=1,
        n_examples=2000,
        estimate=0.012,
        low=0.004,
        high=0.020,
        p_value=0.003,
        p_adjusted=0.003,
        df=40.0,
        se_examples=0.004,
        se_runs=0.001,
        significant=False,
        noise_floor=0.013,
        floor_of="llm",
        within_floor=True,
    )
    withheld = _decided(pool, 0.003, 0.05)
    assert not withheld.significant and withheld.winner is None
    said = pool_sentence(withheld, 1)
    assert said.startswith(
        "No decision over 5 runs of llm: the 1.2 pp gap is within llm's noise floor (two means of 5 runs of llm "
        "differ by up to 1.3 pp, 95 %), so neither is called better though the test alone would"
    )
    outside = _decided(pool.model_copy(update={"noise_floor": 0.01, "within_floor": False}), 0.003, 0.05)
    assert outside.significant and outside.winner == "llm"
    assert pool_sentence(outside, 1).startswith("llm is better than enc over 5 runs of llm")
    RepeatSummary(models=[], pools=[withheld], alpha=0.05)  # a valid record


def test_through_compare_a_small_real_gap_inside_a_wide_floor_is_withheld():
    """Through headtohead.compare(noise_floor=True): a stochastic model with a whole-run noise of 3 pp against a
    fixed one about 2 pp below it on 3,000 examples. Here the two-level test alone says "better" (Holm p 0.041), but
    the 2.07 pp gap lies within the noisy model's floor (two means of its 5 runs differ by up to 2.12 pp): no winner,
    and the words say why."""
    logging.getLogger("headtohead").setLevel(logging.ERROR)
    n = 3000
    rng = np.random.default_rng(7)
    labels = rng.choice(["neg", "pos"], n)
    y = (labels == "pos").astype(int)
    frame = pd.DataFrame({"text": [str(i) for i in range(n)], "label": labels})
    fixed_right = rng.random(n) < 0.782

    def noisy(texts):
        rows = np.array([int(t) for t in texts])
        right = np.random.random(len(rows)) < 0.80 + np.random.normal(0.0, 0.03)  # noqa: NPY002 - seeded per run
        return np.eye(2)[np.where(right, y[rows], 1 - y[rows])]

    def fixed(texts):
        rows = np.array([int(t) for t in texts])
        return np.eye(2)[np.where(fixed_right[rows], y[rows], 1 - y[rows])]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = headtohead.compare(
            {"llm": noisy, "enc": fixed},
            frame,
            outputs={"llm": "probabilities", "enc": "probabilities"},
            noise_floor=True,
            stats={"n_resamples": 100},
            seed=2,
        )
    summary = run.result.stats.repeats
    (pool,) = summary.pools
    floors = {m.name: m.means_differ for m in summary.models}
    assert all(m.means_differ == pytest.approx(m.two_runs_differ / np.sqrt(5)) for m in summary.models)
    assert pool.n_repeats_a == pool.n_repeats_b == 5 and floors["enc"] is not None and floors["llm"] > 0
    assert pool.noise_floor == max(floors.values()) and pool.within_floor == (abs(pool.estimate) <= pool.noise_floor)
    assert pool.within_floor and pool.p_adjusted <= 0.05 and not pool.significant and pool.winner is None
    assert not pool.same_settings  # two different objects handed over, not one model listed twice
    assert summary.sentences[0].startswith(
        f"No decision over 5 × 5 runs: the {100 * abs(pool.estimate):.1f} pp gap is within llm's noise floor (two "
        f"means of 5 runs of llm differ by up to {100 * pool.noise_floor:.1f} pp, 95 %), so neither is called better"
    )
    assert [sorted(g.models) for g in run.result.stats.ranking] == [["enc", "llm"]]  # tied: neither is better


@pytest.mark.parametrize(
    ("models", "eval_", "said"),
    [
        (
            [
                {"name": "a", "kind": "predictions", "source": "{p}"},
                {"name": "b", "kind": "predictions", "source": "{p}"},
            ],
            {"noise_floor": True},
            "no model here runs again (a, b: stored answers, several prompts or repeats: 1 — nothing to re-run)",
        ),
        (
            [_known("a", 0.8), _known("b", 0.7)],
            {"noise_floor": True, "repeats": 1},
            "eval.noise_floor (--noise-floor) measures how far two runs of a model differ, but eval.repeats is 1",
        ),
        (
            [_known("a", 0.8), _known("b", 0.7)],
            {"noise_floor": True, "until_decided": True},
            "no sequential test yet",
        ),
    ],
)
def test_noise_floor_with_nothing_to_rerun_is_refused_in_one_line(tmp_path, capsys, models, eval_, said):
    rows = known_accuracy_rows(10, seed=1)
    pd.DataFrame({"prediction": [r["label"] for r in rows]}).to_csv(tmp_path / "p.csv", index=False)
    entries = [{k: v.format(p=tmp_path / "p.csv") if isinstance(v, str) else v for k, v in m.items()} for m in models]
    path = _experiment(tmp_path, entries, **eval_)
    with pytest.raises(SystemExit) as info:
        main(["run", str(path), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    errors = [line for line in err.splitlines() if line and not line.startswith("warning: ")]
    assert info.value.code == 2 and len(errors) == 1 and errors[0].startswith("error: "), err
    assert said in errors[0] and "Traceback" not in err


def test_noise_floor_flag_on_a_predictions_file_is_refused(tmp_path, capsys):
    rows = known_accuracy_rows(10, seed=1)
    pd.DataFrame(rows).to_csv(tmp_path / "dev.csv", index=False)
    pd.DataFrame({"prediction": [r["label"] for r in rows]}).to_csv(tmp_path / "p.csv", index=False)
    args = ["run", "--data", str(tmp_path / "dev.csv"), "--model", f"a={tmp_path / 'p.csv'}", "--noise-floor"]
    with pytest.raises(SystemExit) as info:
        main([*args, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "nothing to re-run" in err and "Traceback" not in err


def test_a_model_listed_twice_and_run_once_says_what_its_gap_shows(noisy_module):
    """Without --noise-floor the copies are an ordinary pair: its verdict is followed by what a model listed twice
    shows (the same seeds: only unseeded noise) and how to measure the floor; other pairs get no such note."""
    path = _experiment(noisy_module, [_known("rule", 0.7), {**_known("rule", 0.7), "name": "copy"}, _noisy("llm")])
    out = noisy_module / "out"
    main(["run", str(path), "--out", str(out)])
    raw = json.loads((out / "results.json").read_text())
    verdicts = {(c["model_a"], c["model_b"]): c["verdict"] for c in raw["stats"]["comparisons"]}
    assert verdicts[("rule", "copy")].endswith(
        "rule and copy are one model listed twice (the same settings, run with the same seeds): their gap shows "
        "only the noise the seeds do not fix; h2h run --noise-floor measures how far runs seeded apart differ."
    )
    assert not any("listed twice" in v for pair, v in verdicts.items() if pair != ("rule", "copy"))
    assert raw["stats"]["repeats"] is None
