"""The execution section, worker planning, the fairness guard, sharding and provenance (no workers started)."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from headtohead.config.execution import ExecutionConfig, parse_cpu_set
from headtohead.engines.batching import BatchPlan, plan_batches
from headtohead.engines.environment import capture_environment
from headtohead.errors import ConfigError, DataError, DeviceError, ModelError
from headtohead.pipeline.executors import (
    EXECUTORS,
    ModelFailure,
    Task,
    TaskFailure,
    check_fairness,
    create_executor,
    failure_summary,
    merge_shards,
    plan_shards,
    plan_workers,
    shard_plan,
    shared_devices,
)
from headtohead.pipeline.executors.fairness import available_cores
from headtohead.pipeline.executors.sharding import ShardMismatch
from headtohead.pipeline.model_pass import ModelOutcome
from headtohead.results import ModelRecord
from headtohead.results.environment import environment_fingerprint, group_by_environment
from headtohead.runtime.devices import use_backend
from headtohead.testing.fake_device import FakeCudaBackend


class SameNameGPUs(FakeCudaBackend):
    """Identical fake GPUs (the base class numbers their names)."""

    def cuda_device_name(self, index: int) -> str:
        return "Fake GPU"


# --- the config section -------------------------------------------------------------------------------------------


def test_defaults_are_local_and_fair():
    config = ExecutionConfig()
    assert (config.mode, config.shards, config.speed, config.force) == ("local", 1, "main", False)
    assert create_executor(config).mode == "local"
    assert set(EXECUTORS) == {"local", "processes", "ray"}


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"mode": "threads"}, "mode"),
        ({"mode": "processes", "devices": ["gpu:0"]}, "unknown worker device 'gpu:0'"),
        ({"mode": "processes", "devices": []}, "execution.devices is empty"),
        ({"mode": "processes", "devices": ["cpu:3-1"]}, "runs backwards"),
        ({"mode": "processes", "address": "auto"}, "only apply to mode: ray"),
        ({"mode": "local", "devices": ["cpu"]}, "apply to mode: processes"),
        ({"mode": "ray", "num_workers": 2}, "let Ray place the tasks"),
        ({"mode": "ray", "num_gpus": 1.5}, "fraction below 1 or a whole number"),
        ({"mode": "processes", "shards": 0}, "shards"),
        ({"mode": "processes", "speeed": "main"}, "speeed"),
    ],
)
def test_invalid_sections_are_refused_with_the_reason(values, expected):
    with pytest.raises(ValidationError, match=expected):
        ExecutionConfig(**values)


def test_cpu_sets_parse_to_sorted_cores():
    assert parse_cpu_set("cpu:4-5,0,2") == (0, 2, 4, 5)
    assert parse_cpu_set("cpu") is None and parse_cpu_set("cuda:0") is None


# --- which worker gets which device --------------------------------------------------------------------------------


def test_cpu_workers_get_disjoint_blocks_of_the_cores():
    cores = available_cores()
    workers = plan_workers(ExecutionConfig(mode="processes"), eval_device="cpu")
    assert len(workers) == 2 and all(w.device == "cpu" for w in workers)
    sets = [set(w.cpu_set) for w in workers]
    if len(cores) >= 2:
        assert not sets[0] & sets[1] and sets[0] | sets[1] == set(cores)
    assert [w.threads for w in workers] == [len(w.cpu_set) for w in workers]


def test_explicit_cpu_sets_and_thread_overrides():
    core = available_cores()[0]
    workers = plan_workers(
        ExecutionConfig(mode="processes", devices=[f"cpu:{core}", "cpu"], threads_per_worker=3), eval_device="cpu"
    )
    assert workers[0].cpu_set == (core,) and workers[0].threads == 3
    assert core not in workers[1].cpu_set or len(available_cores()) == 1


def test_no_more_workers_than_tasks_and_devices_repeat_to_fill_num_workers():
    assert len(plan_workers(ExecutionConfig(mode="processes", num_workers=4), eval_device="cpu", n_tasks=1)) == 1
    with use_backend(SameNameGPUs(device_count=2)):
        workers = plan_workers(ExecutionConfig(mode="processes", devices=["cuda:0", "cuda:1"], num_workers=3))
    assert [w.device for w in workers] == ["cuda:0", "cuda:1", "cuda:0"]


def test_gpu_workers_default_to_every_gpu():
    with use_backend(SameNameGPUs(device_count=3)):
        workers = plan_workers(ExecutionConfig(mode="processes"), eval_device="auto")
        pinned = plan_workers(ExecutionConfig(mode="processes"), eval_device="cuda:1")
    assert [w.device for w in workers] == ["cuda:0", "cuda:1", "cuda:2"]
    assert all(w.cpu_set is None and w.threads >= 1 for w in workers)
    assert [w.device for w in pinned] == ["cuda:1", "cuda:1"]  # an explicit eval.device is kept


def test_devices_that_do_not_exist_are_refused():
    with use_backend(SameNameGPUs(device_count=1)), pytest.raises(DeviceError, match="has 1 GPU"):
        plan_workers(ExecutionConfig(mode="processes", devices=["cuda:0", "cuda:3"]))
    with pytest.raises(DeviceError, match="names cores .* this process cannot use"):
        plan_workers(ExecutionConfig(mode="processes", devices=["cpu:100000"]))


# --- the fairness guard --------------------------------------------------------------------------------------------


def test_speed_in_the_main_process_or_local_is_always_fair():
    assert check_fairness(ExecutionConfig(mode="processes"), speed_enabled=True, eval_device="cpu") == []
    assert check_fairness(ExecutionConfig(), speed_enabled=True) == []
    workers = ExecutionConfig(mode="processes", speed="workers")
    assert check_fairness(workers, speed_enabled=False, eval_device="cpu") == []
    assert check_fairness(workers, speed_enabled=True, eval_device="cpu", n_tasks=1) == []  # nothing runs beside it


def test_timing_two_models_on_one_device_is_refused_unless_forced():
    config = ExecutionConfig(mode="processes", speed="workers")
    with pytest.raises(ConfigError) as caught:
        check_fairness(config, speed_enabled=True, eval_device="cpu")
    message = str(caught.value)
    assert "\n" not in message and "cpu (2 workers)" in message and "distorts both timings" in message
    assert "--force" in message and "execution.speed: main" in message
    warnings = check_fairness(config, speed_enabled=True, force=True, eval_device="cpu")
    assert len(warnings) == 1 and "'concurrent'" in warnings[0]
    forced_in_config = ExecutionConfig(mode="processes", speed="workers", force=True)
    assert check_fairness(forced_in_config, speed_enabled=True, eval_device="cpu") == warnings


def test_separate_identical_gpus_are_fair_but_different_gpus_are_not():
    config = ExecutionConfig(mode="processes", speed="workers", devices=["cuda:0", "cuda:1"])
    with use_backend(SameNameGPUs(device_count=2)):
        assert check_fairness(config, speed_enabled=True) == []
        assert shared_devices(config) == []
    with use_backend(FakeCudaBackend(device_count=2)), pytest.raises(ConfigError, match="different GPU models"):
        check_fairness(config, speed_enabled=True)
    same_gpu = ExecutionConfig(mode="processes", speed="workers", devices=["cuda:0", "cuda:0"])
    with use_backend(SameNameGPUs(device_count=2)), pytest.raises(ConfigError, match=r"cuda:0 \(2 workers\)"):
        check_fairness(same_gpu, speed_enabled=True)


@pytest.mark.parametrize(
    ("num_gpus", "refused"), [(0.0, "CPUs of each Ray node"), (0.5, "shared by up to 2"), (1.0, None)]
)
def test_ray_tasks_share_a_device_unless_each_reserves_a_whole_gpu(num_gpus, refused):
    config = ExecutionConfig(mode="ray", speed="workers", num_gpus=num_gpus)
    if refused:
        with pytest.raises(ConfigError, match=refused):
            check_fairness(config, speed_enabled=True)
    else:
        notes = check_fairness(config, speed_enabled=True)
        assert len(notes) == 1 and "environment fingerprint" in notes[0]


# --- shards --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "batch", "shards"), [(10, 3, 2), (10, 3, 4), (10, 3, 9), (7, 7, 3), (100, 8, 3)])
def test_shards_are_whole_batches_covering_the_plan(n, batch, shards):
    parts = plan_shards(n, batch, shards)
    assert parts[0].start == 0 and parts[-1].stop == n
    assert all(a.stop == b.start for a, b in zip(parts, parts[1:]))
    assert all(p.start % batch == 0 for p in parts) and len(parts) == min(shards, -(-n // batch))
    plan = plan_batches(n, batch)
    batches = [b.tolist() for p in parts for b in shard_plan(plan, p)]
    assert batches == [b.tolist() for b in plan]  # exactly the batches of one pass


def test_merging_restores_the_plan_order_and_checks_the_hash():
    plan = BatchPlan(np.random.default_rng(0).permutation(11).astype(np.int64), 3)
    parts = plan_shards(11, 3, 3)
    proba = np.random.default_rng(1).random((11, 2)).astype(np.float32)
    pieces = [
        (s, plan.order[s.start : s.stop], proba[s.start : s.stop].argmax(1), proba[s.start : s.stop]) for s in parts
    ]
    pred, merged = merge_shards(plan, list(reversed(pieces)))  # arrival order does not matter
    np.testing.assert_array_equal(merged, proba)
    np.testing.assert_array_equal(pred, proba.argmax(1))
    with pytest.raises(ShardMismatch, match="gap or overlap"):
        merge_shards(plan, pieces[1:])
    swapped = [(pieces[0][0], pieces[0][1][::-1], pieces[0][2], pieces[0][3]), *pieces[1:]]
    with pytest.raises(ShardMismatch, match="index-order hash"):
        merge_shards(plan, swapped)


# --- provenance and failures ---------------------------------------------------------------------------------------


def test_environment_fingerprint_ignores_host_and_threads_but_not_versions():
    env = capture_environment()
    other_host = env.model_copy(update={"hostname": "node-7", "torch_threads": 99, "git_revision": "abc"})
    other_torch = env.model_copy(update={"torch": "0.0.1"})
    assert environment_fingerprint(env) == environment_fingerprint(other_host)
    assert environment_fingerprint(env) != environment_fingerprint(other_torch)
    groups = group_by_environment({"a": [env], "b": [other_host], "c": [other_torch], "d": [env, other_torch]})
    assert groups == {environment_fingerprint(env): ["a", "b", "d"], environment_fingerprint(other_torch): ["c", "d"]}


def test_failures_come_back_as_one_line_errors_of_the_right_class():
    shard = plan_shards(4, 2, 1)[0]
    user = TaskFailure(Task("m", shard), "DataError", "x.csv: not found", "host:1")
    crash = TaskFailure(Task("m", shard), "RuntimeError", "shape mismatch (at linear.py:3)", "host:2")
    assert isinstance(user.to_exception(), DataError) and str(user.to_exception()) == "x.csv: not found"
    assert isinstance(crash.to_exception(), ModelError)
    assert "model 'm' failed in worker host:2: RuntimeError: shape mismatch" in str(crash.to_exception())
    outcomes = [ModelOutcome(ModelRecord.model_construct(name="a"), None), ModelFailure("m", crash)]
    summary = failure_summary(outcomes)
    assert summary.startswith("model 'm' failed in worker host:2: RuntimeError: shape mismatch")
    assert summary.endswith("; kept: a") and "\n" not in summary
    assert failure_summary(outcomes[:1]) is None
