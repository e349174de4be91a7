"""The local executor (in-process): equal to the runner, sharding, errors that propagate, speed in workers."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import yaml

import headtohead
from headtohead.config import experiment_from_dict, load_experiment
from headtohead.config.execution import ExecutionConfig
from headtohead.errors import DataError, ModelError
from headtohead.pipeline.executors import (
    CONCURRENT_MARK,
    EvalJob,
    Task,
    WorkerSettings,
    create_executor,
    merge_worker_speed,
    plan_shards,
)
from headtohead.pipeline.executors.worker import run_task
from headtohead.pipeline.setup import prepare_run
from headtohead.results.speed import SpeedSummary

MLP = "headtohead.testing.models:tiny_mlp"
FAST_SPEED = {
    "scenarios": ["offline"],
    "num_batches": 1,
    "warmup_iterations": 0,
    "warmup_seconds": 0.0,
    "min_iterations": 1,
    "min_seconds": 0.0,
    "rounds": 5,
    "precision": None,  # a fixed number of rounds
    "pipeline_iterations": 0,
    "memory": False,
    "telemetry": False,
    "n_resamples": 100,
}


def _experiment(*extra_models):
    models = [
        {"name": "mlp1", "kind": "python", "source": MLP, "model_args": {"n_features": 4, "seed": 1}},
        {"name": "mlp2", "kind": "python", "source": MLP, "model_args": {"n_features": 4, "seed": 2}},
        *extra_models,
    ]
    return experiment_from_dict(
        {
            "name": "iris",
            "data": {"path": "sklearn:iris"},
            "models": models,
            "eval": {"batch_size": 16, "device": "cpu"},
            "speed": FAST_SPEED,
        }
    )


@pytest.fixture(scope="module")
def reference():
    """What ``headtohead.run`` itself predicts."""
    exp = _experiment()
    return exp, headtohead.run(exp, speed=False)


@pytest.mark.parametrize("shards", [1, 3])
def test_local_executor_predicts_exactly_what_the_runner_does(reference, tmp_path, shards):
    exp, run = reference
    setup = prepare_run(exp, tmp_path)
    seen = []
    with create_executor(ExecutionConfig(shards=shards), eval_device="cpu") as executor:
        outcomes = list(executor.evaluate(setup, progress=lambda label, done, total: seen.append((label, done, total))))
    assert [o.name for o in outcomes] == ["mlp1", "mlp2"] and all(o.ok for o in outcomes)
    for outcome in outcomes:
        expected = run.result.model(outcome.name)
        np.testing.assert_array_equal(outcome.predictions.proba, run.predictions[outcome.name].proba)
        np.testing.assert_array_equal(outcome.predictions.pred, run.predictions[outcome.name].pred)
        assert outcome.record.index_order_hash == expected.index_order_hash and outcome.record.n_batches == 10
        assert outcome.record.quality == expected.quality  # the record is made once, as the runner makes it
        assert outcome.record.num_parameters == expected.num_parameters and outcome.record.device == "cpu"
        assert outcome.record.workers == [] and outcome.record.execution_mode == "local"  # in-process: no workers
        assert (outcome.adapter is not None) == (shards == 1)  # one pass in this process: the model is kept
    assert len(seen) == 2 * 10  # per-batch progress in-process, every shard's batches once
    if shards > 1:
        assert seen[0][0] == "mlp1 [shard 1/3]"


def test_a_failing_model_raises_at_once_after_the_models_before_it(tmp_path):
    """In this process an error propagates with its own class and traceback, as an ordinary call."""
    crash = {"name": "wrong-width", "kind": "python", "source": MLP, "model_args": {"n_features": 7}}
    missing = {"name": "missing", "kind": "python", "source": "no_such_module_h2h:factory"}
    setup = prepare_run(_experiment(crash, missing), tmp_path)
    done = []
    with create_executor(ExecutionConfig(), eval_device="cpu") as executor, pytest.raises(RuntimeError) as info:
        for outcome in executor.evaluate(setup):
            done.append(outcome.name)
    assert done == ["mlp1", "mlp2"] and info.traceback[-1].name != "evaluate"  # raised where it happened
    with create_executor(ExecutionConfig(), eval_device="cpu") as executor, pytest.raises(ModelError) as absent:
        list(executor.evaluate(setup, ["missing"]))
    assert "no_such_module_h2h" in str(absent.value) and "\n" not in str(absent.value)


def test_a_worker_that_reads_other_data_refuses(tmp_path):
    """What a worker process runs (here in this process): it re-reads the data and checks the fingerprint."""
    exp = _experiment()
    job = replace(EvalJob.from_setup(prepare_run(exp, tmp_path)), dataset_fingerprint="0" * 64)
    task = Task("mlp1", plan_shards(len(job.order), job.batch_size, 1)[0])
    failure = run_task(job, task, WorkerSettings("cpu"))
    error = failure.to_exception()
    assert isinstance(error, DataError) and "read different data than the main process" in str(error)
    ok = run_task(replace(job, dataset_fingerprint=None), task, WorkerSettings("cpu"))
    assert ok.adapter is None and ok.environment is not None and ok.environment.python  # what travels back


def test_a_job_from_the_runners_setup(reference):
    exp, run = reference
    setup = prepare_run(exp, Path.cwd())
    job = EvalJob.from_setup(setup, offline=True)
    assert job.dataset_fingerprint == setup.fingerprint and job.offline and not job.deterministic
    with create_executor(ExecutionConfig(), eval_device="cpu") as executor:
        (outcome,) = executor.evaluate(setup, ["mlp2"])
    np.testing.assert_array_equal(outcome.predictions.proba, run.predictions["mlp2"].proba)
    assert outcome.record.index_order_hash == run.result.model("mlp2").index_order_hash
    task = Task("mlp2", plan_shards(len(job.order), job.batch_size, 1)[0])
    strict = run_task(replace(job, deterministic=True), task, WorkerSettings("cpu"))  # --deterministic in a worker
    np.testing.assert_array_equal(strict.proba, run.predictions["mlp2"].proba)


def test_speed_measured_in_workers_merges_without_paired_ratios(tmp_path):
    setup = prepare_run(_experiment(), tmp_path)
    with create_executor(ExecutionConfig(), eval_device="cpu") as executor:
        outcomes = list(executor.evaluate(setup, shards=2, measure_speed=True))
    assert all(o.speed is not None and not o.concurrent_speed for o in outcomes)
    summary = merge_worker_speed(outcomes)
    assert [m.name for m in summary.models] == ["mlp1", "mlp2"]
    assert all(m.offline is not None and m.offline.throughput_per_s > 0 for m in summary.models)
    assert summary.scenarios[0].scenario == "offline" and summary.scenarios[0].comparisons == []
    assert "no paired speed ratios" in summary.warnings[0]
    forced = [replace(o, concurrent_speed=True) for o in outcomes]
    marked = merge_worker_speed(forced)
    assert all(m.warnings[0].startswith(CONCURRENT_MARK) for m in marked.models)
    assert SpeedSummary.model_validate_json(marked.model_dump_json()) == marked  # a valid, saveable record
    assert merge_worker_speed([replace(o, speed=None) for o in outcomes]) is None


def test_sharding_a_text_model_keeps_every_padded_batch(tmp_path):
    """Dynamic padding depends on the batch: shards cut on batch boundaries give bit-identical probabilities."""
    from headtohead.testing.data import make_text_table
    from headtohead.testing.text import make_tiny_bert

    table = make_text_table(tmp_path / "dev.tsv", n_per_class=9, classes=("negative", "positive"))
    make_tiny_bert(tmp_path / "bert", ["negative", "positive"], seed=1)
    experiment_file = tmp_path / "experiment.yaml"
    experiment_file.write_text(
        yaml.safe_dump(
            {
                "data": {"path": table.name},
                "models": [{"name": "bert", "kind": "transformers", "source": "bert", "max_length": 32}],  # relative
                "eval": {"batch_size": 4, "device": "cpu"},
                "speed": {"enabled": False},
            }
        )
    )
    run = headtohead.run(experiment_file)
    setup = prepare_run(load_experiment(experiment_file), tmp_path)
    with create_executor(ExecutionConfig(shards=3), eval_device="cpu") as executor:
        (outcome,) = executor.evaluate(setup)
    assert outcome.ok and outcome.record.n_batches == len(setup.plan)
    np.testing.assert_array_equal(outcome.predictions.proba, run.predictions["bert"].proba)
    assert outcome.record.index_order_hash == run.result.model("bert").index_order_hash
