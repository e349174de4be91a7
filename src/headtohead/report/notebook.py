"""What a notebook shows for an outcome: a short document as HTML, and a few lines of text.

``Run``, ``GateOutcome``, ``SweepRun``, ``TrainOutcome`` and ``SuiteOutcome`` (:mod:`headtohead.pipeline`) call
these from ``_repr_html_`` and ``__repr__``, so ``headtohead.compare(...)`` as the last line of a
cell shows the verdict at once. Each builds the outcome's short document
(:mod:`headtohead.report.sections`) and draws it with :mod:`headtohead.report.formats.notebook`:
the same words and cells as the report, no script.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from headtohead.report.document import Document, Section
from headtohead.report.formats.notebook import notebook_html, notebook_text
from headtohead.report.sections.gate import gate_document, gate_head
from headtohead.report.sections.run import run_brief
from headtohead.report.sections.run.view import dataset_line
from headtohead.report.sections.suite import suite_brief
from headtohead.report.sections.sweep import sweep_brief
from headtohead.report.sections.training import training_brief
from headtohead.results.records import RunResult
from headtohead.results.suite import SuiteResult
from headtohead.results.sweep import SweepResult
from headtohead.results.training import TrainingSummary
from headtohead.stats.gate import Decision

__all__ = [
    "run_html",
    "run_text",
    "gate_html",
    "gate_text",
    "sweep_html",
    "sweep_text",
    "training_html",
    "training_text",
    "suite_html",
    "suite_text",
]


def _saved(out_dir: Path | str | None) -> str:
    return f"saved in {out_dir}" if out_dir is not None else "not saved (no out_dir)"


def _models(names: Sequence[str]) -> str:
    return f"{len(names)} model{'s' if len(names) != 1 else ''}: {', '.join(names)}"


#: A factor's passes in words (``llm (5 prompts)``).
_PASSES = {"prompt": "prompts", "repeat": "runs"}


def _run_models(result: RunResult) -> str:
    """``2 models: llm (5 prompts), tfidf``: a model measured several ways counted once, with its passes."""
    return _models(
        [
            f"{m.name} ({len(m.passes)} {_PASSES.get(m.passes[0].factor, 'passes')})" if m.passes else m.name
            for m in result.models
        ]
    )


def run_html(result: RunResult, *, out_dir: Path | str | None = None, training: TrainingSummary | None = None) -> str:
    """A run as a notebook shows it: the verdict's headline, the summary table, every comparison folded.

    Parameters
    ----------
    result : RunResult
    out_dir : Path or str, optional
        Where the run was saved (named under the title).
    training : TrainingSummary, optional
        How the models were trained (comparisons across seeds join the verdict).

    Returns
    -------
    str
        An HTML fragment (a ``<div>``), every user string escaped.

    Examples
    --------
    >>> html = run_html(headtohead.compare(models, data).result)   # doctest: +SKIP
    """
    subtitle = f"{_run_models(result)} · {dataset_line(result)} · {_saved(out_dir)}"
    return notebook_html(run_brief(result, training=training, subtitle=subtitle))


def run_text(result: RunResult, *, out_dir: Path | str | None = None, kind: str = "Run") -> str:
    """A few lines: the run's name, models, data and where it was saved, then the verdict's headline.

    Examples
    --------
    >>> print(run_text(result))                                    # doctest: +SKIP
    Run 'sst2' — 2 models: bert, roberta · 872 examples · saved in runs/sst2
      roberta: +1.2 pp accuracy over bert (95 % CI +0.4…+2.0, McNemar score test p = 0.003)
    """
    head = (
        f"{kind} {result.name!r} — {_run_models(result)} · {result.dataset.n_examples:,} examples · {_saved(out_dir)}"
    )
    return notebook_text(head, run_brief(result))


def gate_html(
    decisions: Sequence[Decision],
    *,
    baseline: str,
    candidate: str,
    paragraph: str,
    exit_code: int,
    warnings: Sequence[str] = (),
) -> str:
    """The gate as a notebook shows it: its decision, then one row per check with the reason.

    Parameters
    ----------
    decisions : sequence of Decision
    baseline, candidate : str
    paragraph : str
        :func:`~headtohead.report.words.gate.gate_paragraph` of the decisions.
    exit_code : int
        What ``h2h gate`` exits with (0 pass, 1 fail, 3 inconclusive).
    warnings : sequence of str
        Two runs gated against each other: the settings known to move scores in which they differ.
    """
    return notebook_html(gate_document(decisions, baseline=baseline, candidate=candidate, paragraph=paragraph,
                                       exit_code=exit_code, warnings=warnings))  # fmt: skip


def gate_text(
    decisions: Sequence[Decision],
    *,
    baseline: str,
    candidate: str,
    paragraph: str,
    exit_code: int,
    warnings: Sequence[str] = (),
) -> str:
    """``GateOutcome bert-int8 vs bert: exit code 1`` and the decision, then ``check: outcome`` per check (then
    a ``warning:`` line per setting known to move scores in which two runs gated against each other differ)."""
    checks = " · ".join(f"{d.check}: {d.outcome}" for d in decisions)
    warned = "".join(f"\n  warning: {w}" for w in warnings)
    head = f"GateOutcome {candidate} vs {baseline}: exit code {exit_code}"
    return f"{head}\n  {gate_head(decisions, paragraph)}\n  {checks}{warned}"


def sweep_html(result: SweepResult, *, out_dir: Path | str | None = None) -> str:
    """A sweep as a notebook shows it: the recommendation, then the table of every variant and batch size."""
    subtitle = (
        f"{_models([m.model for m in result.models])} · {result.dataset.n_examples:,} examples of "
        f"{result.dataset.source} · {_saved(out_dir)}"
    )
    return notebook_html(sweep_brief(result, subtitle=subtitle))


def sweep_text(result: SweepResult, *, out_dir: Path | str | None = None) -> str:
    """``SweepRun 'name' — 1 model: minilm · 12 variants · saved in …`` and the recommendation."""
    n_variants = sum(1 for c in result.cells() if not c.parent)
    return (
        f"SweepRun {result.name!r} — {_models([m.model for m in result.models])} · {n_variants} variant(s) · "
        f"{_saved(out_dir)}\n  {result.recommendation.sentence}"
    )


def training_html(training: TrainingSummary, result: RunResult | None, *, out_dir: Path | str | None = None) -> str:
    """A training comparison as a notebook shows it: the verdict (seeds included) and summary of the
    trained models, then the training table and the comparisons across seeds."""
    subtitle = (
        f"{_models(training.models)} × {len(training.seeds)} seed(s) trained on {training.n_train:,} "
        f"examples of {training.train_source} · {_saved(out_dir)}"
    )
    extra = training_brief(training)
    if result is None:  # a non-main process of a torchrun launch: no evaluation here
        return notebook_html(Document("training", subtitle, (Section("training", "training", tuple(extra)),)))
    document = run_brief(result, training=training, subtitle=subtitle)
    section = document.sections[0]
    return notebook_html(replace(document, sections=(replace(section, blocks=section.blocks + tuple(extra)),)))


def training_text(training: TrainingSummary, result: RunResult | None, *, out_dir: Path | str | None = None) -> str:
    """``TrainOutcome 'name' — 2 models: a, b × 1 seed(s) · saved in …`` and the verdict's headline."""
    name = f" {result.name!r}" if result is not None else ""
    head = f"TrainOutcome{name} — {_models(training.models)} × {len(training.seeds)} seed(s) · {_saved(out_dir)}"
    return notebook_text(head, run_brief(result, training=training) if result is not None else None)


def _suite_subtitle(result: SuiteResult, out_dir: Path | str | None) -> str:
    failed = f" ({len(result.failed)} failed)" if result.failed else ""
    return f"{_models(result.models)} · {len(result.datasets)} data sets{failed} · {result.metric} · {_saved(out_dir)}"


def suite_html(result: SuiteResult, *, out_dir: Path | str | None = None) -> str:
    """A suite as a notebook shows it: the verdict, the rank table, every pair folded.

    Parameters
    ----------
    result : SuiteResult
    out_dir : Path or str, optional
        Where the suite was saved (named under the title).

    Returns
    -------
    str
        An HTML fragment (a ``<div>``), every user string escaped.
    """
    return notebook_html(suite_brief(result, subtitle_text=_suite_subtitle(result, out_dir)))


def suite_text(result: SuiteResult, *, out_dir: Path | str | None = None) -> str:
    """``SuiteOutcome 'name' — 2 models: a, b · 6 data sets · accuracy · saved in …`` and the verdict's first lines."""
    head = f"SuiteOutcome {result.name!r} — {_suite_subtitle(result, out_dir)}"
    return notebook_text(head, suite_brief(result, subtitle_text=""))
