"""One model's pass: load it, run it over (a shard of) the run's batch plan, make its record.

Every executor runs the same two steps (in this process, in a spawned process, as a Ray task):
:func:`run_model_pass` loads the model and evaluates it — nothing more, so a worker returns
plain predictions — and :func:`model_record` makes the model's one record from its evaluation,
merged over its shards: quality is computed once per model, wherever its shards ran.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from headtohead.adapters import LoadContext, ModelAdapter, adapter_class, create_adapter
from headtohead.adapters.prompting import AnswerLog
from headtohead.config.schema import ModelConfig
from headtohead.engines.answers import answers_record
from headtohead.engines.evaluate import Evaluation, ProgressCallback, evaluate_model
from headtohead.engines.fresh_process import await_imports
from headtohead.engines.seeding import seed_everything
from headtohead.errors import ModelError
from headtohead.pipeline.setup import RunSetup
from headtohead.results import ModelPredictions, ModelRecord
from headtohead.runtime.determinism import recording_refusals, refusal_warning
from headtohead.runtime.faults import is_out_of_memory
from headtohead.stats.quality import compute_quality

__all__ = [
    "ModelOutcome",
    "ModelPass",
    "LoadedModelFacts",
    "load_model",
    "run_model_pass",
    "model_record",
    "check_before_run",
]

log = logging.getLogger("headtohead")


class LoadedModelFacts(Protocol):
    """What a record needs from a loaded model: an adapter here, or its facts sent back by a worker."""

    @property
    def device(self) -> str: ...
    @property
    def warnings(self) -> Any: ...
    def num_parameters(self) -> int | None: ...
    def parameter_bytes(self) -> int | None: ...
    def answer_record(self) -> AnswerLog | None: ...


@dataclass
class ModelPass:
    """A model loaded and run over (a shard of) the plan, before its record exists.

    ``evaluation`` is ``None`` when the run measures speed only (``h2h bench``).
    """

    adapter: ModelAdapter
    load_time_s: float
    evaluation: Evaluation | None


@dataclass
class ModelOutcome:
    """One model's finished pass: its record and predictions (``None`` without a quality pass).

    ``adapter`` is the loaded model when it lives in this process (kept for the speed pass);
    ``speed`` the speed a worker measured itself (``execution.speed: workers``, a
    ``SpeedSummary`` as a dict), ``concurrent_speed`` whether other workers shared its device then.
    """

    record: ModelRecord
    predictions: ModelPredictions | None
    adapter: ModelAdapter | None = None
    speed: dict[str, Any] | None = None
    concurrent_speed: bool = False
    #: The pass of a model measured several ways this outcome is (from 0); ``None``: the model, measured once.
    pass_index: int | None = None
    #: Always true: a model whose pass failed comes back as a ``ModelFailure`` instead.
    ok = True

    @property
    def name(self) -> str:
        return self.record.name


def load_model(
    model_cfg: ModelConfig, context: LoadContext, pass_index: int | None = None
) -> tuple[ModelAdapter, float]:
    """Load one model (pass ``pass_index`` of a model measured several ways) with the run's random state reset
    first; return it and the seconds it took.

    A repeat (``repeats:``) is seeded with its own seed (:meth:`~headtohead.config.models.base.ModelConfig.pass_seed`),
    which its family also reads (``LoadContext.run_seed``: an LLM asked over HTTP is sent it); every other
    model and pass starts from the run's seed.
    """
    seed = model_cfg.pass_seed(context.seed, pass_index)
    seed_everything(seed)  # the same random state for every model and pass (fresh heads, dropout …); a repeat's own
    start = time.perf_counter()
    if pass_index is not None:
        repeat = model_cfg.pass_specs()[pass_index].factor == "repeat"
        context = replace(context, pass_index=pass_index, run_seed=seed if repeat else None)
    adapter = create_adapter(model_cfg, context)
    return adapter, time.perf_counter() - start


def run_model_pass(
    setup: RunSetup,
    model_cfg: ModelConfig,
    *,
    progress: ProgressCallback | None = None,
    pass_index: int | None = None,
) -> ModelPass:
    """Load one model and run its quality pass over ``setup.plan`` (skipped when ``setup.quality`` is off).

    Parameters
    ----------
    setup : RunSetup
        The run's data, plan and device (:func:`~headtohead.pipeline.setup.prepare_run`); a
        worker's setup holds its shard of the plan.
    model_cfg : ModelConfig
        The model.
    progress : callable, optional
        ``progress(model_name, batches_done, batches_total)``.
    pass_index : int, optional
        The pass of a model measured several ways (its family makes it: a prompt, a file).

    Returns
    -------
    ModelPass

    Raises
    ------
    ModelError
        The model cannot be loaded, does not fit the data, or ran out of memory.
    """
    try:
        adapter, load_time = load_model(model_cfg, setup.context, pass_index)
        evaluation = None
        if setup.quality:
            await_imports()  # the fresh processes' template imported beside setup and loading, never beside a pass
            with recording_refusals(setup.deterministic) as refused:
                evaluation = evaluate_model(adapter, setup.dataset, setup.plan, progress=progress)
            for op in refused:
                adapter.warn(refusal_warning(model_cfg.name, op))
    except Exception as exc:
        if is_out_of_memory(exc):
            raise _out_of_memory(model_cfg, setup, exc) from exc
        raise
    return ModelPass(adapter, load_time, evaluation)


def _out_of_memory(model_cfg: ModelConfig, setup: RunSetup, exc: BaseException) -> ModelError:
    size = setup.plan.batch_size
    smaller = f" (e.g. --set eval.batch_size={max(1, size // 2)})" if size > 1 else ""
    return ModelError(
        f"model '{model_cfg.name}' ran out of memory on {setup.context.device} at eval.batch_size="
        f"{size} ({type(exc).__name__}); lower the batch size{smaller} and run again with --resume"
    )


def check_before_run(models: Sequence[ModelConfig]) -> list[str]:
    """Each family's own checks of what its models need from outside (a key, a server), before any model runs.

    Raises the first model's error; its warnings (a model name the server does not list, or that it could
    not be checked) are logged now and returned, so the run says each once (the model's record keeps them).
    """
    said = []
    for model_cfg in models:
        for warning in adapter_class(model_cfg.kind).check_before_run(model_cfg):
            log.warning("%s", warning)
            said.append(warning)
    return said


def computes_here(model_cfg: ModelConfig) -> bool:
    """The model runs here (the speed pass times it), read from its family's class as every executor reads it.

    A family that looks its outputs up by example (stored predictions, an endpoint) does not; a causal
    LM that generates does, though its loaded instance reads the labels back by example.
    """
    return adapter_class(model_cfg.kind).feeds == "examples"


def model_record(
    model_cfg: ModelConfig,
    model: LoadedModelFacts,
    load_time: float,
    setup: RunSetup,
    evaluation: Evaluation | None,
    **extra: Any,
) -> ModelRecord:
    """The record of one model: what it is, how it was run and (with an evaluation) its quality.

    Parameters
    ----------
    model_cfg : ModelConfig
    model : adapter or LoadedModelFacts
        Parameter counts, device and warnings of the loaded model.
    load_time : float
        Seconds its load took.
    setup : RunSetup
        The run's whole plan and data (not a shard's).
    evaluation : Evaluation or None
        Over the whole plan (merged from shards); ``None`` for a speed-only run.
    **extra
        More :class:`ModelRecord` fields (``execution_mode``, ``workers`` …).
    """
    quality = None
    plan, dataset = setup.plan, setup.dataset
    if evaluation is not None:
        y_true = dataset.labels[plan.order]
        quality = compute_quality(
            y_true,
            evaluation.pred,
            evaluation.proba,
            dataset.label_names,
            evaluation.alignment.outside,
            example_index=plan.order,
        )
        if dataset.ids is not None and quality.failed_examples:  # reports name the examples by their own ids
            quality = quality.model_copy(update={"failed_ids": [str(dataset.ids[i]) for i in quality.failed_examples]})
    return ModelRecord(
        name=model_cfg.name,
        kind=model_cfg.kind,
        source=model_cfg.source,
        outputs="computed" if computes_here(model_cfg) else "stored",
        num_parameters=model.num_parameters(),
        parameter_bytes=model.parameter_bytes(),
        label_alignment=evaluation.alignment.how if evaluation else None,
        label_columns=[int(c) for c in evaluation.alignment.columns] if evaluation else None,
        labels_outside_data=list(evaluation.alignment.outside) if evaluation else [],
        batch_backoff=list(evaluation.backoff) if evaluation else [],
        index_order_hash=plan.hash(),
        batch_size=plan.batch_size,
        device=model.device,
        n_batches=len(plan),
        load_time_s=load_time,
        eval_time_s=evaluation.seconds if evaluation else None,
        quality=quality,
        warnings=list(model.warnings),
        **({"answers": answers_record(model.answer_record())} | extra),  # a worker's shards bring theirs merged
    )


def outcome_of(model_cfg: ModelConfig, done: ModelPass, setup: RunSetup) -> ModelOutcome:
    """The finished outcome of a pass made in this process over the whole plan (the adapter kept)."""
    record = model_record(model_cfg, done.adapter, done.load_time_s, setup, done.evaluation)
    predictions = ModelPredictions(done.evaluation.pred, done.evaluation.proba) if done.evaluation else None
    return ModelOutcome(record, predictions, done.adapter)
