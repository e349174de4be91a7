"""Where the models differ, for every report format: the slices table and the disagreeing examples.

HTML and Markdown both read these rows, so they never disagree; :func:`write_disagreements_csv`
writes every disagreement of a run (``disagreements.csv`` beside ``results.json``), where the
report shows the first :data:`SHOWN` of each direction.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from headtohead.metrics import CATALOGUE
from headtohead.report.document import Cell, Column, Row, text_cell
from headtohead.report.words.numbers import format_level, format_range, format_share
from headtohead.report.words.repeats import SLICE_REPEAT_RULE
from headtohead.report.words.slices import SEQUENTIAL_NOMINAL
from headtohead.results.disagreements import Disagreement, Disagreements
from headtohead.results.records import RunResult
from headtohead.results.slices import SliceResult
from headtohead.runtime.files import write_text_atomic

__all__ = [
    "SHOWN",
    "slice_name",
    "slice_table",
    "slices_note",
    "DisagreementRow",
    "DisagreementBlock",
    "disagreement_blocks",
    "write_disagreements_csv",
    "CSV_COLUMNS",
]

#: Disagreeing examples shown per direction in a report (all of them are in the CSV).
SHOWN = 20
#: The columns of ``disagreements.csv``.
CSV_COLUMNS = (
    "model_a",
    "model_b",
    "right",
    "rank",
    "index",
    "id",
    "input",
    "true_label",
    "prediction_a",
    "p_prediction_a",
    "p_true_a",
    "prediction_b",
    "p_prediction_b",
    "p_true_b",
    "confidence_gap",
)


def slice_name(result: SliceResult) -> str:
    """``class: negative``, ``length: 12–19 words``, ``source: web``."""
    if result.kind == "class":
        return f"class: {result.label}"
    bounds = result.lower is not None and result.upper is not None and result.value is None
    shown = format_range(result.lower or 0.0, result.upper or 0.0) if bounds else result.label
    if result.kind == "size":
        return (
            f"length: {shown} {result.unit}"
            if result.unit in ("words", "characters")
            else f"size: {shown} {result.unit}"
        )
    return f"{result.column}: {shown}"


def slice_table(result: RunResult) -> tuple[list[Column], list[Row]]:
    """One row per slice: its size, every model's accuracy with its interval (and picked metrics), every pair's
    difference and Holm p (✓ where significant); no columns without slices."""
    summary = result.stats.slices if result.stats is not None else None
    if summary is None or not summary.slices:
        return [], []
    picked = result.stats.settings.metrics if result.stats is not None else []
    first = summary.slices[0]
    columns = [Column("slice", "slice", "text", priority=0), Column("examples", "examples", "integer")]
    columns += [Column(f"{e.model} accuracy", f"{e.model} accuracy", "percent") for e in first.accuracies]
    columns += [
        Column(
            f"{e.model} {name}",
            f"{e.model} {CATALOGUE[name].label}",
            "percent" if CATALOGUE[name].scale == "share" else "score",
        )  # fmt: skip
        for e in first.accuracies
        for name in picked
    ]
    for pair in first.pairs:
        key = f"{pair.model_a} − {pair.model_b}"
        columns += [Column(f"{key} (pp)", f"{key} (pp)", "pp"), Column(f"{key} Holm p", f"{key} Holm p", "p")]
    for pool in first.repeat_pairs:
        key = f"{pool.model_a} − {pool.model_b} over runs"
        columns += [Column(f"{key} (pp)", f"{key} (pp)", "pp"), Column(f"{key} Holm p", f"{key} Holm p", "p")]
    rows = []
    for s in summary.slices:
        cells = {"slice": text_cell(slice_name(s)), "examples": Cell(s.n_examples)}
        for entry in s.accuracies:
            est = entry.accuracy
            cells[f"{entry.model} accuracy"] = (
                Cell(est.value, est.low, est.high) if est.has_interval else Cell(est.value)
            )
            for name in picked:  # "—" on a slice of one class
                cells[f"{entry.model} {name}"] = Cell(entry.metrics.get(name))
        for pair in s.pairs:
            key = f"{pair.model_a} − {pair.model_b}"
            cells[f"{key} (pp)"] = Cell(pair.difference, pair.ci_low, pair.ci_high)
            cells[f"{key} Holm p"] = Cell(pair.p_adjusted, mark="✓" if pair.significant else None)
        for pool in s.repeat_pairs:
            key = f"{pool.model_a} − {pool.model_b} over runs"
            cells[f"{key} (pp)"] = Cell(pool.estimate, pool.low, pool.high)
            within = "within the noise floor" if pool.within_floor and pool.p_adjusted <= summary.alpha else None
            cells[f"{key} Holm p"] = Cell(pool.p_adjusted, mark="✓" if pool.significant else None, suffix=within)
        rows.append(Row(cells))
    return columns, rows


def slices_note(result: RunResult) -> str:
    """How to read the slices table (with one model, no pair: no test to speak of)."""
    summary = result.stats.slices if result.stats is not None else None
    if summary is None:
        return ""
    sequential = bool(result.stats.sequential) if result.stats is not None else False
    prefix = SEQUENTIAL_NOMINAL if sequential else ""  # stopped early or not: tests after interim looks
    intervals = f"Accuracy per slice with {format_level(summary.confidence)} Wilson intervals"
    if not summary.n_tests:  # one model: no pair, so no test to adjust or name
        return f"{intervals}; one model, so no pair is compared. Length bins are quantiles of the data."
    over_runs = any(s.repeat_pairs for s in summary.slices)
    runs = (
        f" A pair with a model run several times ('over runs') is compared on the slice {SLICE_REPEAT_RULE}, in "
        f"the same Holm family; these are not named in the verdict."
        if over_runs
        else ""
    )
    return prefix + (
        f"{intervals}; the difference of each "
        f"pair with Tango's score interval, the same statistic as the test; McNemar "
        f"({summary.mcnemar_rule}) with Holm's adjustment over all {summary.n_tests} (slice, pair) tests, "
        f"α = {summary.alpha:g}. ✓: significant after the adjustment — only these are named in the "
        f"verdict.{runs} Length bins are quantiles of the data."
    )


@dataclass(frozen=True)
class DisagreementRow:
    """One example as a report shows it."""

    rank: int
    example: str
    input: str | None
    thumbnail: str | None
    true_label: str
    prediction_a: str
    prediction_b: str
    #: The right model's probability of the true class minus the wrong model's (``None``: no probabilities).
    gap: float | None


@dataclass(frozen=True)
class DisagreementBlock:
    """One direction of one pair: the examples only ``right`` got right."""

    title: str
    right: str
    wrong: str
    model_a: str
    model_b: str
    total: int
    rows: list[DisagreementRow]


def _predicted(label: str, p: float | None) -> str:
    """``positive (97 %)``: a prediction and the probability the model gave it."""
    return label if p is None else f"{label} ({format_share(p, 0)})"


def _row(rank: int, d: Disagreement) -> DisagreementRow:
    example = f"#{d.index}" + (f" · {d.example_id}" if d.example_id is not None else "")
    return DisagreementRow(
        rank=rank,
        example=example,
        input=d.input,
        thumbnail=d.thumbnail,
        true_label=d.true_label,
        prediction_a=_predicted(d.prediction_a, d.p_pred_a),
        prediction_b=_predicted(d.prediction_b, d.p_pred_b),
        gap=d.confidence_gap,
    )


def disagreement_blocks(result: RunResult, limit: int = SHOWN) -> list[DisagreementBlock]:
    """Both directions of every pair, the first ``limit`` examples of each (most striking first)."""
    if result.stats is None:
        return []
    blocks = []
    for d in result.stats.disagreements:
        for right, wrong, rows, total in (
            (d.model_a, d.model_b, d.only_a_right, d.n_only_a_right),
            (d.model_b, d.model_a, d.only_b_right, d.n_only_b_right),
        ):
            count = len(rows) if total is None else total
            order = "largest confidence gap first" if d.sorted_by == "confidence_gap" else "in data order"
            shown = min(limit, len(rows))
            title = f"{right} right, {wrong} wrong: {count:,} example(s)" + (
                f"; the first {shown}, {order}" if count > shown else f", {order}" if count else ""
            )
            blocks.append(
                DisagreementBlock(
                    title=title,
                    right=right,
                    wrong=wrong,
                    model_a=d.model_a,
                    model_b=d.model_b,
                    total=count,
                    rows=[_row(i + 1, r) for i, r in enumerate(rows[:limit])],
                )
            )
    return blocks


def write_disagreements_csv(
    disagreements: Sequence[Disagreements], path: str | Path, inputs: Sequence[str | None] | None = None
) -> Path:
    """Every disagreement of a run as one CSV (:data:`CSV_COLUMNS`), written atomically.

    Parameters
    ----------
    disagreements : sequence of Disagreements
        Complete lists (not cut to the first rows).
    path : str or Path
    inputs : sequence of str or None, optional
        What to show of each example, by dataset position (the text, an image's path);
        otherwise the rows' own ``input``.

    Returns
    -------
    Path
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for d in disagreements:
        for right, rows in ((d.model_a, d.only_a_right), (d.model_b, d.only_b_right)):
            for rank, r in enumerate(rows, start=1):
                shown = inputs[r.index] if inputs is not None else r.input
                writer.writerow(
                    [
                        d.model_a,
                        d.model_b,
                        right,
                        rank,
                        r.index,
                        r.example_id or "",
                        shown or "",
                        r.true_label,
                        r.prediction_a,
                        _raw(r.p_pred_a),
                        _raw(r.p_true_a),
                        r.prediction_b,
                        _raw(r.p_pred_b),
                        _raw(r.p_true_b),
                        _raw(r.confidence_gap),
                    ]
                )
    path = Path(path)
    write_text_atomic(path, buffer.getvalue())
    return path


def _raw(value: float | None) -> str:
    return "" if value is None else repr(float(value))
