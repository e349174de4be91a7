"""``execution.mode: processes``: two spawned CPU workers give exactly the runner's predictions."""

from __future__ import annotations

import numpy as np
import pytest

import headtohead
from headtohead.config import experiment_from_dict
from headtohead.config.execution import ExecutionConfig
from headtohead.pipeline.executors import create_executor, failure_summary
from headtohead.pipeline.setup import prepare_run

MLP = "headtohead.testing.models:tiny_mlp"


@pytest.fixture(scope="module")
def iris_run(tmp_path_factory):
    """Two tiny MLPs on scikit-learn's iris, two failing models, and the setup a run would make."""
    root = tmp_path_factory.mktemp("parallel-iris")
    exp = experiment_from_dict(
        {
            "name": "tiny-iris",
            "data": {"path": "sklearn:iris"},
            "models": [
                {"name": "mlp-a", "kind": "python", "source": MLP, "model_args": {"n_features": 4, "n_classes": 3}},
                {
                    "name": "mlp-b",
                    "kind": "python",
                    "source": MLP,
                    "model_args": {"n_features": 4, "n_classes": 3, "hidden": 32, "seed": 3},
                },
                {"name": "missing", "kind": "python", "source": "no_such_module_h2h:factory"},
                {"name": "dies", "kind": "python", "source": "os:abort"},  # kills its worker process
            ],
            "eval": {"batch_size": 16, "device": "cpu"},
            "speed": {"enabled": False},
        }
    )
    return exp, prepare_run(exp, root)


@pytest.fixture(scope="module")
def reference(iris_run):
    """The runner's own predictions for the two working models."""
    exp, _ = iris_run
    return headtohead.run(exp.model_copy(update={"models": exp.models[:2]}), speed=False)


@pytest.fixture(scope="module")
def executor():
    with create_executor(ExecutionConfig(mode="processes", num_workers=2), eval_device="cpu") as ex:
        yield ex


def test_two_cpu_workers_predict_exactly_what_the_runner_does(iris_run, reference, executor):
    _, setup = iris_run
    outcomes = list(executor.evaluate(setup, ["mlp-a", "mlp-b"]))
    assert [o.name for o in outcomes] == ["mlp-a", "mlp-b"] and all(o.ok for o in outcomes)
    for outcome in outcomes:
        expected = reference.predictions[outcome.name]
        np.testing.assert_array_equal(outcome.predictions.proba, expected.proba)
        np.testing.assert_array_equal(outcome.predictions.pred, expected.pred)
        assert outcome.record.index_order_hash == reference.result.model(outcome.name).index_order_hash
        assert outcome.record.label_alignment == reference.result.model(outcome.name).label_alignment
        assert outcome.record.quality == reference.result.model(outcome.name).quality  # made once, in the main
    workers = executor.workers
    assert len(workers) == 2 and all(w.device == "cpu" and w.threads == len(w.cpu_set) for w in workers)
    if len({c for w in workers for c in w.cpu_set}) > 1:
        assert not set(workers[0].cpu_set) & set(workers[1].cpu_set)  # each worker on its own cores
    assert outcomes[0].record.workers[0].worker != outcomes[1].record.workers[0].worker  # one model per worker
    record = outcomes[0].record.workers[0]
    assert record.mode == "processes" and len(record.environment_fingerprint) == 12
    assert record.environment.torch_threads in {w.threads for w in workers}  # captured inside the worker
    assert outcomes[0].record.execution_mode == "processes" and outcomes[0].adapter is None


def test_one_model_sharded_over_two_workers_merges_in_the_original_order(iris_run, reference, executor):
    _, setup = iris_run
    progress = []
    (outcome,) = executor.evaluate(setup, ["mlp-a"], shards=2, progress=lambda *args: progress.append(args))
    assert outcome.ok and [w.shard for w in outcome.record.workers] == [0, 1]
    assert outcome.record.workers[0].worker != outcome.record.workers[1].worker  # two processes, two halves
    expected = reference.predictions["mlp-a"]
    np.testing.assert_array_equal(outcome.predictions.proba, expected.proba)
    assert outcome.record.index_order_hash == setup.plan.hash() == reference.result.model("mlp-a").index_order_hash
    assert outcome.record.n_batches == len(setup.plan)
    assert outcome.record.quality == reference.result.model("mlp-a").quality  # quality of the merged shards, once
    assert sorted(p[1] for p in progress) == [1, 2] and {p[2] for p in progress} == {2}


def test_failing_tasks_are_reported_and_the_other_models_kept(iris_run, reference, executor):
    _, setup = iris_run
    outcomes = {o.name: o for o in executor.evaluate(setup)}
    assert outcomes["mlp-a"].ok and outcomes["mlp-b"].ok
    np.testing.assert_array_equal(outcomes["mlp-b"].predictions.proba, reference.predictions["mlp-b"].proba)
    assert outcomes["missing"].failure.error_type == "ModelError"
    assert (
        outcomes["dies"].failure.error_type == "WorkerDied"
        and "died while evaluating dies" in outcomes["dies"].failure.message
    )
    summary = failure_summary(list(outcomes.values()))
    assert "model 'missing': module 'no_such_module_h2h' not found" in summary
    assert "model 'dies' failed in worker process on cpu" in summary
    assert summary.endswith("kept: mlp-a, mlp-b")
    again = list(executor.evaluate(setup, ["mlp-a", "mlp-b"]))  # both workers busy: the dead one was replaced
    assert all(o.ok for o in again) and len({o.record.workers[0].worker for o in again}) == 2
    np.testing.assert_array_equal(again[0].predictions.proba, reference.predictions["mlp-a"].proba)
