"""Epoch checkpoints: an interrupted training resumes and ends exactly where an uninterrupted one does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from headtohead.adapters import LoadContext, create_adapter
from headtohead.config.schema import DataConfig, model_settings
from headtohead.config.train import TrainConfig
from headtohead.data import create_dataset
from headtohead.engines.train import TrainHooks, train_model
from headtohead.engines.train_state import latest_checkpoint
from headtohead.errors import ConfigError

# Dropout on (tiny BERT), accumulation over an uneven last group, warm-up and decay: every piece
# of state a resume must restore (weights, AdamW moments, schedule, RNG) matters here.
CONFIG = TrainConfig(
    epochs=3, batch_size=6, gradient_accumulation_steps=2, learning_rate=2e-3, warmup_ratio=0.2, timing_warmup_steps=1
)


class Interrupted(Exception):
    pass


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    from headtohead.testing.data import make_text_table
    from headtohead.testing.text import make_tiny_bert

    root = tmp_path_factory.mktemp("resume")
    table = make_text_table(root / "t.csv", n_per_class=20)
    folder = make_tiny_bert(root / "bert", ["negative", "positive"], seed=3)
    return root, table, folder


def _data(table):
    return create_dataset(DataConfig(path=str(table), split={"eval_fraction": 0.25}), seed=0)


def _adapter(folder, splits):
    config = model_settings(name="bert", kind="transformers", source=str(folder), max_length=24)
    return create_adapter(config, LoadContext(label_names=splits.eval.label_names, modality="text", seed=5))


@pytest.fixture(scope="module")
def uninterrupted(setup):
    root, table, folder = setup
    splits = _data(table)
    adapter = _adapter(folder, splits)
    with _one_thread():
        run = train_model(adapter, splits.train, CONFIG, seed=7, eval_data=splits.eval, checkpoint_dir=root / "ck-full")
    return run, adapter.module.state_dict()


class _one_thread:
    """Same thread count in this process and the subprocess: float sums then round identically."""

    def __enter__(self):
        self.before = torch.get_num_threads()
        torch.set_num_threads(1)

    def __exit__(self, *exc):
        torch.set_num_threads(self.before)


def _assert_same_training(resumed, resumed_state, reference):
    run, state = reference
    assert resumed.resumed_from_epoch == 1
    assert all(torch.equal(state[k], resumed_state[k]) for k in state), "weights differ after resuming"
    assert resumed.steps.loss == run.steps.loss
    assert [e.train_loss for e in resumed.epochs] == [e.train_loss for e in run.epochs]
    assert [e.eval for e in resumed.epochs] == [e.eval for e in run.epochs]
    assert resumed.order_hash == run.order_hash and resumed.optimizer_steps == run.optimizer_steps
    assert len(resumed.steps.compute_ns) == len(run.steps.compute_ns)


def test_an_exception_mid_epoch_then_resume_equals_the_uninterrupted_run(setup, uninterrupted):
    root, table, folder = setup
    splits = _data(table)

    def fail_in_epoch_two(info):
        if info.epoch == 2 and info.step_in_epoch == 2:
            raise Interrupted()

    with _one_thread():
        with pytest.raises(Interrupted):
            train_model(
                _adapter(folder, splits),
                splits.train,
                CONFIG,
                seed=7,
                eval_data=splits.eval,
                checkpoint_dir=root / "ck-hook",
                hooks=TrainHooks(on_step=fail_in_epoch_two),
            )
        assert latest_checkpoint(root / "ck-hook").name == "epoch-0001"
        adapter = _adapter(folder, splits)
        resumed = train_model(
            adapter, splits.train, CONFIG, seed=7, eval_data=splits.eval, checkpoint_dir=root / "ck-hook"
        )
    _assert_same_training(resumed, adapter.module.state_dict(), uninterrupted)
    # The first step after the restart is a cold one too: it is left out of the rates.
    assert resumed.steps.excluded == [0, uninterrupted[0].epochs[0].steps]


_SCRIPT = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import torch
    torch.set_num_threads(1)
    sys.path.insert(0, {tests!r})
    from test_training_resume import CONFIG, _adapter, _data
    from headtohead.engines.train import TrainHooks, train_model

    marker = Path({marker!r})

    def stall_in_epoch_two(info):
        if info.epoch == 2 and info.step_in_epoch == 1:
            marker.write_text("epoch 2 under way")
            time.sleep(120)  # the test kills the process here

    splits = _data(Path({table!r}))
    train_model(_adapter(Path({folder!r}), splits), splits.train, CONFIG, seed=7, eval_data=splits.eval,
                checkpoint_dir=Path({checkpoints!r}), hooks=TrainHooks(on_step=stall_in_epoch_two))
""")


def test_a_killed_process_resumes_from_its_epoch_checkpoint(setup, uninterrupted, tmp_path, until):
    root, table, folder = setup
    checkpoints, marker = root / "ck-killed", tmp_path / "marker"
    script = tmp_path / "train_then_get_killed.py"
    script.write_text(
        _SCRIPT.format(
            tests=str(Path(__file__).parent),
            marker=str(marker),
            table=str(table),
            folder=str(folder),
            checkpoints=str(checkpoints),
        )
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    process = subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        if not until(marker.exists, process):
            output = process.stdout.read().decode(errors="replace")[-1500:] if process.stdout else ""
            pytest.fail(f"the training process ended before epoch 2: {output}")
        assert latest_checkpoint(checkpoints).name == "epoch-0001"
        process.send_signal(signal.SIGKILL)
        assert process.wait() == -signal.SIGKILL
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout:
            process.stdout.close()
    splits = _data(table)
    adapter = _adapter(folder, splits)
    with _one_thread():
        resumed = train_model(adapter, splits.train, CONFIG, seed=7, eval_data=splits.eval, checkpoint_dir=checkpoints)
    _assert_same_training(resumed, adapter.module.state_dict(), uninterrupted)


def test_other_settings_refuse_to_resume_unless_told_to_start_over(setup, uninterrupted):
    root, table, folder = setup
    splits = _data(table)
    changed = CONFIG.model_copy(update={"learning_rate": 1e-3})
    with pytest.raises(
        ConfigError,
        match=r"ck-full/epoch-0003: this checkpoint was made with other settings "
        r"\(learning_rate: 0.002 → 0.001\); delete .* or set train.resume: false",
    ):
        train_model(_adapter(folder, splits), splits.train, changed, seed=7, checkpoint_dir=root / "ck-full")
    fresh = train_model(
        _adapter(folder, splits),
        splits.train,
        changed.model_copy(update={"resume": False, "epochs": 1}),
        seed=7,
        checkpoint_dir=root / "ck-full",
    )
    assert fresh.resumed_from_epoch is None and len(fresh.epochs) == 1


def test_a_finished_run_is_not_trained_again_and_partial_checkpoints_are_ignored(setup, uninterrupted, tmp_path):
    root, table, folder = setup
    splits = _data(table)
    checkpoints = tmp_path / "ck"
    train_model(
        _adapter(folder, splits),
        splits.train,
        CONFIG.model_copy(update={"epochs": 1}),
        seed=7,
        checkpoint_dir=checkpoints,
    )
    (checkpoints / "epoch-0002.partial").mkdir()  # what a kill during the next checkpoint leaves
    assert latest_checkpoint(checkpoints).name == "epoch-0001"
    steps: list[int] = []
    again = train_model(
        _adapter(folder, splits),
        splits.train,
        CONFIG.model_copy(update={"epochs": 1}),
        seed=7,
        checkpoint_dir=checkpoints,
        hooks=TrainHooks(on_step=lambda info: steps.append(info.step)),
    )
    assert steps == [] and again.resumed_from_epoch == 1 and len(again.epochs) == 1
    assert sorted(p.name for p in checkpoints.iterdir() if not p.name.endswith(".partial")) == ["epoch-0001"]
