"""One run as its sections see it, and the few words every section of a run shares (a leaf of ``sections/run``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from headtohead.report.document import Figure
from headtohead.report.figures import FigureSpec
from headtohead.report.merge import MergedRuns, RunEntry
from headtohead.report.plots import ModelStyle
from headtohead.report.words.cascade import held_out_words
from headtohead.report.words.label_suspects import LABEL_OK_FALSE, left_out_words
from headtohead.results.records import RunResult

__all__ = ["RunView", "report_title", "dataset_line", "as_figures"]


@dataclass(frozen=True)
class RunView:
    """One run in its report: the run, its place (``index`` from 1), the models' styles, the machine it ran on."""

    run: RunEntry
    index: int
    styles: Mapping[str, ModelStyle]
    several: bool = False
    machine: str = ""

    @property
    def result(self) -> RunResult:
        """The run's results."""
        return self.run.result

    @property
    def anchor(self) -> str:
        """``run1``: the prefix of this run's anchors and file names."""
        return f"run{self.index}"

    @property
    def colours(self) -> dict[str, str]:
        """Each model's colour."""
        return {name: style.colour for name, style in self.styles.items()}


def report_title(merged: MergedRuns) -> str:
    """``"sst2-bert-vs-roberta"``, or the run names joined when several differ."""
    names = list(dict.fromkeys(run.result.name for run in merged.runs))
    return names[0] if len(names) == 1 else " + ".join(names)


def dataset_line(result: RunResult) -> str:
    """``"sst2/dev.tsv — 872 examples, 2 classes (text)"``, plus skipped examples when any, and the examples a
    cascade's threshold was chosen on, which no statistic reads."""
    data = result.dataset
    text = f"{data.source} — {data.n_examples:,} examples, {len(data.label_names)} classes ({data.modality})"
    skipped = dict(data.skipped)
    left_out = skipped.pop(LABEL_OK_FALSE, 0)
    if skipped:
        text += "; skipped: " + ", ".join(f"{count} {reason}" for reason, count in skipped.items())
    if left_out:
        text += f"; {left_out_words(left_out)}"
    if result.calibration_examples:  # a cascade chose its threshold on them: no statistic reads them
        text += f"; {held_out_words(data.n_examples, len(result.calibration_examples))}"
    return text


def as_figures(specs: Sequence[FigureSpec]) -> list[Figure]:
    """Charts chosen by :mod:`headtohead.report.figures` as document figures."""
    return [Figure(s.key, s.title, s.caption, s.make) for s in specs]
