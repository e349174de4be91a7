"""Where the models of a run differ: quality per slice, and the examples exactly one model got right.

See ``docs/statistics.md`` §5.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from headtohead.results.disagreements import Disagreement, Disagreements
from headtohead.results.passes import pass_label
from headtohead.results.predictions import Predictions
from headtohead.results.slices import SliceSummary
from headtohead.stats.disagreements import disagreements
from headtohead.stats.picked import slice_metrics
from headtohead.stats.repeat_pool import with_repeat_slices
from headtohead.stats.slices import SliceSpec, class_slices, column_slices, compare_slices, size_slices

__all__ = ["ExampleFacts", "run_slices", "run_disagreements", "SIZE_BINS", "CLASS_SLICE_LIMIT", "DISAGREEMENTS_KEPT"]

#: Quantile bins of input size (quartiles).
SIZE_BINS = 4
#: With more classes than this, the most frequent ones are the class slices (a thousand
#: ImageNet classes would be a thousand tests, each on a few dozen examples).
CLASS_SLICE_LIMIT = 50
#: Rows of each direction of disagreement a run keeps in ``results.json`` (all of them go to the CSV).
DISAGREEMENTS_KEPT = 20


@dataclass(frozen=True)
class ExampleFacts:
    """What is known about every example of the evaluation data besides its label, in dataset order.

    Attributes
    ----------
    sizes : ndarray of shape (n,), optional
        Input size of each example (:func:`headtohead.data.sizes.input_sizes`).
    size_unit : str, optional
        ``words``, ``characters`` or ``pixels``.
    columns : mapping of str to sequence
        Extra columns to slice by (``data.slice_columns``), one value per example.
    ids : sequence of str, optional
        Example ids (``data.id_column``), recorded with the disagreements.

    Groups of related examples travel with the predictions (``Predictions.groups``).
    """

    sizes: np.ndarray | None = None
    size_unit: str | None = None
    columns: Mapping[str, Sequence[object]] = field(default_factory=dict)
    ids: Sequence[str] | None = None


def run_slices(
    predictions: Predictions,
    facts: ExampleFacts | None = None,
    *,
    alpha: float = 0.05,
    size_bins: int = SIZE_BINS,
    metrics: Sequence[str] = (),
) -> SliceSummary:
    """Every model's accuracy per slice and every pair compared on it (Holm over all slices and pairs).

    Every example is in its slices; one a model could not answer (no prediction) counts as
    that model's wrong answer, as in the whole run's statistics. With ``predictions.groups``
    each slice's tests and intervals account for the groups.

    Parameters
    ----------
    predictions : Predictions
    facts : ExampleFacts, optional
        Sizes and extra columns in dataset order; without them only the class slices are made.
    alpha : float
    size_bins : int
    metrics : sequence of str
        Metrics picked from the catalogue (``stats.metrics``): their values on every slice.

    A model measured several ways (its passes, ``ModelPredictions.passes``) has each pass's accuracy
    on every slice (named ``model@key``) and is in no ordinary pair: its passes are no models. A model
    run several times (factor ``repeat``) is compared over every run on every slice
    (``SliceResult.repeat_pairs``, :func:`headtohead.stats.repeat_pool.with_repeat_slices`: the two-level
    test and the slice's noise floors), in the slices' one Holm family; a model asked with several
    prompts is compared pooled over them on the whole data only (:mod:`headtohead.stats.passes`).

    Returns
    -------
    SliceSummary

    Examples
    --------
    >>> y = np.array([0, 1] * 50)
    >>> p = Predictions(np.arange(100), y, ("neg", "pos"))
    >>> p.add("a", y, None); p.add("b", np.where(y == 0, 1, y), None)    # b wrong on every negative
    >>> [(s.label, s.pairs[0].significant) for s in run_slices(p).slices]
    [('neg', True), ('pos', False)]
    """
    unpaired = [pass_label(m, k) for m in predictions.with_passes() for k in predictions[m].passes]
    measured = predictions  # a repeated model's runs along their axis: its pairs over runs per slice
    predictions = predictions.per_pass()  # each pass's accuracy per slice; pairs only of models measured once
    order = np.asarray(predictions.order, dtype=np.int64)
    specs = _class_specs(predictions)
    if facts is not None and facts.sizes is not None:
        sized = size_slices(np.asarray(facts.sizes)[order], facts.size_unit or "", size_bins)
        specs += sized if len(sized) > 1 else []  # inputs of one size: that "slice" is the whole data set
    for name, values in facts.columns.items() if facts is not None else ():
        cells = np.empty(len(values), dtype=object)
        cells[:] = list(values)
        specs += column_slices(name, cells[order].tolist(), n_bins=size_bins)
    summary = compare_slices(
        predictions.y_true,
        {m: predictions[m].pred for m in predictions},
        specs,
        alpha=alpha,
        groups=predictions.groups,
        unpaired=unpaired,
    )
    masks = [spec.mask for spec in specs if np.any(spec.mask)]
    summary = with_repeat_slices(summary, measured, masks)
    if not metrics:
        return summary
    return slice_metrics(summary, masks, predictions, metrics)


def _class_specs(predictions: Predictions) -> list[SliceSpec]:
    specs = class_slices(predictions.y_true, predictions.label_names)
    if len(specs) <= CLASS_SLICE_LIMIT:
        return specs
    return sorted(specs, key=lambda spec: -int(spec.mask.sum()))[:CLASS_SLICE_LIMIT]


def run_disagreements(
    predictions: Predictions,
    ids: Sequence[str] | None = None,
    *,
    kept: int | None = DISAGREEMENTS_KEPT,
) -> list[Disagreements]:
    """Every pair's examples that exactly one of the two models got right, most striking first.

    Parameters
    ----------
    predictions : Predictions
    ids : sequence of str, optional
        Example ids in dataset order.
    kept : int, optional
        Rows kept per direction (``None``: all); the counts stay complete. A model measured several
        ways (its passes) is in no pair: it is compared pooled over its passes (:mod:`headtohead.stats.passes`).

    Returns
    -------
    list of Disagreements
        One per pair, in the order of the comparisons; ``index`` is the example's position in
        the dataset (not in the plan).
    """
    order = np.asarray(predictions.order, dtype=np.int64)
    rows = np.argsort(order, kind="stable")  # dataset order, so ties fall back on the dataset position
    positions = order[rows]
    y = np.asarray(predictions.y_true)[rows]
    row_ids = [str(ids[i]) for i in positions] if ids is not None else None
    out = []
    for a, b in itertools.combinations([m for m in predictions if not predictions[m].passes], 2):
        ma, mb = predictions[a], predictions[b]  # a failure (no prediction) is a wrong answer here too
        found = disagreements(
            y,
            ma.pred[rows],
            mb.pred[rows],
            None if ma.proba is None else ma.proba[rows],
            None if mb.proba is None else mb.proba[rows],
            label_names=predictions.all_labels,
            model_a=a,
            model_b=b,
            ids=row_ids,
            limit=kept,
        )
        out.append(_at_dataset_positions(found, positions))
    return out


def _at_dataset_positions(found: Disagreements, positions: np.ndarray) -> Disagreements:
    """Rows indexed by dataset position (the same unless only part of the data was evaluated)."""
    if np.array_equal(positions, np.arange(len(positions))):
        return found

    def moved(rows: list[Disagreement]) -> list[Disagreement]:
        return [r.model_copy(update={"index": int(positions[r.index])}) for r in rows]

    return found.model_copy(
        update={"only_a_right": moved(found.only_a_right), "only_b_right": moved(found.only_b_right)}
    )
