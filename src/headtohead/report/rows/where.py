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
from headtohead.report.words.numbers import format_p, format_pp
from headtohead.results.disagreements import Disagreement, Disagreements
from headtohead.results.records import RunResult
from headtohead.results.slices import SliceResult
from headtohead.runtime.files import write_text_atomic

__all__ = [
    "SHOWN",
    "slice_name",
    "slice_rows",
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
    if result.kind == "size":
        return f"length: {result.label}" if result.unit in ("words", "characters") else f"size: {result.label}"
    return f"{result.column}: {result.label}"


def slice_rows(result: RunResult) -> list[dict[str, str]]:
    """One row per slice: its size, every model's accuracy with its interval (and picked metrics), every pair's
    difference and Holm p."""
    summary = result.stats.slices if result.stats is not None else None
    if summary is None:
        return []
    rows = []
    for s in summary.slices:
        row = {"slice": slice_name(s), "examples": f"{s.n_examples:,}"}
        for entry in s.accuracies:
            est = entry.accuracy
            low, high = (est.low, est.high) if est.has_interval else (None, None)
            row[f"{entry.model} accuracy"] = (
                f"{100 * est.value:.1f} % ({100 * low:.1f}–{100 * high:.1f})"
                if low is not None and high is not None
                else f"{100 * est.value:.1f} %"
            )
        for entry in s.accuracies:  # the picked metrics (stats.metrics); "—" on a slice of one class
            for name in result.stats.settings.metrics if result.stats is not None else ():
                value, share = entry.metrics.get(name), CATALOGUE[name].scale == "share"
                text = "—" if value is None else f"{100 * value:.1f} %" if share else f"{value:.3f}"
                row[f"{entry.model} {CATALOGUE[name].label}"] = text
        for pair in s.pairs:
            key = f"{pair.model_a} − {pair.model_b}"
            row[f"{key} (pp)"] = f"{format_pp(pair.difference)} ({format_pp(pair.ci_low)}…{format_pp(pair.ci_high)})"
            row[f"{key} Holm p"] = format_p(pair.p_adjusted).replace("= ", "") + (" ✓" if pair.significant else "")
        rows.append(row)
    return rows


def slices_note(result: RunResult) -> str:
    """How to read the slices table."""
    summary = result.stats.slices if result.stats is not None else None
    if summary is None:
        return ""
    stopped = any(c.stopped_early for c in result.stats.comparisons) if result.stats is not None else False
    prefix = (
        "The run stopped early (--until-decided): these fixed-sample tests of the examples used are nominal only. "
        if stopped
        else ""
    )
    return prefix + (
        f"Accuracy per slice with {summary.confidence:.0%} Wilson intervals; the difference of each "
        f"pair with Tango's score interval, the same statistic as the test; McNemar "
        f"({summary.mcnemar_rule}) with Holm's adjustment over all {summary.n_tests} (slice, pair) tests, "
        f"α = {summary.alpha:g}. ✓: significant after the adjustment — only these are named in the "
        f"verdict. Length bins are quantiles of the data."
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
    gap: str


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


def _percent(p: float | None) -> str:
    return "" if p is None else f" ({100 * p:.0f} %)"


def _row(rank: int, d: Disagreement) -> DisagreementRow:
    example = f"#{d.index}" + (f" · {d.example_id}" if d.example_id is not None else "")
    gap = (
        "—"
        if d.confidence_gap is None
        else f"{format_pp(d.confidence_gap, signed=False)} pp"
        if d.confidence_gap >= 0
        else f"{format_pp(d.confidence_gap)} pp"
    )
    return DisagreementRow(
        rank=rank,
        example=example,
        input=d.input,
        thumbnail=d.thumbnail,
        true_label=d.true_label,
        prediction_a=d.prediction_a + _percent(d.p_pred_a),
        prediction_b=d.prediction_b + _percent(d.p_pred_b),
        gap=gap,
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
                        _number(r.p_pred_a),
                        _number(r.p_true_a),
                        r.prediction_b,
                        _number(r.p_pred_b),
                        _number(r.p_true_b),
                        _number(r.confidence_gap),
                    ]
                )
    path = Path(path)
    write_text_atomic(path, buffer.getvalue())
    return path


def _number(value: float | None) -> str:
    return "" if value is None else repr(float(value))
