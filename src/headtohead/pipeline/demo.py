"""``h2h demo``: the first thing a newcomer runs — offline, under a minute or two on a laptop CPU.

Two different small image architectures from timm (a slimmed ResNet and a MobileNetV3)
are trained from random init on scikit-learn's 8×8 digits with the same seed, the same
hyperparameters and the same shuffled batches, saved as safetensors, and then compared
through the ordinary ``h2h run`` path on a held-out stratified split.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from headtohead.adapters import LoadContext, create_adapter
from headtohead.config import experiment_from_dict
from headtohead.data import create_dataset
from headtohead.engines.evaluate import ProgressCallback
from headtohead.engines.train_simple import TrainSettings, train_classifier
from headtohead.pipeline.run import Run, run
from headtohead.runtime.files import write_text_atomic

__all__ = ["run_demo", "demo_experiment"]

DEMO_SEED = 0
IMAGE_SIZE = 32

#: The two contenders: (name, timm architecture, constructor arguments).
DEMO_MODELS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("resnet-slim", "resnet10t", {"channels": [32, 64, 128, 256]}),
    ("mobilenetv3", "mobilenetv3_small_050", {}),
)


def demo_experiment(checkpoints: dict[str, Path] | None = None) -> dict[str, Any]:
    """The demo's experiment as a plain dict (what ``experiment.yaml`` in the output holds).

    Parameters
    ----------
    checkpoints : dict of str to Path, optional
        Trained weights per model name; models without one are evaluated at random init.
    """
    checkpoints = checkpoints or {}
    models = []
    for name, arch, args in DEMO_MODELS:
        entry: dict[str, Any] = {"name": name, "kind": "timm", "source": arch, "image_size": IMAGE_SIZE}
        if args:
            entry["model_args"] = args
        if name in checkpoints:
            entry["checkpoint"] = str(checkpoints[name])
        models.append(entry)
    return {
        "name": "demo-digits",
        "seed": DEMO_SEED,
        "data": {"path": "sklearn:digits", "split": {"eval_fraction": 0.3}},
        "models": models,
        "eval": {"batch_size": 64, "device": "cpu"},
        # a short but real speed comparison: interleaved rounds until each ratio is known to ±5 % or
        # decided against a 10 % margin, at most 15 s of rounds per scenario (the run then says what
        # precision it reached), ratio CI, memory pass
        "speed": {
            "scenarios": ["offline", "single_stream"],
            "min_seconds": 0.5,
            "rounds": 5,
            "margin": 0.1,
            "max_seconds": 15.0,
            "warmup_seconds": 0.2,
            "time_window_seconds": 2.0,
        },
    }


def run_demo(
    out_dir: str | Path = "runs/demo",
    *,
    epochs: int = 3,
    on_event: Callable[[str], None] | None = None,
    progress: ProgressCallback | None = None,
) -> Run:
    """Train the two demo models identically, then compare them with :func:`headtohead.run`.

    Parameters
    ----------
    out_dir : str or Path
        Receives ``models/*.safetensors``, ``experiment.yaml``, ``results.json`` and
        ``predictions.npz``.
    epochs : int
        Training epochs per model (the same for both).
    on_event : callable, optional
        Called with one line of text per training milestone.
    progress : callable, optional
        Evaluation progress callback, see :func:`headtohead.run`.

    Returns
    -------
    Run
    """
    from headtohead.adapters.weights import save_checkpoint

    say = on_event or (lambda message: None)
    out = Path(out_dir)
    experiment = experiment_from_dict(demo_experiment())
    splits = create_dataset(experiment.data, seed=experiment.seed)
    assert splits.train is not None  # the demo's data section always holds out a split
    settings = TrainSettings(epochs=epochs, seed=DEMO_SEED)
    context = LoadContext(
        label_names=splits.eval.label_names, modality=splits.eval.modality, device="cpu", seed=DEMO_SEED
    )
    say(
        f"Training {len(experiment.models)} models on {len(splits.train)} digits, identical order and settings "
        f"({epochs} epochs, batch {settings.batch_size}, AdamW lr {settings.learning_rate}); "
        f"evaluating on {len(splits.eval)} held-out digits."
    )
    checkpoints: dict[str, Path] = {}
    for model_cfg in experiment.models:
        adapter = create_adapter(model_cfg, context)
        log = train_classifier(
            adapter, splits.train, settings, on_epoch=functools.partial(_say_epoch, say, model_cfg.name, epochs)
        )
        say(f"  {model_cfg.name}: trained in {log.seconds:.1f} s ({log.samples_per_second:.0f} samples/s)")
        path = out / "models" / f"{model_cfg.name}.safetensors"
        save_checkpoint(adapter.module, path, label_names=splits.eval.label_names)
        checkpoints[model_cfg.name] = path.resolve()
    final = demo_experiment(checkpoints)
    write_text_atomic(out / "experiment.yaml", yaml.safe_dump(final, sort_keys=False))
    return run(final, out_dir=out, progress=progress)


def _say_epoch(say: Callable[[str], None], name: str, epochs: int, epoch: int, loss: float) -> None:
    say(f"  {name}: epoch {epoch}/{epochs} loss {loss:.3f}")
