"""``headtohead.train`` (``h2h train``): fine-tune every model identically, save it, then run the full comparison.

See ``docs/architecture.md``, the section of this title.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml

from headtohead.config import Experiment
from headtohead.config.loading import load_train_experiment
from headtohead.config.train import TrainConfig
from headtohead.data import create_dataset
from headtohead.engines.environment import capture_environment
from headtohead.engines.train_ddp import dist_context_from_env, init_process_group
from headtohead.errors import DataError
from headtohead.pipeline.outputs import check_owner, check_writable
from headtohead.pipeline.run import Run, run
from headtohead.pipeline.setup import absolute_data_paths
from headtohead.pipeline.training_ddp import launch_parallel
from headtohead.pipeline.training_model import check_trainable, eval_experiment, finished_run, train_one
from headtohead.report.words.training import run_line, training_plan_line
from headtohead.report.words.warnings import training_warnings
from headtohead.results import save_result
from headtohead.results.comparison import SeedResult
from headtohead.results.files import EXPERIMENT_FILE, RESULTS_FILE, TRAINING_FILE
from headtohead.results.training import TrainingRun, TrainingSummary
from headtohead.results.training_file import TrainingResult, save_training_result
from headtohead.runtime.determinism import deterministic_algorithms
from headtohead.runtime.devices import resolve_device
from headtohead.runtime.files import write_text_atomic
from headtohead.runtime.offline import offline_mode
from headtohead.version import __version__

__all__ = ["train_experiment", "TrainOutcome"]

log = logging.getLogger("headtohead")


@dataclass(repr=False)
class TrainOutcome:
    """What :func:`train_experiment` returns (in a notebook: the verdict, the summary and the training table)."""

    training: TrainingSummary
    run: Run | None  # None on the non-main processes of a torchrun launch
    out_dir: Path
    experiment: dict[str, Any]

    def __repr__(self) -> str:
        from headtohead.report.notebook import training_text

        return training_text(self.training, self.run.result if self.run else None, out_dir=self.out_dir)

    def _repr_html_(self) -> str:
        from headtohead.report.notebook import training_html

        return training_html(self.training, self.run.result if self.run else None, out_dir=self.out_dir)


def _seed_summary(runs: Sequence[TrainingRun], seeds: Sequence[int]) -> Any:
    if len(seeds) < 2 or not all(r.final_eval for r in runs):
        return None
    from headtohead.stats import summarise_seeds  # SciPy: only when several seeds are compared

    results = [SeedResult(model=r.model, seed=r.seed, metrics=dict(r.final_eval)) for r in runs]
    return summarise_seeds(results, compare_metric="accuracy")


def train_experiment(
    experiment: Experiment | str | Path | Mapping[str, Any],
    *,
    out_dir: str | Path | None = None,
    overrides: Sequence[str] = (),
    train: TrainConfig | None = None,
    base_dir: str | Path | None = None,
    on_event: Callable[[str], None] | None = None,
    progress: Any = None,
    resume: bool | None = None,
    overwrite: bool = False,
    offline: bool = False,
    deterministic: bool = False,
) -> TrainOutcome:
    """Train every model of ``experiment`` identically (per seed), save them, then compare them.

    Parameters
    ----------
    experiment : Experiment, path or mapping
        An experiment with a ``train:`` section (defaults apply without one) and training
        data (``data.train`` or ``data.split``).
    out_dir : str or Path, optional
        Output folder (default ``runs/<name>``): ``models/``, ``checkpoints/``,
        ``training.json``, ``experiment.yaml``, ``results.json``, ``predictions.npz``.
    overrides : sequence of str
        ``--set`` strings (``train.epochs=1``, ``models.bert.max_length=64`` …).
    train : TrainConfig, optional
        The training settings of an already validated ``experiment`` (as
        :func:`~headtohead.config.loading.load_train_experiment` splits them off).
    base_dir : str or Path, optional
        Folder of relative paths for a dict or record experiment (default: the current directory).
    on_event : callable, optional
        Receives one line of text per milestone (epochs, finished models, warnings).
    progress : callable, optional
        Evaluation progress callback of :func:`headtohead.run`.
    resume : bool, optional
        Replaces ``train.resume`` (``False``: train and compare every model again).
    overwrite, offline, deterministic : bool
        As :func:`headtohead.run` takes them, for the training too (``overwrite`` is checked
        before it; ``deterministic`` does not reach the workers of ``train.nproc > 1``).

    Returns
    -------
    TrainOutcome

    Raises
    ------
    H2HError
        Invalid experiment, no training data, a model that cannot be trained, a device
        without the requested precision, or a checkpoint made with other settings.
    """
    say = on_event or (lambda line: None)
    if isinstance(experiment, Experiment) and train is not None and not overrides:
        exp, config, base_dir = experiment, train, Path(base_dir or Path.cwd())
    else:
        exp, config, found_base = load_train_experiment(experiment, overrides)
        base_dir = found_base if isinstance(experiment, (str, Path)) or base_dir is None else Path(base_dir)
    config = config if resume is None else config.model_copy(update={"resume": resume})
    check_trainable(exp)
    out = Path(out_dir) if out_dir is not None else Path("runs") / exp.name
    check_writable(out)  # before hours of training, not after
    check_owner(out, exp.name, command="h2h run", overwrite=overwrite)  # before training, too
    with contextlib.ExitStack() as stack:
        if offline:
            stack.enter_context(offline_mode())
        if deterministic:
            stack.enter_context(deterministic_algorithms())
        options = dict(overwrite=overwrite, offline=offline, deterministic=deterministic)
        device = resolve_device(config.device or exp.eval.device)
        dist = dist_context_from_env(config.ddp_backend, device)
        if dist is not None:
            init_process_group(dist)
            device = f"cuda:{dist.local_rank}" if device.startswith("cuda") else device
        data = absolute_data_paths(exp.data, base_dir)
        splits = create_dataset(data, seed=exp.seed)
        if splits.train is None:
            raise DataError(
                f"{data.path}: h2h train needs training data; set data.train (a separate file) or "
                f"data.split (hold out part of data.path for evaluation)"
            )
        seeds = config.seeds_for(exp.seed)
        world = dist.world_size if dist is not None else config.nproc
        say(
            training_plan_line(
                len(exp.models),
                len(seeds),
                len(splits.train),
                len(splits.eval),
                {**config.model_dump(), "world": world},
            )
        )
        common: dict[str, Any] = dict(
            data=data,
            splits=splits,
            config=config,
            exp_seed=exp.seed,
            device=device,
            base_dir=base_dir,
            out=out,
            eval_batch_size=exp.eval.batch_size,
            say=say,
        )
        runs: list[TrainingRun] = []
        for seed in seeds:
            for model in exp.models:
                done = finished_run(model, splits, config, seed, world, out)
                if done is not None:
                    say(
                        f"  {model.name} (seed {seed}): already trained with these settings in {done.saved_to}; "
                        f"reusing it (set train.resume: false to train again)"
                    )
                elif config.nproc > 1 and dist is None:
                    done = launch_parallel(model, seed=seed, **common)
                else:
                    done = train_one(model, seed=seed, dist=dist, **common)
                if done.cost is not None:  # the machine's price (speed.price_per_hour) prices the whole fine-tune
                    done = done.model_copy(update={"cost": done.cost.priced(exp.speed.price_per_hour)})
                runs.append(done)
                if dist is None or dist.is_main:
                    say(run_line(done))
                    for warning in training_warnings(done, config.stall_warning):
                        log.warning("%s", warning)
        summary = _summary(config, splits, seeds, runs)
        if dist is not None and not dist.is_main:
            return TrainOutcome(training=summary, run=None, out_dir=out, experiment={})
        created = datetime.now(timezone.utc).isoformat(timespec="seconds")
        environment = capture_environment(base_dir)
        record = TrainingResult(
            headtohead_version=__version__, name=exp.name, created_at=created, environment=environment, training=summary
        )
        save_training_result(record, out / TRAINING_FILE)
        saved = {r.model: r.saved_to for r in runs if r.seed == seeds[0]}
        final = eval_experiment(exp, data, saved)  # type: ignore[arg-type]
        write_text_atomic(out / EXPERIMENT_FILE, yaml.safe_dump(final, sort_keys=False))
        say(
            f"Comparing the trained models (seed {seeds[0]}) on {len(splits.eval)} examples: h2h run "
            f"{out / EXPERIMENT_FILE}"
        )
        compared = _compare(final, out, summary, progress, resume="reuse" if config.resume else False, **options)
        return TrainOutcome(training=summary, run=compared, out_dir=out, experiment=final)


def _summary(config: TrainConfig, splits: Any, seeds: list[int], runs: list[TrainingRun]) -> TrainingSummary:
    summary = TrainingSummary(
        settings=config.model_dump(mode="json"),
        train_source=splits.train.source,
        n_train=len(splits.train),
        train_fingerprint=splits.train.fingerprint(),
        eval_fingerprint=splits.eval.fingerprint(),
        seeds=seeds,
        runs=runs,
        multi_seed=_seed_summary(runs, seeds),
    )
    if not summary.identical_order():
        # Cannot happen with one trainer; kept as a guard the results file can prove.
        summary = summary.model_copy(update={"warnings": ["models of the same seed saw different example orders"]})
    return summary


def _compare(final: dict[str, Any], out: Path, summary: TrainingSummary, progress: Any, **options: Any) -> Any:
    """Run the ordinary comparison on the trained weights; keep the training record in results.json."""
    # resume="reuse": a comparison interrupted earlier re-uses its finished models (keys include the weights'
    # stamps); on changed data it evaluates them again rather than refusing as h2h run --resume does.
    outcome = run(final, out_dir=out, progress=progress, **options)
    outcome.result = outcome.result.model_copy(update={"training": summary})
    save_result(outcome.result, out / RESULTS_FILE)
    return outcome
