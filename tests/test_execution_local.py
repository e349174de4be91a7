"""The local executor (in-process): equal to the runner, sharding, per-task failures, speed in workers."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import yaml

import headtohead
from headtohead.config import experiment_from_dict, load_experiment
from headtohead.config.execution import ExecutionConfig
from headtohead.data import create_dataset
from headtohead.engines.batching import BatchPlan, plan_batches
from headtohead.errors import DataError
from headtohead.execution import CONCURRENT_MARK, EvalJob, create_executor, merge_worker_speed
from headtohead.per_model import prepare_run
from headtohead.results.speed import SpeedSummary

MLP = "headtohead.testing.models:tiny_mlp"
FAST_SPEED = {"scenarios": ["offline"], "num_batches": 1, "warmup_iterations": 0, "warmup_seconds": 0.0,
              "min_iterations": 1, "min_seconds": 0.0, "rounds": 5, "pipeline_iterations": 0, "memory": False,
              "telemetry": False, "n_resamples": 100}


def _experiment(*extra_models):
    models = [{"name": "mlp1", "kind": "python", "source": MLP, "model_args": {"n_features": 4, "seed": 1}},
              {"name": "mlp2", "kind": "python", "source": MLP, "model_args": {"n_features": 4, "seed": 2}},
              *extra_models]
    return experiment_from_dict({"name": "iris", "data": {"path": "sklearn:iris"}, "models": models,
                                 "eval": {"batch_size": 16, "device": "cpu"}, "speed": FAST_SPEED})


def _job(exp, tmp_path, **options):
    dataset = create_dataset(exp.data, seed=exp.seed).eval
    return EvalJob.build(exp, tmp_path, plan_batches(len(dataset), exp.eval.batch_size), dataset=dataset, **options)


@pytest.fixture(scope="module")
def reference():
    """What ``headtohead.run`` itself predicts (the runner's own loop)."""
    exp = _experiment()
    return exp, headtohead.run(exp, speed=False)


@pytest.mark.parametrize("shards", [1, 3])
def test_local_executor_predicts_exactly_what_the_runner_does(reference, tmp_path, shards):
    exp, run = reference
    job = _job(exp, tmp_path)
    seen = []
    with create_executor(ExecutionConfig(shards=shards), eval_device="cpu") as executor:
        outcomes = executor.evaluate(job, progress=lambda label, done, total: seen.append((label, done, total)))
    assert [o.name for o in outcomes] == ["mlp1", "mlp2"] and all(o.ok for o in outcomes)
    for outcome in outcomes:
        np.testing.assert_array_equal(outcome.evaluation.proba, run.predictions[outcome.name].proba)
        np.testing.assert_array_equal(outcome.evaluation.pred, run.predictions[outcome.name].pred)
        assert outcome.evaluation.plan_hash == run.result.model(outcome.name).index_order_hash
        assert outcome.evaluation.n_batches == 10 and len(outcome.workers) == shards
        assert outcome.model.num_parameters() == run.result.model(outcome.name).num_parameters
        assert outcome.model.device == "cpu" and outcome.workers[0].environment.python
    assert len(seen) == 2 * 10  # per-batch progress in-process, every shard's batches once
    if shards > 1:
        assert seen[0][0] == "mlp1 [shard 1/3]"


def test_a_failing_model_is_reported_and_the_others_are_kept(tmp_path):
    crash = {"name": "wrong-width", "kind": "python", "source": MLP, "model_args": {"n_features": 7}}
    missing = {"name": "missing", "kind": "python", "source": "no_such_module_h2h:factory"}
    exp = _experiment(crash, missing)
    with create_executor(ExecutionConfig(), eval_device="cpu") as executor:
        outcomes = executor.evaluate(_job(exp, tmp_path))
    by_name = {o.name: o for o in outcomes}
    assert by_name["mlp1"].ok and by_name["mlp2"].ok
    crashed, absent = by_name["wrong-width"], by_name["missing"]
    assert crashed.failure.error_type == "RuntimeError" and not crashed.failure.user_error
    assert "wrong-width" in str(crashed.error()) and "\n" not in str(crashed.error())
    assert absent.failure.error_type == "ModelError" and "no_such_module_h2h" in str(absent.error())
    assert crashed.evaluation is None and absent.evaluation is None


def test_a_worker_that_reads_other_data_refuses(tmp_path):
    exp = _experiment()
    job = replace(_job(exp, tmp_path), dataset_fingerprint="0" * 64)
    with create_executor(ExecutionConfig(), eval_device="cpu") as executor:
        outcomes = executor.evaluate(job, ["mlp1"])
    error = outcomes[0].error()
    assert isinstance(error, DataError) and "read different data than the main process" in str(error)


def test_a_job_from_the_runners_setup_reusing_its_data(reference):
    exp, run = reference
    setup = prepare_run(exp, Path.cwd())
    job = EvalJob.from_setup(setup, offline=True)
    assert job.dataset_fingerprint == setup.fingerprint and job.offline and not job.deterministic
    with create_executor(ExecutionConfig(), eval_device="cpu", splits=setup.splits) as executor:
        outcome = executor.evaluate(job, ["mlp2"])[0]
    np.testing.assert_array_equal(outcome.evaluation.proba, run.predictions["mlp2"].proba)
    assert outcome.evaluation.plan_hash == run.result.model("mlp2").index_order_hash
    with create_executor(ExecutionConfig(), eval_device="cpu", splits=setup.splits) as executor:
        strict = executor.evaluate(replace(job, deterministic=True), ["mlp2"])[0]  # --deterministic in the worker
    np.testing.assert_array_equal(strict.evaluation.proba, run.predictions["mlp2"].proba)


def test_speed_measured_in_workers_merges_without_paired_ratios(tmp_path):
    exp = _experiment()
    with create_executor(ExecutionConfig(), eval_device="cpu") as executor:
        outcomes = executor.evaluate(_job(exp, tmp_path, measure_speed=True), shards=2)
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
    experiment_file.write_text(yaml.safe_dump({
        "data": {"path": table.name},
        "models": [{"name": "bert", "kind": "transformers", "source": "bert", "max_length": 32}],  # relative
        "eval": {"batch_size": 4, "device": "cpu"}, "speed": {"enabled": False}}))
    run = headtohead.run(experiment_file)
    exp = load_experiment(experiment_file)
    data = exp.data.model_copy(update={"path": str(table)})
    dataset = create_dataset(data, seed=exp.seed).eval
    plan = BatchPlan(run.predictions.order, 4)  # the run's own plan (grouped by length)
    job = EvalJob.build(exp, tmp_path, plan, data=data, dataset=dataset)
    with create_executor(ExecutionConfig(shards=3), eval_device="cpu") as executor:
        outcome = executor.evaluate(job)[0]
    assert outcome.ok and len(outcome.workers) == 3
    np.testing.assert_array_equal(outcome.evaluation.proba, run.predictions["bert"].proba)
    assert outcome.evaluation.plan_hash == run.result.model("bert").index_order_hash
