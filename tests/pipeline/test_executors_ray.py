"""``execution.mode: ray`` on a local Ray instance: equal to the runner, failures reported per task."""

from __future__ import annotations

import numpy as np
import pytest

import headtohead
from headtohead.config import experiment_from_dict
from headtohead.config.execution import ExecutionConfig
from headtohead.errors import ConfigError
from headtohead.pipeline.executors import create_executor
from headtohead.pipeline.setup import prepare_run

ray = pytest.importorskip("ray", reason="Ray is an extra: pip install 'headtohead[ray]'")

MLP = "headtohead.testing.models:tiny_mlp"


@pytest.fixture(scope="module")
def ray_outcomes(tmp_path_factory):
    """One Ray session: two models sharded in two, a model whose factory is missing; plus the runner's reference."""
    exp = experiment_from_dict(
        {
            "name": "ray-iris",
            "data": {"path": "sklearn:iris"},
            "models": [
                {"name": "mlp-a", "kind": "python", "source": MLP, "model_args": {"n_features": 4, "seed": 5}},
                {"name": "missing", "kind": "python", "source": "no_such_module_h2h:factory"},
                {"name": "mlp-b", "kind": "python", "source": MLP, "model_args": {"n_features": 4, "hidden": 8}},
            ],
            "eval": {"batch_size": 16, "device": "cpu"},
            "speed": {"enabled": False},
        }
    )
    setup = prepare_run(exp, tmp_path_factory.mktemp("ray"))
    config = ExecutionConfig(mode="ray", shards=2, ray_init_cpus=2)
    progress = []
    with create_executor(config, eval_device="cpu") as executor:
        outcomes = list(executor.evaluate(setup, progress=lambda *args: progress.append(args)))
        started_here = executor._started_here
        executor.config = ExecutionConfig(mode="ray", num_gpus=1, ray_init_cpus=2)  # no GPU in this instance
        with pytest.raises(ConfigError) as infeasible:
            list(executor.evaluate(setup))
    reference = headtohead.run(exp.model_copy(update={"models": [exp.models[0], exp.models[2]]}), speed=False)
    return setup, {o.name: o for o in outcomes}, reference, progress, (started_here, str(infeasible.value))


def test_ray_tasks_predict_exactly_what_the_runner_does(ray_outcomes):
    setup, outcomes, reference, progress, _ = ray_outcomes
    for name in ("mlp-a", "mlp-b"):
        outcome = outcomes[name]
        assert outcome.ok and [w.shard for w in outcome.record.workers] == [0, 1]
        np.testing.assert_array_equal(outcome.predictions.proba, reference.predictions[name].proba)
        np.testing.assert_array_equal(outcome.predictions.pred, reference.predictions[name].pred)
        assert outcome.record.index_order_hash == setup.plan.hash() == reference.result.model(name).index_order_hash
        assert outcome.record.quality == reference.result.model(name).quality
        assert all(w.mode == "ray" and w.device == "cpu" for w in outcome.record.workers)
        assert outcome.record.workers[0].environment.torch_threads == 1  # num_cpus: 1 per task
    assert len(progress) == 6 and progress[-1][1:] == (6, 6)  # 3 models × 2 shards, one report each


def test_a_failing_ray_task_is_reported_and_the_others_kept(ray_outcomes):
    _, outcomes, _, _, (started_here, _) = ray_outcomes
    missing = outcomes["missing"]
    assert not missing.ok and missing.failure.error_type == "ModelError"
    assert "no_such_module_h2h" in str(missing.error())
    assert outcomes["mlp-a"].ok and outcomes["mlp-b"].ok
    assert started_here and not ray.is_initialized()  # the local instance it started was shut down


def test_tasks_no_node_can_run_are_refused_instead_of_waiting_forever(ray_outcomes):
    infeasible = ray_outcomes[-1][1]
    assert "num_gpus 1 per task but no Ray node has that much" in infeasible and "\n" not in infeasible
