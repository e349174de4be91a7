"""Issue 42's done-when: three python models of known accuracy and per-call sleep decided through ``headtohead.run``."""

from __future__ import annotations

import json
import re

import pytest

import headtohead
from headtohead.errors import ConfigError
from headtohead.testing import known
from headtohead.testing.data import write_text_table

MODEL = {"kind": "python", "source": "headtohead.testing.known:known_accuracy", "outputs": "probabilities"}

#: Few short rounds: the sleeps (1, 3 and 6 ms a call) decide every ratio at once.
SPEED = {
    "scenarios": ["offline"],
    "warmup_iterations": 1,
    "warmup_seconds": 0.0,
    "min_iterations": 2,
    "min_seconds": 0.05,
    "rounds": 5,
    "precision": None,
    "pipeline_iterations": 1,
    "memory": False,
    "energy": False,
}


def _experiment(tmp_path, **decide):
    data = write_text_table(tmp_path / "dev.csv", known.known_accuracy_rows(1000, seed=7))
    models = [  # one seed: each model is right on a subset of the next more accurate one's examples
        {**MODEL, "name": name, "model_args": {"accuracy": accuracy, "seed": 1, "sleep_ms": sleep}}
        for name, accuracy, sleep in (("A", 0.90, 1.0), ("B", 0.85, 3.0), ("C", 0.93, 6.0))
    ]
    return {
        "name": "front",
        "data": {"path": str(data)},
        "models": models,
        "eval": {"batch_size": 10, "device": "cpu"},  # the sleeps, not the hashing, set each call's time
        "stats": {"n_resamples": 200},
        "speed": SPEED,
        "decide": {"resamples": 200, **decide},
    }


@pytest.mark.slow
def test_three_models_of_known_accuracy_and_speed_a_dominates_b_a_and_c_on_the_front(tmp_path):
    outcome = headtohead.run(_experiment(tmp_path), out_dir=tmp_path / "out")
    decision = outcome.result.decision
    assert decision is not None and decision.axes == ["quality", "latency"]
    assert decision.not_measured == {"cost": ["A", "B", "C"]}  # no price: cost not measured, the front on the rest
    assert decision.pair("A", "B").dominates
    assert not decision.pair("A", "C").dominates and not decision.pair("C", "A").dominates
    assert [decision.model(m).front for m in "ABC"] == ["front", "dominated", "front"]
    assert decision.model("B").dominated_by == ["A"]
    assert all(0.0 <= decision.model(m).p_front <= 1.0 for m in "ABC")
    assert decision.model("A").p_front > 0.9 and decision.model("B").p_front < 0.1
    assert re.fullmatch(
        r"A dominates B: more accurate \(\+\d\.\d pp\), \d\.\d\d× faster", decision.pair("A", "B").sentence
    )
    assert "faster" in decision.pair("A", "B").sentence
    assert "accuracy keeps it open" in decision.pair("A", "C").sentence
    assert any("Cost: not measured for A, B, C" in line for line in decision.sentences)
    written = json.loads((tmp_path / "out" / "results.json").read_text())
    assert written["schema_version"] == 9
    row = next(m for m in written["decision"]["models"] if m["name"] == "B")
    assert row["front"] == "dominated" and row["dominated_by"] == ["A"] and 0.0 <= row["p_front"] <= 1.0


def test_a_price_per_hour_makes_cost_an_axis_read_from_the_throughput(tmp_path):
    exp = _experiment(tmp_path)
    exp["speed"] = {**SPEED, "price_per_hour": 3.6}
    outcome = headtohead.run(exp, out_dir=tmp_path / "out")
    decision = outcome.result.decision
    assert decision.axes == ["quality", "latency", "cost"] and not decision.not_measured
    assert decision.cost_from["A"] == "price per hour × offline throughput"
    cost = decision.pair("A", "B").axis("cost")
    latency = decision.pair("A", "B").axis("latency")
    # one price for every model: the cost ratio is the offline time ratio, decided alike
    assert cost.estimate == pytest.approx(latency.estimate) and cost.ci_low == pytest.approx(latency.ci_low)
    assert cost.holds == latency.holds
    # cost per million = price per hour / 3600 × seconds per prediction × 1e6, at the rounds' median time
    seconds = decision.model("A").value("latency").value
    assert decision.model("A").value("cost").value == pytest.approx(3.6 / 3600 * seconds * 1e6)
    assert outcome.result.speed.model("A").cost.scenario("offline").cost_per_million > 0  # the record it came from


def test_a_model_run_several_times_is_decided_on_its_mean_over_its_runs(tmp_path):
    """A repeated model joins the decision as the verdict pools it: its quality over every run (two-level)."""
    exp = _experiment(tmp_path)
    exp["models"] = [{**exp["models"][0], "repeats": 3}, exp["models"][1]]  # A run 3 times, B once
    outcome = headtohead.run(exp, out_dir=tmp_path / "out")
    decision = outcome.result.decision
    assert decision is not None and not decision.left_out and [m.name for m in decision.models] == ["A", "B"]
    quality = decision.pair("A", "B").axis("quality")
    assert quality.method == "two-level t over runs" and quality.holds
    assert decision.pair("A", "B").dominates and decision.model("B").dominated_by == ["A"]
    assert re.fullmatch(
        r"A dominates B: more accurate \(\+\d\.\d pp, mean over runs\), \d\.\d\d× faster",
        decision.pair("A", "B").sentence,
    )
    mean = outcome.result.stats.repeats.models[0].spreads[0].mean  # A's accuracy averaged over its runs
    assert decision.model("A").value("quality").value == pytest.approx(mean)


def test_decide_scenario_not_timed_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match="decide.scenario is single_stream"):
        headtohead.run(_experiment(tmp_path, scenario="single_stream"), out_dir=tmp_path / "out")
    with pytest.raises(ConfigError, match="leaves out quality"):
        headtohead.run(_experiment(tmp_path, axes=["latency"]), out_dir=tmp_path / "out")


def test_a_bad_decide_section_is_one_line_and_exit_2(tmp_path, capsys):
    import yaml

    from headtohead.cli.main import main

    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(_experiment(tmp_path, axes=["quality", "speed"])))
    with pytest.raises(SystemExit) as info:
        main(["validate", str(path)])
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2 and len(err.splitlines()) == 1 and "decide.axes" in err
