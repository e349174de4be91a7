"""``headtohead.sweep`` (``h2h sweep``): every variant of every swept model, for quality and speed, with failures as results.

Per model: load the parent once; expand the grid; evaluate the parent and then each
variant on the *same* batch plan; compare each with the parent (paired statistics); time
the parent and the variants together at every swept batch size. A variant that cannot be
built, exported, checked or run is recorded with its stage and reason and the sweep goes
on. Then the recommendation; ``sweep.json`` and the report are written when an output
folder is given.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from headtohead.adapters import LoadContext, ModelAdapter, create_adapter
from headtohead.config.schema import Experiment, ModelConfig
from headtohead.config.sweep import SweepConfig, sweep_with_options
from headtohead.data.base import Dataset
from headtohead.engines.batching import BatchPlan
from headtohead.engines.environment import capture_environment
from headtohead.engines.evaluate import Evaluation, ProgressCallback, batch_examples, evaluate_model
from headtohead.engines.seeding import seed_everything
from headtohead.errors import ConfigError, did_you_mean, listing
from headtohead.pipeline.outputs import claim_output
from headtohead.pipeline.resume import ResumeStore, model_key
from headtohead.pipeline.setup import dataset_record, prepare_run, resolve_experiment
from headtohead.report.words.speed import speed_sentence
from headtohead.report.words.sweep import recommendation_sentence, variant_verdict
from headtohead.report.write import write_sweep_report
from headtohead.results.files import RESUME_DIR, SWEEP_FILE
from headtohead.results.sweep import (
    ModelSweep,
    QualityVsParent,
    SpeedPoint,
    SweepCell,
    SweepResult,
    VariantParams,
    save_sweep,
)
from headtohead.runtime.determinism import deterministic_algorithms
from headtohead.runtime.offline import offline_mode
from headtohead.stats.recommend import recommend
from headtohead.stats.variant_quality import quality_vs_parent
from headtohead.sweeps.capabilities import release_memory
from headtohead.sweeps.grid import Grid, VariantSpec, expand_grid, variant_name
from headtohead.sweeps.measure import describe_failure, measure_batch_size, same_examples, sweep_speed_config
from headtohead.sweeps.variants import BuildOptions, VariantAdapter, VariantError, build_variant
from headtohead.version import __version__

__all__ = ["run_sweep", "sweep_model", "SweepRun"]

log = logging.getLogger("headtohead")


@dataclass(repr=False)
class SweepRun:
    """What :func:`run_sweep` returns: the record and where it was saved (in a notebook: the
    recommendation and the table)."""

    result: SweepResult
    out_dir: Path | None
    files: list[Path]

    def __repr__(self) -> str:
        from headtohead.report.notebook import sweep_text

        return sweep_text(self.result, out_dir=self.out_dir)

    def _repr_html_(self) -> str:
        from headtohead.report.notebook import sweep_html

        return sweep_html(self.result, out_dir=self.out_dir)


@dataclass
class _Built:
    """A variant while the sweep of its model runs."""

    spec: VariantSpec
    name: str
    adapter: VariantAdapter | None = None
    evaluation: Evaluation | None = None
    build_s: float | None = None
    stage: str | None = None
    reason: str | None = None


def _scores(evaluation: Evaluation) -> tuple[Any, Any]:
    """Predictions and probabilities of a model that computes (every swept model does)."""
    assert evaluation.proba is not None, "a swept model computes its scores"
    return evaluation.pred, evaluation.proba


def _with_sentence(point: SpeedPoint) -> SpeedPoint:
    """The point with its speed ratio against the parent worded (``vs_parent.verdict``)."""
    if point.vs_parent is None:
        return point
    return point.model_copy(
        update={"vs_parent": point.vs_parent.model_copy(update={"verdict": speed_sentence(point.vs_parent)})}
    )


def _check_batches(dataset: Dataset, eval_batch_size: int, count: int) -> list[list[Any]]:
    """Raw batches of different sizes for the ONNX check (the first, of ≥ 2 examples, is the export example)."""
    n = len(dataset)
    sizes = sorted({min(n, max(2, eval_batch_size)), min(n, 3), 1}, reverse=True)[:count]
    sizes += [min(n, 2)] * (count - len(sizes))
    out, start = [], 0
    for size in sizes:
        indices = [(start + i) % n for i in range(size)]
        start += size
        out.append(batch_examples(dataset, indices))
    return out


def _build_and_evaluate(
    parent: ModelAdapter,
    grid: Grid,
    spec: VariantSpec,
    dataset: Dataset,
    plan: BatchPlan,
    options: BuildOptions,
    progress: ProgressCallback | None,
) -> _Built:
    built = _Built(spec=spec, name=variant_name(parent.name, spec, grid.parent))
    began = time.perf_counter()
    try:
        built.adapter = build_variant(parent, spec, grid.parent, name=built.name, options=options)
    except VariantError as exc:
        built.stage, built.reason = exc.stage, exc.reason
    except Exception as exc:  # a failure of the libraries building it is this cell's result
        built.stage, built.reason = "build", describe_failure(exc)
    built.build_s = time.perf_counter() - began
    if built.adapter is None:
        if built.stage != "capability":  # something was allocated before it failed
            release_memory(str(parent.device))
        return built
    try:
        built.evaluation = evaluate_model(built.adapter, dataset, plan, progress=progress)
    except Exception as exc:  # compile errors, unsupported kernels, OOM … at the quality pass
        built.stage, built.reason = "quality", describe_failure(exc)
        built.adapter = None
        release_memory(str(parent.device))
    return built


def _cell(
    model: str,
    name: str,
    spec: VariantSpec,
    *,
    parent: bool,
    adapter: ModelAdapter | None,
    points: Mapping[int, SpeedPoint] | None,
    **fields: Any,
) -> SweepCell:
    status: Literal["measured", "failed", "skipped"] = (
        "measured" if adapter is not None else fields.pop("status", "failed")
    )
    notes = list(getattr(adapter, "notes", []))
    return SweepCell(
        name=name,
        model=model,
        parent=parent,
        params=VariantParams(**spec.params()),
        status=status,
        num_parameters=adapter.num_parameters() if adapter is not None else None,
        parameter_bytes=adapter.parameter_bytes() if adapter is not None else None,
        points=[points[b] for b in sorted(points)] if points else [],
        notes=notes,
        warnings=list(adapter.warnings) if adapter is not None else [],
        **fields,
    )


def _speed_curve(
    parent: ModelAdapter,
    variants: list[ModelAdapter],
    dataset: Dataset,
    exp: Experiment,
    batch_sizes: Sequence[int],
    progress: ProgressCallback | None,
) -> dict[str, dict[int, SpeedPoint]]:
    """Each model's speed point at each batch size, the parent and its variants measured side by side."""
    speed = sweep_speed_config(exp.speed)
    points: dict[str, dict[int, SpeedPoint]] = {parent.name: {}, **{v.name: {} for v in variants}}
    for size in batch_sizes:

        def stage(task: str, done: int, total: int, label: str = f"{parent.name} speed @ batch {size}") -> None:
            if progress is not None:  # the label bound now: ``parent`` is deleted before this function returns
                progress(label, done, total)

        measured = measure_batch_size(
            parent,
            variants,
            dataset,
            same_examples(speed, size, batch_sizes),
            size,
            seed=exp.seed,
            progress=stage,
        )
        for name, point in measured.items():
            points[name][size] = _with_sentence(point)
    return points


def _cells(
    parent: ModelAdapter,
    grid: Grid,
    built: list[_Built],
    points: dict[str, dict[int, SpeedPoint]],
    qualities: dict[str, QualityVsParent],
    parent_eval_s: float,
    *,
    accuracy: float,
) -> list[SweepCell]:
    """The sweep's cells: the parent, each variant built (measured, or failed with its stage and reason), each skipped."""
    cells = [
        _cell(
            parent.name,
            parent.name,
            grid.parent,
            parent=True,
            adapter=parent,
            points=points[parent.name],
            eval_s=parent_eval_s,
            accuracy=accuracy,
        )
    ]
    for b in built:
        if b.adapter is not None and b.evaluation is not None:
            cells.append(
                _cell(
                    parent.name,
                    b.name,
                    b.spec,
                    parent=False,
                    adapter=b.adapter,
                    points=points[b.name],
                    build_s=b.build_s,
                    eval_s=b.evaluation.seconds,
                    quality=qualities[b.name],
                    accuracy=qualities[b.name].accuracy,
                )
            )
        else:
            cells.append(
                _cell(
                    parent.name,
                    b.name,
                    b.spec,
                    parent=False,
                    adapter=None,
                    points=None,
                    stage=b.stage,
                    reason=b.reason,
                    build_s=b.build_s,
                )
            )
    for spec, reason in grid.skipped:
        cells.append(
            _cell(
                parent.name,
                variant_name(parent.name, spec, grid.parent),
                spec,
                parent=False,
                adapter=None,
                points=None,
                status="skipped",
                stage="grid",
                reason=reason,
            )
        )
    return cells


def sweep_model(
    model_cfg: ModelConfig,
    context: LoadContext,
    dataset: Dataset,
    plan: BatchPlan,
    sweep: SweepConfig,
    *,
    exp: Experiment,
    batch_sizes: Sequence[int],
    workdir: Path,
    progress: ProgressCallback | None = None,
) -> ModelSweep:
    """Sweep one model: build, evaluate and time every variant; compare each with the parent.

    Parameters
    ----------
    model_cfg : ModelConfig
        The model to sweep (loaded once, as the parent).
    context : LoadContext
    dataset : Dataset
        The evaluation split.
    plan : BatchPlan
        The batches every variant is evaluated on (the parent's).
    sweep : SweepConfig
    exp : Experiment
        For the ``stats:``/``speed:`` settings and the seed.
    batch_sizes : sequence of int
        The speed curve.
    workdir : Path
        Where ONNX exports go.
    progress : callable, optional

    Returns
    -------
    ModelSweep

    Raises
    ------
    H2HError
        The parent itself cannot be loaded or evaluated (a user error, not a cell's result).
    """
    seed_everything(exp.seed)
    began = time.perf_counter()
    parent = create_adapter(model_cfg, context)
    load_s = time.perf_counter() - began
    text = dataset.modality in ("text", "text_pair")
    grid = expand_grid(
        sweep,
        model=parent.name,
        modality=dataset.modality,
        kind=model_cfg.kind,
        parent_max_length=getattr(parent, "max_length", None) if text else None,
    )
    began = time.perf_counter()
    parent_eval = evaluate_model(parent, dataset, plan, progress=progress)
    parent_eval_s = time.perf_counter() - began
    options = BuildOptions(
        workdir=workdir,
        check_batches=_check_batches(dataset, plan.batch_size, sweep.onnx_check_batches),
        atol=sweep.onnx_atol,
        rtol=sweep.onnx_rtol,
        opset=sweep.onnx_opset,
        threads=exp.speed.num_threads,
    )
    built = [_build_and_evaluate(parent, grid, spec, dataset, plan, options, progress) for spec in grid.variants]
    ok = [b for b in built if b.adapter is not None and b.evaluation is not None]
    y = dataset.labels[plan.order]
    qualities = quality_vs_parent(
        y,
        (parent.name, *_scores(parent_eval)),
        {b.name: _scores(b.evaluation) for b in ok if b.evaluation is not None},
        label_names=dataset.label_names,
        alpha=exp.stats.alpha,
        margin=sweep.max_accuracy_drop,
        confidence=1.0 - exp.stats.alpha,
        groups=plan.in_order(dataset.groups),
    )
    qualities = {
        name: q.model_copy(update={"verdict": variant_verdict(name, parent.name, q)}) for name, q in qualities.items()
    }
    points = _speed_curve(parent, [b.adapter for b in ok if b.adapter is not None], dataset, exp, batch_sizes, progress)
    cells = _cells(
        parent, grid, built, points, qualities, parent_eval_s, accuracy=float((parent_eval.pred == y).mean())
    )
    for warning in parent.warnings:
        log.warning("%s", warning)
    record = ModelSweep(
        model=parent.name,
        kind=model_cfg.kind,
        source=model_cfg.source,
        device=str(parent.device),
        load_time_s=load_s,
        batch_sizes=list(batch_sizes),
        cells=cells,
        notes=list(grid.notes),
    )
    del parent, built, ok
    release_memory(context.device)
    return record


def _selected_models(exp: Experiment, sweep: SweepConfig) -> list[ModelConfig]:
    names = [m.name for m in exp.models]
    for name in sweep.models or []:
        if name not in names:
            raise ConfigError(
                f"sweep.models names '{name}', which is not a model of the experiment"
                f"{did_you_mean(name, names)} (models: {listing(names)})"
            )
    return [exp.model(n) for n in sweep.models] if sweep.models else list(exp.models)


def run_sweep(
    experiment: Experiment | str | Path | Mapping[str, Any],
    *,
    sweep: SweepConfig | Mapping[str, Any] | None = None,
    out_dir: str | Path | None = None,
    overrides: Sequence[str] = (),
    base_dir: str | Path | None = None,
    progress: ProgressCallback | None = None,
    resume: bool = False,
    overwrite: bool = False,
    offline: bool = False,
    deterministic: bool = False,
) -> SweepRun:
    """Sweep the experiment's models over their optimisation variants.

    Parameters
    ----------
    experiment : Experiment, path or mapping
        The experiment (its ``data:``, ``models:``, ``eval:``, ``stats:``, ``speed:`` and ``sweep:``).
    sweep : SweepConfig or mapping, optional
        Replaces the experiment's ``sweep:`` section; a mapping replaces only the keys it
        gives (``{"precision": ["fp32", "bf16"], "batch_size": [1, 32]}``, as ``h2h sweep`` options).
    out_dir : str or Path, optional
        Folder for ``sweep.json``, the report and the ONNX exports; nothing is kept when ``None``.
    overrides : sequence of str
        ``key.path=value`` overrides, as ``--set``.
    base_dir : str or Path, optional
        Folder of relative paths for a dict or record experiment (default: the current directory).
    progress : callable, optional
        ``progress(task, done, total)``.
    resume, overwrite, offline, deterministic : bool
        As :func:`headtohead.run` takes them. Each swept model is kept under
        ``<out>/.h2h-resume/`` as it finishes; ``resume`` re-uses those swept with the same
        settings, data and version (refused when the data changed since).

    Returns
    -------
    SweepRun

    Raises
    ------
    H2HError
        No sweep section, unknown model names, unreadable data, or a parent model that cannot load.

    Examples
    --------
    >>> outcome = run_sweep("experiment.yaml", out_dir="runs/sweep")   # doctest: +SKIP
    >>> print(outcome.result.recommendation.sentence)                   # doctest: +SKIP
    """
    exp, base_dir = resolve_experiment(experiment, overrides, base_dir)
    config = sweep_with_options(exp.sweep, sweep) if isinstance(sweep, Mapping) else sweep or exp.sweep
    if config is None:
        raise ConfigError(
            "the experiment has no sweep: section; add one (e.g. sweep: {precision: [fp32, bf16, int8]}) "
            "or pass --precision/--batch-size/--backend to h2h sweep"
        )
    chosen = _selected_models(exp, config)
    out = Path(out_dir) if out_dir is not None else None
    with contextlib.ExitStack() as stack:
        if out is not None:  # writable, not another run's now, not another experiment's: before minutes of work
            stack.enter_context(claim_output(out, exp.name, command="h2h sweep", overwrite=overwrite))
        if offline:
            stack.enter_context(offline_mode())
        if deterministic:
            stack.enter_context(deterministic_algorithms())
        setup = prepare_run(exp, base_dir, deterministic=deterministic)  # device, seeds, data, the batch plan
        batch_sizes = list(config.batch_size or [exp.eval.batch_size])
        workdir = (
            out / "onnx"
            if out is not None
            else Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="h2h-sweep-")))
        )
        store = ResumeStore(out / RESUME_DIR, fingerprint=setup.fingerprint) if out is not None else None
        if resume and store is not None:
            store.check_data()
        facts = {**setup.key_facts(), "sweep": config.model_dump(mode="json", exclude={"models"})}
        facts.update(speed=exp.speed.model_dump(mode="json"), stats=exp.stats.model_dump(mode="json"))
        models = []
        for m in chosen:
            key = model_key(m, facts, Path(base_dir))
            done = store.load_record(key, m.name, ModelSweep) if resume and store is not None else None
            if done is None:
                done = sweep_model(
                    m,
                    setup.context,
                    setup.dataset,
                    setup.plan,
                    config,
                    exp=exp,
                    batch_sizes=batch_sizes,
                    workdir=workdir,
                    progress=progress,
                )
                if store is not None:
                    store.save_record(key, m.name, done)
            else:
                log.info("%s: its sweep finished in an earlier run into %s; re-used (--resume)", m.name, out)
            models.append(done)
        gc.collect()
        recommendation = recommend(
            models,
            max_latency_ms=config.max_latency_ms,
            max_memory_mb=config.max_memory_mb,
            margin=config.max_accuracy_drop,
        )
        recommendation = recommendation.model_copy(update={"sentence": recommendation_sentence(recommendation, models)})
        result = SweepResult(
            headtohead_version=__version__,
            name=exp.name,
            created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            experiment=exp.model_dump(mode="json"),
            settings=config.model_dump(mode="json"),
            speed_settings=sweep_speed_config(exp.speed).model_dump(mode="json"),
            environment=capture_environment(base_dir),
            dataset=dataset_record(setup.splits, setup.fingerprint),
            eval_batch_size=setup.plan.batch_size,
            seed=exp.seed,
            models=models,
            recommendation=recommendation,
            warnings=[note for m in models for note in m.notes],
        )
        files: list[Path] = []
        if out is not None:
            save_sweep(result, out / SWEEP_FILE)
            files = [out / SWEEP_FILE, *write_sweep_report(result, out)]
        return SweepRun(result=result, out_dir=out, files=files)
