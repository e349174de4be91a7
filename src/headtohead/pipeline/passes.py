"""A model measured several ways, as a run records it: each pass's record folded into its model's one record.

Every pass of a model (one per prompt, one per repeat …) is a unit of work run as a model is
(:class:`~headtohead.pipeline.executors.jobs.Unit`); its outcome is a model's record, which
:func:`pass_record` turns into a :class:`~headtohead.results.records.PassRecord` — its key, factor,
what it varies in words, its prompt template as rendered — and :func:`with_pass` adds to its model's
:class:`~headtohead.results.records.ModelRecord` (``passes``), whose own figures are then the
passes' sums (time) and their answers added up (an LLM's). See ``docs/architecture.md``, "Passes".
"""

from __future__ import annotations

from collections.abc import Sequence

from headtohead.adapters.prompt_variants import pass_prompt
from headtohead.adapters.prompting import Prompter
from headtohead.config.models.prompting import PromptSettings
from headtohead.config.schema import ModelConfig
from headtohead.engines.answers import merge_answers_records
from headtohead.report.words.prompts import prompt_description
from headtohead.results.records import ModelRecord, PassRecord

__all__ = ["pass_record", "with_pass"]


def pass_record(
    model_cfg: ModelConfig, index: int, record: ModelRecord, label_names: Sequence[str], seed: int
) -> PassRecord:
    """Pass ``index`` of ``model_cfg`` (from 0), from the record its unit of work made.

    Parameters
    ----------
    model_cfg : ModelConfig
        The model measured several ways.
    index : int
        The pass.
    record : ModelRecord
        What the pass's unit of work recorded (a model's record over the whole plan).
    label_names : sequence of str
        The data's labels (a prompt shows them in its own order and separator).
    seed : int
        The run's seed (a repeat's own is derived from it).
    """
    spec = model_cfg.pass_specs()[index]
    template = source = None
    if spec.factor == "repeat" and model_cfg.pass_source(index) is None:  # a run of its own: its seed says which
        varies = f"run {index + 1} of {spec.count} (seed {model_cfg.pass_seed(seed, index)})"
    elif isinstance(model_cfg, PromptSettings):
        settings, variant = pass_prompt(model_cfg, index)
        template = Prompter(settings, label_names, variant).template_text()
        varies = prompt_description(variant, few_shot=settings.few_shot)
    elif (source := model_cfg.pass_source(index)) is not None:  # stored answers, a file per pass
        varies = prompt_description(None, source=source)
    else:  # a family with passes but no words of its own
        varies = spec.key
    return PassRecord(
        key=spec.key,
        factor=spec.factor,
        varies=varies,
        template=template,
        source=source,
        load_time_s=record.load_time_s,
        eval_time_s=record.eval_time_s,
        quality=record.quality,
        warnings=record.warnings,
        batch_backoff=record.batch_backoff,
        answers=record.answers,
    )


def with_pass(models: Sequence[ModelRecord], record: ModelRecord, one: PassRecord) -> list[ModelRecord]:
    """``models`` with pass ``one`` (whose unit of work recorded ``record``) added to its model's record.

    The model's record is made from its first pass's (what the model is, how it was run); its quality
    is each pass's own (``None`` here), its load and eval times the passes' sums, its answers record their
    answers, tokens and (asked over HTTP) requests added up.
    """
    held = next((m for m in models if m.name == record.name), None)
    base = held if held is not None else record
    passes = [*(held.passes if held is not None else []), one]
    times = [p.eval_time_s for p in passes]
    answers = merge_answers_records([p.answers for p in passes])
    outside = list(dict.fromkeys([*base.labels_outside_data, *record.labels_outside_data]))
    model = base.model_copy(
        update={
            "quality": None,
            "warnings": [],
            "batch_backoff": [],
            "load_time_s": sum(p.load_time_s for p in passes),
            "eval_time_s": None if any(t is None for t in times) else sum(t for t in times if t is not None),
            "answers": answers.model_copy(update={"answers": []}) if answers is not None else None,
            "labels_outside_data": outside,
            "workers": [*(held.workers if held is not None else []), *record.workers],
            "passes": passes,
        }
    )
    if held is None:
        return [*models, model]
    return [model if m.name == record.name else m for m in models]
