"""Cascades (``kind: cascade``) over stored prediction files, and prices for what is not timed (``price_per_1m``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import headtohead
from headtohead.adapters.predictions import write_prediction_file
from headtohead.cli.main import main
from headtohead.config.loading import load_experiment
from headtohead.errors import ConfigError, ModelError
from headtohead.results import Predictions, load_result
from headtohead.testing.data import write_text_table

LABELS = ("negative", "positive")
N = 1500


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Data of 1500 examples; a cheap model with probabilities, sure where it is right; an expensive one, labels only."""
    root = tmp_path_factory.mktemp("cascade")
    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, N)
    ids = [f"e{i:04d}" for i in range(N)]
    write_text_table(
        root / "dev.csv", [{"id": i, "text": f"example {i}", "label": LABELS[k]} for i, k in zip(ids, y, strict=True)]
    )
    sure = rng.random(N)  # the cheap model is right where it is sure, a coin where not
    cheap_right = (sure > 0.3) | (rng.random(N) < 0.5)
    cheap = np.where(cheap_right, y, 1 - y)
    top = np.where(sure > 0.3, 0.8 + 0.2 * sure, 0.5 + 0.2 * sure)
    proba = np.where(cheap[:, None] == np.arange(2), top[:, None], 1 - top[:, None])
    write_prediction_file(root / "cheap.csv", ids, cheap, proba, label_names=LABELS)
    expensive = np.where(rng.random(N) < 0.95, y, 1 - y)
    write_prediction_file(root / "expensive.csv", ids, [LABELS[k] for k in expensive])
    return root


def _experiment(root, *, max_drop="2pp", cheap_price=0.5, expensive_price=40.0, **more):
    return {
        "name": "cascade",
        "data": {"path": str(root / "dev.csv"), "id_column": "id"},
        "models": [
            {"name": "cheap", "kind": "predictions", "source": str(root / "cheap.csv"), "price_per_1m": cheap_price},
            {
                "name": "llm",
                "kind": "predictions",
                "source": str(root / "expensive.csv"),
                "price_per_1m": expensive_price,
            },
            {"name": "casc", "kind": "cascade", "cheap": "cheap", "expensive": "llm", "max_drop": max_drop, **more},
        ],
        "eval": {"batch_size": 64, "device": "cpu"},
        "stats": {"n_resamples": 200},
        "speed": {"enabled": False},
    }


def test_recomputed_from_the_stored_files_at_the_recorded_threshold(files, tmp_path):
    """Done when: accuracy, deferral share and cost recomputed from the two files equal the reported ones."""
    headtohead.run(_experiment(files), out_dir=tmp_path)
    result = load_result(tmp_path / "results.json")
    figures = result.model("casc").cascade
    assert figures is not None and figures.threshold is not None and figures.p_value <= 0.05
    # from the stored files alone, at the recorded threshold, on the examples not used to choose it
    gold = pd.read_csv(files / "dev.csv").set_index("id")["label"]
    cheap = pd.read_csv(files / "cheap.csv").set_index("id").loc[gold.index]
    expensive = pd.read_csv(files / "expensive.csv").set_index("id").loc[gold.index]
    evaluation = np.setdiff1d(np.arange(N), result.calibration_examples)
    top = cheap[[f"proba_{c}" for c in LABELS]].to_numpy().max(axis=1)
    defer = (top < figures.threshold)[evaluation]
    answer = np.where(defer, expensive["prediction"].to_numpy()[evaluation], cheap["prediction"].to_numpy()[evaluation])
    gold = gold.to_numpy()
    assert figures.accuracy == pytest.approx(np.mean(answer == gold[evaluation]), abs=1e-12)
    assert figures.deferral_share == pytest.approx(defer.mean(), abs=1e-12)
    assert figures.cost_per_million == pytest.approx(0.5 + defer.mean() * 40.0, abs=1e-12)
    assert 0 < figures.deferral_share < 1 and figures.n_evaluation == len(evaluation)
    # the same cost record measured models have: the speed summary's entry, read as any other
    costs = {m.name: m.cost.scenarios[0] for m in result.speed.models}
    assert (costs["cheap"].scenario, costs["cheap"].cost_per_million) == ("priced", pytest.approx(0.5))
    assert (costs["casc"].scenario, costs["casc"].cost_per_million) == ("cascade", figures.cost_per_million)
    # every statistic reads the evaluation examples only: the cascade paired with its parts there
    stats = {m.name: m for m in result.stats.models}
    assert stats["casc"].accuracy.value == pytest.approx(figures.accuracy)
    assert stats["llm"].accuracy.value == pytest.approx(figures.expensive_correct / figures.n_evaluation)
    assert {frozenset((c.model_a, c.model_b)) for c in result.stats.comparisons} >= {
        frozenset(("casc", "cheap")),
        frozenset(("casc", "llm")),
    }
    kept = Predictions.load(tmp_path / "predictions.npz")
    assert set(kept.models) == {"cheap", "llm", "casc"} and len(kept.order) == N  # every example kept


def test_no_threshold_passes_a_margin_too_small_for_the_examples(files):
    """0.1 pp at delta 0.05 needs 2995 calibration examples without a harm: every example is deferred."""
    outcome = headtohead.run(_experiment(files, max_drop="0.1pp"))
    figures = outcome.result.model("casc").cascade
    assert figures.threshold is None and figures.p_value is None and figures.deferral_share == 1.0
    assert figures.correct == figures.expensive_correct


def test_bad_cascades_are_one_line_each(files, tmp_path):
    experiment = _experiment(files)
    for change, said in [
        ({"expensive": "gpt"}, "names 'gpt', which is not a model of the run"),
        ({"cheap": "casc"}, "names itself as a part"),
        ({"max_drop": 0.5}, "max_drop 0.5 has no unit"),
    ]:
        experiment["models"][2] = {**_experiment(files)["models"][2], **change}
        path = tmp_path / "bad.yaml"
        path.write_text(__import__("yaml").safe_dump(experiment))
        with pytest.raises(ConfigError, match=said) as caught:
            load_experiment(path)
        assert "\n" not in str(caught.value)
        with pytest.raises(SystemExit) as exited:
            main(["validate", str(path)])
        assert exited.value.code == 2
    labels_only = _experiment(files)
    labels_only["models"][2]["cheap"], labels_only["models"][2]["expensive"] = "llm", "cheap"
    with pytest.raises(ModelError, match="cheap model 'llm' gave no class probabilities") as refused:
        headtohead.run(labels_only)
    assert "\n" not in str(refused.value)
    path.write_text(__import__("yaml").safe_dump(labels_only))
    with pytest.raises(SystemExit) as exited:
        main(["run", str(path), "--out", str(tmp_path / "out")])
    assert exited.value.code == 2


def test_a_price_only_where_nothing_is_timed(files):
    experiment = _experiment(files)
    experiment["models"].append({"name": "lr", "kind": "sklearn", "source": "lr.skops", "price_per_1m": 1.0})
    with pytest.raises(ConfigError, match="price_per_1m is a key of kind: predictions, lm-eval, inspect only"):
        headtohead.run(experiment)


def test_the_report_shows_the_cascade_and_the_prices(files):
    from headtohead.report.formats.terminal import render_text
    from headtohead.report.sections.run import run_document, terminal_document

    outcome = headtohead.run(_experiment(files))
    text = render_text(run_document(outcome.result), 200)
    assert "Cascades" in text and "cheap → llm" in text and "top probability ≥" in text
    assert "reads the other" in text and "not timed: priced per prediction" in text
    assert "examples no cascade chose its threshold on" in text
    printed = terminal_document(outcome.result)  # what h2h run prints: the cascades' table, the data line
    assert "Cascades" in render_text(printed, 200) and "examples no cascade chose its threshold on" in printed.subtitle
    # the accuracy–cost chart: every model at its price, the cascade at its parts' costs, on the judged rows
    from headtohead.report.figures import _cost_for_tradeoff, _tradeoff_points
    from headtohead.report.merge import RunEntry, merge_runs

    points, _, _ = _tradeoff_points(merge_runs([RunEntry(outcome.result, "run")]), _cost_for_tradeoff)
    placed = {p.model: (p.value, p.latency_s) for p in points}
    figures = outcome.result.model("casc").cascade
    assert placed["casc"] == (pytest.approx(figures.accuracy), pytest.approx(figures.cost_per_million))
    assert placed["llm"] == (pytest.approx(figures.expensive_correct / figures.n_evaluation), pytest.approx(40.0))


def test_a_cascade_of_two_live_models_takes_its_cost_and_latency_from_theirs(tmp_path):
    """Two models run here and timed: the cascade's cost and latency from their measured ones and its deferral share."""
    rng = np.random.default_rng(5)
    rows = []
    for i in range(400):
        good, bad = rng.integers(0, 5, 2)
        label = LABELS[int(good > bad)] if good != bad else LABELS[int(rng.integers(0, 2))]
        rows.append({"text": f"{'good ' * good}{'bad ' * bad}example {i} is {label}", "label": label})
    write_text_table(tmp_path / "dev.csv", rows)
    keywords = {"negative": ["bad"], "positive": ["good"]}
    speed = {"scenarios": ["offline", "single_stream"], "warmup_iterations": 1, "warmup_seconds": 0.0,
             "min_iterations": 3, "min_seconds": 0.0, "rounds": 5, "precision": None, "num_batches": 1,
             "single_stream_inputs": 4, "pipeline_iterations": 0, "memory": False, "n_resamples": 100,
             "price_per_hour": 3.6}  # fmt: skip
    experiment = {
        "name": "live-cascade",
        "data": {"path": str(tmp_path / "dev.csv")},
        "models": [
            {"name": "words", "kind": "python", "source": "headtohead.testing.models:keyword_classifier",
             "model_args": {"keywords": keywords}, "outputs": "probabilities"},
            {"name": "oracle", "kind": "python", "source": "headtohead.testing.known:known_accuracy",
             "model_args": {"accuracy": 0.97, "seed": 1}, "outputs": "probabilities"},
            {"name": "casc", "kind": "cascade", "cheap": "words", "expensive": "oracle", "max_drop": "10pp",
             "delta": 0.1},
        ],
        "eval": {"batch_size": 32, "device": "cpu"},
        "stats": {"n_resamples": 200},
        "speed": speed,
    }  # fmt: skip
    result = headtohead.run(experiment).result
    c = result.model("casc").cascade
    assert c.threshold is not None and 0 < c.deferral_share < 1
    timed = {m.name: m for m in result.speed.models}
    assert "casc" in timed and timed["casc"].cost.scenarios[0].scenario == "cascade"
    offline = {n: timed[n].cost.scenario("offline").cost_per_million for n in ("words", "oracle")}
    assert c.cost_per_million == pytest.approx(offline["words"] + c.deferral_share * offline["oracle"], rel=1e-12)
    latency = {n: np.mean(timed[n].single_stream.samples_ns) / 1e9 for n in ("words", "oracle")}
    assert c.latency_mean_s == pytest.approx(latency["words"] + c.deferral_share * latency["oracle"], rel=1e-9)
    assert c.latency_p99_s >= np.quantile(np.asarray(timed["words"].single_stream.samples_ns) / 1e9, 0.5)


def test_the_statistics_read_the_evaluation_rows_and_no_cascade_whose_part_is_not_judged(files):
    from headtohead.config.loading import experiment_from_dict
    from headtohead.pipeline.cascade import calibration_draw, calibration_examples, evaluation_only

    exp = experiment_from_dict(_experiment(files, calibration=0.3))
    held = calibration_examples(exp, N, None)
    assert held == [int(i) for i in np.flatnonzero(calibration_draw(N, exp.seed) < 0.3)]
    assert 0.25 < len(held) / N < 0.35
    order = np.arange(N)[::-1].copy()
    y = np.zeros(N, dtype=np.int64)
    predictions = Predictions(order, y, LABELS)
    for name in ("cheap", "casc"):  # llm's answers went missing: not judged, and so neither is casc
        predictions.add(name, y, None)
    judged = evaluation_only(predictions, held, exp)
    assert list(judged.models) == ["cheap"] and not np.isin(judged.order, held).any()
    assert len(judged.order) == N - len(held)
    predictions.add("llm", y, None)
    assert list(evaluation_only(predictions, [], exp).models) == ["cheap", "casc", "llm"]
    # groups: every example of a group on the same side
    groups = np.array([f"g{i // 3}" for i in range(N)])
    draw = calibration_draw(N, 0, groups)
    assert (draw.reshape(-1, 3) == draw[::3, None]).all()


def test_the_gate_reads_the_examples_the_runs_statistics_read(files, tmp_path):
    """A cascade chose its threshold on the calibration examples: the gate, like the run's statistics, leaves them
    out, in one run and across two (where either run's are left out of both)."""
    run = headtohead.run(_experiment(files), out_dir=tmp_path / "with")
    evaluation = N - len(run.result.calibration_examples)
    assert 0 < len(run.result.calibration_examples) < N
    for given in (run, tmp_path / "with"):  # what headtohead.run returned, and the saved run
        (decision,) = headtohead.gate(given, baseline="llm", candidate="casc", max_accuracy_drop="2pp").decisions
        assert decision.n == evaluation
        cascade = run.result.model("casc").cascade
        assert decision.estimate == pytest.approx((cascade.correct - cascade.expensive_correct) / evaluation)
    plain = _experiment(files)
    plain["models"] = plain["models"][:2]
    headtohead.run(plain, out_dir=tmp_path / "without")
    (across,) = headtohead.gate(
        tmp_path / "without",
        baseline="llm",
        candidate="casc",
        candidate_results=tmp_path / "with",
        max_accuracy_drop="2pp",
    ).decisions
    assert across.n == evaluation and across.estimate == pytest.approx(decision.estimate)
