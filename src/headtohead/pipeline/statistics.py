"""A run's statistics: the paired tests, the slices and the disagreements, from its predictions and data.

:func:`run_statistics` hands :func:`headtohead.stats.analyse` what it needs to know about the
examples (sizes, extra columns, ids: :class:`~headtohead.stats.where.ExampleFacts`), writes
every disagreement to ``disagreements.csv`` beside the results, keeps the first of each
direction in the record with their inputs attached (text, or a thumbnail of the image, so a
report shows them without the data), and stores the verdict sentences beside the numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from headtohead.config.models import ModelConfig
from headtohead.data.base import Dataset
from headtohead.data.display import input_texts, thumbnail_uri
from headtohead.data.sizes import input_sizes
from headtohead.pipeline.setup import RunSetup
from headtohead.report.rows.where import write_disagreements_csv
from headtohead.report.words.prompts import prompt_description, with_prompt_sentences
from headtohead.report.words.quality import with_quality_sentences
from headtohead.results.comparison import StatsSummary
from headtohead.results.disagreements import Disagreement, Disagreements
from headtohead.results.files import DISAGREEMENTS_FILE
from headtohead.results.predictions import Predictions
from headtohead.stats.prompt_pool import prompt_pools, with_pooled_family
from headtohead.stats.where import DISAGREEMENTS_KEPT, ExampleFacts

__all__ = ["run_statistics", "example_facts", "with_inputs"]


def example_facts(dataset: Dataset, slice_columns: Sequence[str] | None = None) -> ExampleFacts:
    """The sizes (words, pixels), slice columns and ids of ``dataset``'s examples, for slices and disagreements.

    ``slice_columns`` (default: every column kept with the data) leaves out a column kept only
    as ``data.group_column``.
    """
    measured = input_sizes(dataset)
    sizes, unit = measured if measured is not None else (None, None)
    kept = list(dataset.columns) if slice_columns is None else list(slice_columns)
    return ExampleFacts(sizes=sizes, size_unit=unit, columns={c: dataset.columns[c] for c in kept}, ids=dataset.ids)


def run_statistics(setup: RunSetup, predictions: Predictions, out: Path | None = None) -> StatsSummary | None:
    """Every statistic of a run, with its sentences; ``disagreements.csv`` written into ``out`` when given.

    Parameters
    ----------
    setup : RunSetup
        The run's experiment (``stats:`` settings, seed) and data.
    predictions : Predictions
        Every finished model's predictions.
    out : Path, optional
        The run's output folder.

    Returns
    -------
    StatsSummary or None
        ``None`` when no model is left to judge (a prompted model missing a prompt's answers, alone). With ``slices``, and ``disagreements`` cut to the first :data:`~headtohead.stats.where.DISAGREEMENTS_KEPT`
        of each direction with their inputs.
    """
    from headtohead.stats import analyse

    cfg, dataset, data = setup.experiment.stats, setup.dataset, setup.experiment.data
    # the columns named in data.slice_columns; data read from logs keeps the ones its logs slice by (lm-eval's task)
    slices = data.slice_columns or [c for c in dataset.columns if c != dataset.group_column]
    facts = example_facts(dataset, slices)
    families = prompt_families(setup.experiment.models)
    predictions, families = _without_incomplete_families(predictions, families)
    if not predictions.models:  # the one model was prompted, and one of its prompts went unanswered
        return None
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
        prompted={name: model for model, passes in families.items() for name, _ in passes},
    )
    texts = input_texts(dataset)
    if out is not None and summary.disagreements:
        write_disagreements_csv(summary.disagreements, out / DISAGREEMENTS_FILE, texts)
    kept = [with_inputs(d.top(DISAGREEMENTS_KEPT), dataset, texts) for d in summary.disagreements]
    # a pass is not a model: its model is compared pooled over its prompts, in the one Holm family and ranking
    summary, prompts = with_pooled_family(summary, prompt_pools(predictions, families, alpha=cfg.alpha))
    summary = summary.model_copy(update={"disagreements": kept, "prompts": with_prompt_sentences(prompts)})
    return with_quality_sentences(summary)


def _without_incomplete_families(
    predictions: Predictions, families: dict[str, list[tuple[str, str]]]
) -> tuple[Predictions, dict[str, list[tuple[str, str]]]]:
    """A prompted model one of whose passes the statistics may not read (answers missing) decides nothing:
    its other passes leave too, or they would stand in for the model as models of their own."""
    present = set(predictions.models)
    broken = {m for m, passes in families.items() if any(name not in present for name, _ in passes)}
    if not broken:
        return predictions, families
    gone = {name for m in broken for name, _ in families[m]}
    kept = [name for name in predictions.models if name not in gone]
    return predictions.restricted(models=kept), {m: p for m, p in families.items() if m not in broken}


def prompt_families(models: Sequence[ModelConfig]) -> dict[str, list[tuple[str, str]]]:
    """Each model asked with several prompts → its passes ``(name, what its prompt varies)``, in order."""
    families: dict[str, list[tuple[str, str]]] = {}
    for model in models:
        variant = getattr(model, "variant", None)
        if variant is not None:
            families.setdefault(variant.of, []).append((model.name, prompt_description(model)))
    return families


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
