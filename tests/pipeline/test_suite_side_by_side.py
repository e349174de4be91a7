"""``datasets_at_once``: data sets run at the same time, their models going to the existing executors."""

from __future__ import annotations

import pytest
import yaml

import headtohead
from headtohead.config.suite import load_suite
from headtohead.results import load_result
from headtohead.testing.suite_models import RECIPE, fit_recipe

pytestmark = pytest.mark.slow  # worker processes / a Ray instance start in each test


def _suite(folder, execution):
    suite = {
        "name": "side",
        "datasets_at_once": 2,
        "execution": execution,
        "datasets": [
            {"name": d, "data": {"path": f"sklearn:{d}", "split": {"eval_fraction": 0.3}}} for d in ("wine", "iris")
        ],
        "models": [{"name": m, "kind": "sklearn", "source": f"models/{{dataset}}/{m}.skops"} for m in RECIPE],
        "speed": {"enabled": False},
        "stats": {"n_resamples": 100},
    }
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(suite))
    for d in load_suite(path).datasets:
        fit_recipe(d.data, folder / "models" / d.name)
    return path


def _check(outcome, events, mode):
    assert events[0].endswith("running (1 of 2)") and events[1].endswith("running (2 of 2)")  # both began at once
    assert not outcome.failed and outcome.result.n_datasets == 2
    for name in ("wine", "iris"):
        run = load_result(outcome.out_dir / name / "results.json")
        assert {m.execution_mode for m in run.models} == {mode}
        local = headtohead.run(
            {**run.experiment, "execution": {"mode": "local"}}, base_dir=outcome.out_dir.parent, speed=False
        )  # the same experiment in this process: the same predictions
        assert {m.name: m.quality.accuracy for m in local.result.models} == outcome.result.dataset(name).scores


def test_data_sets_side_by_side_through_worker_processes(tmp_path):
    path = _suite(tmp_path, {"mode": "processes", "num_workers": 1})
    events = []
    outcome = headtohead.suite(path, out_dir=tmp_path / "out", on_event=events.append)
    _check(outcome, events, "processes")


def test_data_sets_side_by_side_on_one_ray_instance(tmp_path):
    pytest.importorskip("ray")
    path = _suite(tmp_path, {"mode": "ray", "ray_init_cpus": 2})
    events = []
    outcome = headtohead.suite(path, out_dir=tmp_path / "out", on_event=events.append)
    _check(outcome, events, "ray")
    import ray

    assert not ray.is_initialized()  # the suite started it once and shut it down once, after both data sets
