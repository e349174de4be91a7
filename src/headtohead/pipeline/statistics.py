"""A run's statistics: the paired tests, the slices and the disagreements, from its predictions and data.

:func:`run_statistics` hands :func:`headtohead.stats.analyse` what it needs to know about the
examples (sizes, extra columns, ids: :class:`~headtohead.stats.where.ExampleFacts`), writes
every disagreement to ``disagreements.csv`` and every example all models got wrong with one
answer to ``label_suspects.csv`` beside the results, keeps the first of each in the record with
their inputs attached (text, or a thumbnail of the image, so a report shows them without the
data), and stores the verdict sentences beside the numbers.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from headtohead.config.models import ModelConfig
from headtohead.data.base import Dataset
from headtohead.data.display import input_texts, thumbnail_uri
from headtohead.data.sizes import input_sizes
from headtohead.errors import ResultsError
from headtohead.pipeline.setup import RunSetup
from headtohead.report.rows.label_suspects import write_label_suspects_csv
from headtohead.report.rows.where import write_disagreements_csv
from headtohead.report.words.prompts import with_prompt_sentences
from headtohead.report.words.quality import with_quality_sentences
from headtohead.report.words.repeats import twins_note, with_repeat_sentences
from headtohead.report.words.warnings import no_prediction_words
from headtohead.results.comparison import StatsSummary
from headtohead.results.disagreements import Disagreement, Disagreements
from headtohead.results.files import DISAGREEMENTS_FILE, LABEL_SUSPECTS_FILE
from headtohead.results.label_suspects import LabelSuspects
from headtohead.results.passes import pass_label
from headtohead.results.predictions import Predictions
from headtohead.results.prompts import PromptSummary
from headtohead.results.records import ModelRecord
from headtohead.results.repeats import ChangedExample, RepeatSummary
from headtohead.stats.label_suspects import SUSPECTS_KEPT
from headtohead.stats.where import DISAGREEMENTS_KEPT, ExampleFacts

__all__ = ["run_statistics", "example_facts", "with_inputs", "with_pass_words", "suspects_with_inputs"]


def example_facts(dataset: Dataset, slice_columns: Sequence[str] | None = None) -> ExampleFacts:
    """The sizes (words, pixels), slice columns and ids of ``dataset``'s examples, for slices and disagreements.

    ``slice_columns`` (default: every column kept with the data) leaves out a column kept only
    as ``data.group_column``.
    """
    measured = input_sizes(dataset)
    sizes, unit = measured if measured is not None else (None, None)
    kept = list(dataset.columns) if slice_columns is None else list(slice_columns)
    return ExampleFacts(sizes=sizes, size_unit=unit, columns={c: dataset.columns[c] for c in kept}, ids=dataset.ids)


def run_statistics(
    setup: RunSetup, predictions: Predictions, out: Path | None = None, records: Sequence[ModelRecord] = ()
) -> StatsSummary | None:
    """Every statistic of a run, with its sentences; ``disagreements.csv`` written into ``out`` when given.

    Parameters
    ----------
    setup : RunSetup
        The run's experiment (``stats:`` settings, seed) and data.
    predictions : Predictions
        Every finished model's predictions (a model measured several ways: its passes along their axis).
    out : Path, optional
        The run's output folder.
    records : sequence of ModelRecord
        The models' records: what each pass of a model measured several ways varies, in words.

    Returns
    -------
    StatsSummary or None
        ``None`` when no model is left to judge. With ``slices``, and ``disagreements`` cut to the first
        :data:`~headtohead.stats.where.DISAGREEMENTS_KEPT` of each direction with their inputs.
    """
    from headtohead.stats import analyse

    if not predictions.models:  # every model left out (answers missing)
        return None
    _check_some_prediction(predictions, records)
    cfg, dataset, data = setup.experiment.stats, setup.dataset, setup.experiment.data
    # the columns named in data.slice_columns; data read from logs keeps the ones its logs slice by (lm-eval's task)
    slices = data.slice_columns or [c for c in dataset.columns if c != dataset.group_column]
    facts = example_facts(dataset, slices)
    summary = analyse(
        predictions,
        alpha=cfg.alpha,
        n_resamples=cfg.n_resamples,
        ci_method=cfg.ci_method,
        ece_bins=cfg.ece_bins,
        seed=setup.experiment.seed,
        examples=facts,
        disagreements_kept=None,
        metrics=cfg.metrics,
        suspects_kept=None,
    )
    texts = input_texts(dataset)
    if out is not None and summary.disagreements:
        write_disagreements_csv(summary.disagreements, out / DISAGREEMENTS_FILE, texts)
    kept = [with_inputs(d.top(DISAGREEMENTS_KEPT), dataset, texts) for d in summary.disagreements]
    suspects = summary.label_suspects
    if out is not None and suspects is not None:
        write_label_suspects_csv(suspects, out / LABEL_SUSPECTS_FILE, texts)
    prompts = with_pass_words(summary.prompts, records)
    twins = same_model_pairs(setup.experiment.models, setup.context.objects)
    repeats = with_repeat_sentences(with_same_settings(with_example_inputs(summary.repeats, dataset, texts), twins))
    summary = summary.model_copy(
        update={
            "disagreements": kept,
            "prompts": with_prompt_sentences(prompts),
            "label_suspects": None if suspects is None else suspects_with_inputs(suspects, dataset, texts),
            "repeats": repeats,
        }
    )
    return with_twin_notes(with_quality_sentences(summary), twins)


def same_model_pairs(models: Sequence[ModelConfig], objects: Mapping[str, Any] | None = None) -> set[frozenset[str]]:
    """The pairs of entries that are one model listed twice: every setting but the name the same and, for models
    handed over as objects (``objects``, :func:`headtohead.compare`), the object the same one.

    Examples
    --------
    >>> from headtohead.config.models import model_settings
    >>> m = [model_settings(name=n, kind="python", source=s) for n, s in (("a", "p:f"), ("b", "p:f"), ("c", "p:g"))]
    >>> same_model_pairs(m) == {frozenset({"a", "b"})}
    True
    """
    held = dict(objects or {})
    settings = {m.name: m.model_dump(mode="json", exclude={"name"}) for m in models}
    found = set()
    for a, b in itertools.combinations(settings, 2):
        if settings[a] == settings[b] and (
            (a not in held and b not in held) or (a in held and b in held and held[a] is held[b])
        ):
            found.add(frozenset({a, b}))
    return found


def with_same_settings(summary: RepeatSummary | None, twins: set[frozenset[str]]) -> RepeatSummary | None:
    """``summary`` with each comparison over runs of one model listed twice marked (``RepeatPool.same_settings``):
    the report words their gap as that model's own noise, never as two models'."""
    if summary is None:
        return None
    pools = [p.model_copy(update={"same_settings": frozenset({p.model_a, p.model_b}) in twins}) for p in summary.pools]
    return summary.model_copy(update={"pools": pools})


def with_twin_notes(summary: StatsSummary, twins: set[frozenset[str]]) -> StatsSummary:
    """``summary`` with the verdict of each ordinary pair of one model listed twice followed by what it shows."""
    if not twins:
        return summary
    comparisons = [
        c.model_copy(update={"verdict": f"{c.verdict} {twins_note(c.model_a, c.model_b)}"})
        if frozenset({c.model_a, c.model_b}) in twins
        else c
        for c in summary.comparisons
    ]
    return summary.model_copy(update={"comparisons": comparisons})


def suspects_with_inputs(
    found: LabelSuspects, dataset: Dataset, texts: Sequence[str | None] | None = None
) -> LabelSuspects:
    """The first :data:`~headtohead.stats.label_suspects.SUSPECTS_KEPT` of ``found``, each with its input attached."""
    texts = input_texts(dataset) if texts is None else texts
    rows = [
        r.model_copy(update={"input": texts[r.index], "thumbnail": thumbnail_uri(dataset, r.index)})
        for r in found.rows[:SUSPECTS_KEPT]
    ]
    return found.model_copy(update={"rows": rows})


def _check_some_prediction(predictions: Predictions, records: Sequence[ModelRecord]) -> None:
    """An LLM with no prediction for any example stops the statistics with why, from its answers.

    (Refused requests with the server's reason, unreadable answers, lost ones: not "NaN scores",
    which :func:`~headtohead.stats.analyse` can only guess from the predictions.)

    Raises
    ------
    ResultsError
        Such a model, in one line.
    """
    for record in records:
        model = predictions.models.get(record.name)
        if model is None or np.asarray(model.valid).any():
            continue
        words = no_prediction_words(record)
        if words is not None:
            raise ResultsError(words)


def with_pass_words(prompts: PromptSummary | None, records: Sequence[ModelRecord]) -> PromptSummary | None:
    """``prompts`` with each prompt described as its pass's record says (``PassRecord.varies``)."""
    if prompts is None:
        return None
    varies = {pass_label(r.name, p.key): p.varies for r in records for p in r.passes}
    families = [
        family.model_copy(
            update={"prompts": [p.model_copy(update={"prompt": varies.get(p.model, p.prompt)}) for p in family.prompts]}
        )
        for family in prompts.families
    ]
    return prompts.model_copy(update={"families": families})


def with_example_inputs(
    repeats: RepeatSummary | None, dataset: Dataset, texts: Sequence[str | None]
) -> RepeatSummary | None:
    """``repeats`` with each changed example's id (where the data has ids) and its input attached."""
    if repeats is None:
        return None
    ids = dataset.ids

    def attach(example: ChangedExample) -> ChangedExample:
        shown = ids[example.index] if ids is not None else None
        return example.model_copy(update={"id": shown, "input": texts[example.index]})

    models = [m.model_copy(update={"most_changed": [attach(e) for e in m.most_changed]}) for m in repeats.models]
    return repeats.model_copy(update={"models": models})


def with_inputs(found: Disagreements, dataset: Dataset, texts: Sequence[str | None] | None = None) -> Disagreements:
    """``found`` with each row's input attached: its text or path, and a thumbnail for an image."""
    texts = input_texts(dataset) if texts is None else texts

    def attach(rows: list[Disagreement]) -> list[Disagreement]:
        return [
            r.model_copy(update={"input": texts[r.index], "thumbnail": thumbnail_uri(dataset, r.index)}) for r in rows
        ]

    return found.model_copy(
        update={"only_a_right": attach(found.only_a_right), "only_b_right": attach(found.only_b_right)}
    )
