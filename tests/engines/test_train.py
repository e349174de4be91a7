"""The trainer: identical order, the recipe (schedule, accumulation, precision, checkpointing,
compile, workers), the data-stall metric and the records it produces."""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch

from headtohead.adapters import LoadContext, create_adapter
from headtohead.config.schema import DataConfig, model_settings
from headtohead.config.train import TargetConfig, TrainConfig
from headtohead.data import create_dataset
from headtohead.engines.batching import plan_batches
from headtohead.engines.train import TrainHooks, train_model
from headtohead.engines.train_loop import build_optimizer, build_scheduler, resolve_precision
from headtohead.errors import ConfigError, DeviceError, ModelError
from headtohead.report.words.warnings import training_warnings
from headtohead.results.training import StepLog, TrainingRun
from headtohead.runtime.devices import use_backend
from headtohead.testing.fake_device import FakeCudaBackend

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def iris():
    return create_dataset(DataConfig(path="sklearn:iris", split={"eval_fraction": 0.3}), seed=0)


def _mlp(iris, hidden: int = 16, seed: int = 0):
    config = model_settings(
        name=f"mlp{hidden}",
        kind="python",
        source="headtohead.testing.models:tiny_mlp",
        model_args={"n_features": 4, "n_classes": 3, "hidden": hidden, "seed": seed},
        label_names=list(iris.eval.label_names),
    )
    return create_adapter(config, LoadContext(label_names=iris.eval.label_names, modality="features", seed=seed))


def _recording(adapter):
    seen: list[tuple] = []
    original = adapter.preprocess

    def preprocess(examples):
        seen.extend(tuple(np.asarray(e).round(6)) for e in examples)
        return original(examples)

    adapter.preprocess = preprocess
    return seen


def _weights(adapter):
    return {k: v.detach().clone() for k, v in adapter.module.state_dict().items()}


def test_every_model_sees_the_same_examples_in_the_same_order(iris):
    config = TrainConfig(epochs=2, batch_size=8, learning_rate=1e-2)
    small, large = _mlp(iris, 8), _mlp(iris, 32)
    seen_small, seen_large = _recording(small), _recording(large)
    run_small = train_model(small, iris.train, config, seed=3)
    run_large = train_model(large, iris.train, config, seed=3)
    assert seen_small == seen_large and len(seen_small) == 2 * len(iris.train)
    expected = [plan_batches(len(iris.train), 8, shuffle=True, seed=3 + e).hash() for e in range(2)]
    assert [e.order_hash for e in run_small.epochs] == expected == [e.order_hash for e in run_large.epochs]
    assert run_small.order_hash == run_large.order_hash
    first_epoch = plan_batches(len(iris.train), 8, shuffle=True, seed=3).order
    assert seen_small[: len(iris.train)] == [tuple(np.asarray(iris.train.examples[i]).round(6)) for i in first_epoch]
    other = train_model(_mlp(iris, 8), iris.train, config, seed=4)
    assert other.order_hash != run_small.order_hash


def test_gradient_accumulation_equals_the_larger_batch(iris):
    accumulated, whole = _mlp(iris), _mlp(iris)
    base = dict(epochs=2, learning_rate=5e-2, warmup_ratio=0.2, timing_warmup_steps=0)
    run_a = train_model(
        accumulated, iris.train, TrainConfig(batch_size=4, gradient_accumulation_steps=2, **base), seed=1
    )
    run_b = train_model(whole, iris.train, TrainConfig(batch_size=8, **base), seed=1)
    assert run_a.optimizer_steps == run_b.optimizer_steps == 2 * int(np.ceil(len(iris.train) / 8))
    assert len(run_a.steps.compute_ns) == 2 * len(run_b.steps.compute_ns) - 2  # the last batch of 1 stays single
    a, b = _weights(accumulated), _weights(whole)
    assert all(torch.allclose(a[k], b[k], atol=1e-5) for k in a)
    assert not torch.allclose(a["0.weight"], _weights(_mlp(iris))["0.weight"])  # it did train


def test_max_steps_stops_mid_epoch_with_the_schedule_at_zero(iris):
    run = train_model(
        _mlp(iris), iris.train, TrainConfig(epochs=5, max_steps=5, batch_size=8), seed=0, eval_data=iris.eval
    )
    assert run.optimizer_steps == 5 and len(run.epochs) == 1
    epoch = run.epochs[0]
    assert epoch.partial and epoch.steps == 5 and epoch.samples == 40 and epoch.learning_rate == 0.0
    assert run.final_eval and set(run.final_eval) == {"accuracy", "balanced_accuracy", "f1_macro", "loss"}
    cold = train_model(_mlp(iris), iris.train, TrainConfig(max_steps=2, batch_size=8, timing_warmup_steps=3), seed=0)
    assert cold.samples_per_s is None and any("all 2 steps were timing warm-up steps" in w for w in cold.warnings)


def test_linear_warmup_then_decay_and_no_decay_on_biases():
    module = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.LayerNorm(4), torch.nn.Linear(4, 2))
    config = TrainConfig(learning_rate=1.0, warmup_ratio=0.2, weight_decay=0.1)
    optimizer = build_optimizer(module, config)
    decays = {p.ndim: g["weight_decay"] for g in optimizer.param_groups for p in g["params"]}
    assert decays == {2: 0.1, 1: 0.0}
    scheduler = build_scheduler(optimizer, config, total_steps=10)
    rates = []
    for _ in range(10):
        rates.append(scheduler.get_last_lr()[0])
        optimizer.step()
        scheduler.step()
    assert rates[:3] == [0.0, 0.5, 1.0] and rates[2:] == pytest.approx([1 - k / 8 for k in range(8)])
    assert scheduler.get_last_lr()[0] == 0.0


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_autocast_trains_on_cpu(iris, precision):
    run = train_model(
        _mlp(iris), iris.train, TrainConfig(epochs=1, batch_size=8, precision=precision), seed=0, eval_data=iris.eval
    )
    assert run.precision == precision and np.isfinite(run.steps.loss).all() and run.final_eval
    assert resolve_precision("fp16", "cpu").scaler and resolve_precision("bf16", "cpu").dtype == torch.bfloat16
    assert not resolve_precision("bf16", "cpu").scaler and resolve_precision("fp32", "cpu").dtype is None


def test_precision_the_device_lacks_is_refused_clearly(monkeypatch):
    with use_backend(FakeCudaBackend(name="Tesla V100")):
        with pytest.raises(
            DeviceError,
            match=r"bf16 but Tesla V100 0 \(cuda:0\) has no native bfloat16.*use "
            r"precision: fp16",
        ):
            resolve_precision("bf16", "cuda:0", cuda_bf16_supported=lambda: False)
    monkeypatch.setattr(torch.amp, "is_autocast_available", lambda device_type: False)
    with pytest.raises(DeviceError, match="has no autocast on 'mps'; use precision: fp32"):
        resolve_precision("fp16", "mps")


def test_gradient_checkpointing_on_a_transformer_and_refused_elsewhere(iris, tmp_path):
    from headtohead.testing.data import make_text_table
    from headtohead.testing.text import make_tiny_bert

    table = make_text_table(tmp_path / "t.csv", n_per_class=8)
    text = create_dataset(DataConfig(path=str(table), split={"eval_fraction": 0.25}), seed=0)
    folder = make_tiny_bert(tmp_path / "bert", ["negative", "positive"])
    bert = create_adapter(
        model_settings(name="bert", kind="transformers", source=str(folder), max_length=16),
        LoadContext(label_names=text.eval.label_names, modality="text"),
    )
    config = TrainConfig(epochs=1, batch_size=4, gradient_checkpointing=True, timing_warmup_steps=1)
    run = train_model(bert, text.train, config, seed=0)
    flag = getattr(bert.module, "is_activation_checkpointing", None)
    assert (flag if flag is not None else bert.module.is_gradient_checkpointing) and run.gradient_checkpointing
    assert run.steps.tokens is not None and run.steps.tokens_per_s > 0
    with pytest.raises(
        ModelError, match="mlp16.*does not support gradient checkpointing; set train.gradient_checkpointing: false"
    ):
        train_model(_mlp(iris), iris.train, TrainConfig(gradient_checkpointing=True), seed=0)


def test_compiled_training_matches_eager_and_bad_backends_are_named(iris):
    config = TrainConfig(epochs=1, batch_size=8, learning_rate=1e-2)
    plain, compiled = _mlp(iris), _mlp(iris)
    train_model(plain, iris.train, config, seed=0)
    run = train_model(
        compiled, iris.train, config.model_copy(update={"compile": True, "compile_backend": "eager"}), seed=0
    )
    assert run.compile
    a, b = _weights(plain), _weights(compiled)
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)
    with pytest.raises(
        ConfigError, match="compile_backend 'inductr' is not a torch.compile backend — did you mean inductor"
    ):
        train_model(
            _mlp(iris), iris.train, config.model_copy(update={"compile": True, "compile_backend": "inductr"}), seed=0
        )


def test_worker_processes_give_the_same_training(iris):
    config = TrainConfig(epochs=2, batch_size=16, learning_rate=1e-2)
    inline, workers = _mlp(iris), _mlp(iris)
    run_inline = train_model(inline, iris.train, config, seed=2)
    run_workers = train_model(workers, iris.train, config.model_copy(update={"num_workers": 2}), seed=2)
    assert run_workers.num_workers == 2 and run_workers.order_hash == run_inline.order_hash
    assert run_workers.steps.loss == run_inline.steps.loss
    a, b = _weights(inline), _weights(workers)
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_stall_share_is_measured_and_warned_about(iris):
    adapter = _mlp(iris)
    original = adapter.preprocess

    def slow(examples):
        time.sleep(0.05)  # a tokeniser far slower than the model
        return original(examples)

    adapter.preprocess = slow
    config = TrainConfig(epochs=1, max_steps=6, batch_size=8, timing_warmup_steps=1)
    run = train_model(adapter, iris.train, config, seed=0)
    waits = np.array(run.steps.data_wait_ns)
    assert (waits >= 0.05e9).all() and run.steps.excluded == [0] and run.steps.timed_steps == 5
    assert run.data_wait_fraction > 0.5
    shown = training_warnings(run, config.stall_warning)  # worded where it is shown (report/words/warnings.py)
    assert any(
        f"waits for data {run.data_wait_fraction * 100:.0f} % of the time — raise train.num_workers" in w for w in shown
    )
    quiet = train_model(_mlp(iris), iris.train, config.model_copy(update={"stall_warning": 0.99}), seed=0)
    assert not any("waits for data" in w for w in training_warnings(quiet, 0.99))


def test_step_log_rates_are_derived_from_raw_steps_and_never_trusted():
    log = StepLog(
        data_wait_ns=[9_000_000_000, 1_000_000_000, 3_000_000_000],
        compute_ns=[1_000_000_000, 3_000_000_000, 1_000_000_000],
        samples=[8, 8, 4],
        tokens=[80, 80, 40],
        loss=[1.0, 0.5, 0.4],
        excluded=[0],
    )
    assert log.data_wait_fraction == pytest.approx(4 / 8)
    assert log.samples_per_s == pytest.approx(12 / 8) and log.tokens_per_s == pytest.approx(120 / 8)
    tampered = log.model_dump(mode="json") | {"samples_per_s": 1e9, "data_wait_fraction": 0.0}
    again = StepLog.model_validate(tampered)
    assert again.samples_per_s == log.samples_per_s and again.data_wait_fraction == log.data_wait_fraction


def test_training_run_round_trips_through_json(iris):
    run = train_model(
        _mlp(iris), iris.train, TrainConfig(epochs=2, batch_size=16), seed=0, eval_data=iris.eval, load_time_s=0.5
    )
    again = TrainingRun.model_validate_json(run.model_dump_json())
    assert again == run and again.samples_per_s == run.samples_per_s
    assert run.samples_seen == 2 * len(iris.train) and run.rss_peak_mb > 0 and run.cuda_max_allocated_mb is None
    assert not run.telemetry.available and run.time_per_epoch_s == pytest.approx(
        np.mean([e.train_s for e in run.epochs])
    )
    assert [e.epoch for e in run.epochs] == [1, 2] and run.epochs[1].elapsed_train_s > run.epochs[0].elapsed_train_s


def test_target_time_is_the_training_time_of_the_first_epoch_reaching_it(iris):
    config = TrainConfig(epochs=3, batch_size=8, learning_rate=5e-2, target={"metric": "loss", "value": 10.0})
    run = train_model(_mlp(iris), iris.train, config, seed=0, eval_data=iris.eval)
    assert run.target_epoch == 1 and run.time_to_target_s == run.epochs[0].elapsed_train_s
    never = config.model_copy(update={"target": TargetConfig(metric="accuracy", value=1.01)})
    assert train_model(_mlp(iris), iris.train, never, seed=0, eval_data=iris.eval).time_to_target_s is None


def test_models_without_a_torch_module_are_refused(tmp_path):
    config = model_settings(
        name="words",
        kind="python",
        source="headtohead.testing.models:keyword_classifier",
        model_args={"keywords": {"negative": ["bad"], "positive": ["good"]}},
        outputs="probabilities",
    )
    adapter = create_adapter(config, LoadContext(label_names=("negative", "positive"), modality="text"))
    data = create_dataset(DataConfig(path="sklearn:iris"), seed=0).eval
    with pytest.raises(ModelError, match="'words' \\(kind python\\) has no torch module"):
        train_model(adapter, data, TrainConfig(), seed=0, hooks=TrainHooks())
