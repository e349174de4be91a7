"""What a notebook shows for an outcome: the verdict and the summary table as HTML, and a short text.

``Run``, ``GateOutcome``, ``SweepRun``, ``TrainOutcome`` and ``SuiteOutcome`` (:mod:`headtohead.pipeline`) call
these from ``_repr_html_`` and ``__repr__``, so ``headtohead.compare(...)`` as the last line of a
cell shows the verdict at once. The words and cells are the report's own
(:func:`~headtohead.report.words.verdict.build_verdict`, :func:`~headtohead.report.html.summary_context`,
:func:`~headtohead.report.words.gate.decision_explanation`, :func:`~headtohead.report.sweep.sweep_rows` …);
the fragment goes through the report's autoescaped templates and carries no script.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from headtohead.report.figures import report_styles
from headtohead.report.html import dataset_line, summary_context, summary_notes, template_environment
from headtohead.report.merge import as_merged
from headtohead.report.rows.summary import training_rows
from headtohead.report.suite import pair_sentence
from headtohead.report.suite import rank_rows as suite_rank_rows
from headtohead.report.sweep import SWEEP_COLUMNS, sweep_level, sweep_rows
from headtohead.report.training import seed_lines
from headtohead.report.words.gate import decision_explanation
from headtohead.report.words.verdict import build_verdict
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

#: Verdict lines shown in a ``repr`` (the HTML shows them all).
_REPR_LINES = 4


def _render(
    title: str,
    subtitle: str,
    *,
    lines: Sequence[dict[str, Any]] = (),
    tables: Sequence[dict[str, Any]] = (),
    notes: Sequence[str] = (),
    details: Sequence[str] = (),
    details_title: str = "",
) -> str:
    template = template_environment().get_template("notebook.html.j2")
    return str(
        template.render(
            title=title,
            subtitle=subtitle,
            lines=list(lines),
            tables=list(tables),
            notes=list(notes),
            details=list(details),
            details_title=details_title,
        )
    )


def _plain(text: str) -> dict[str, Any]:
    return {"subject": None, "text": text, "colour": "inherit"}


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], caption: str = "") -> dict[str, Any]:
    return {
        "caption": caption,
        "headers": list(headers),
        "colours": None,
        "rows": [[{"text": text, "best": False} for text in row] for row in rows],
    }


def _saved(out_dir: Path | str | None) -> str:
    return f"saved in {out_dir}" if out_dir is not None else "not saved (no out_dir)"


def _models(names: Sequence[str]) -> str:
    return f"{len(names)} model{'s' if len(names) != 1 else ''}: {', '.join(names)}"


#: A factor's passes in words (``llm (5 prompts)``).
_PASSES = {"prompt": "prompts"}


def _run_models(result: RunResult) -> str:
    """``2 models: llm (5 prompts), tfidf``: a model measured several ways counted once, with its passes."""
    return _models(
        [
            f"{m.name} ({len(m.passes)} {_PASSES.get(m.passes[0].factor, 'passes')})" if m.passes else m.name
            for m in result.models
        ]
    )


def _run_parts(result: RunResult, training: TrainingSummary | None) -> dict[str, Any]:
    """The verdict lines, the summary table and its notes of one run, as the report shows them."""
    styles = report_styles(as_merged(result))
    verdict = build_verdict(result, training)
    lines = [
        {
            "subject": line.subject,
            "text": line.text,
            "colour": styles[line.subject].colour if line.subject in styles else "inherit",
        }
        for line in verdict.headline
    ]
    summary = summary_context(result, styles)
    table = {
        "caption": "",
        "headers": ["metric", *(m["name"] for m in summary["models"])],
        "colours": [m["colour"] for m in summary["models"]],
        "rows": [
            [{"text": f"{metric['label']} {metric['direction']}".strip(), "best": False}, *metric["cells"]]
            for metric in summary["metrics"]
        ],
    }
    return {
        "lines": lines,
        "tables": [table] if summary["models"] else [],
        "notes": summary_notes(result) if summary["models"] else [],
        "details": verdict.details,
    }


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
    parts = _run_parts(result, training)
    subtitle = f"{_run_models(result)} · {dataset_line(result)} · {_saved(out_dir)}"
    return _render(result.name, subtitle, details_title="Every comparison in full", **parts)


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
    return "\n".join([head, *_headline(result, None)])


def _headline(result: RunResult, training: TrainingSummary | None) -> list[str]:
    """The verdict's first lines, indented, and how many more there are."""
    lines = [line.plain() for line in build_verdict(result, training).headline]
    more = [f"… and {len(lines) - _REPR_LINES} more line(s)"] if len(lines) > _REPR_LINES else []
    return [f"  {line}" for line in lines[:_REPR_LINES] + more]


def _gate_head(decisions: Sequence[Decision], paragraph: str) -> str:
    """The paragraph's first part (PASS/FAIL/INCONCLUSIVE …): the paragraph is that, then each check's explanation."""
    explanations = " ".join(decision_explanation(d) for d in decisions)
    return paragraph.removesuffix(explanations).strip() if explanations else paragraph


def gate_html(decisions: Sequence[Decision], *, baseline: str, candidate: str, paragraph: str, exit_code: int) -> str:
    """The gate as a notebook shows it: its decision, then one row per check with the reason.

    Parameters
    ----------
    decisions : sequence of Decision
    baseline, candidate : str
    paragraph : str
        :func:`~headtohead.report.words.gate.gate_paragraph` of the decisions.
    exit_code : int
        What ``h2h gate`` exits with (0 pass, 1 fail, 3 inconclusive).
    """
    rows = [(d.check, d.outcome, decision_explanation(d)) for d in decisions]
    table = _table(("check", "outcome", "why"), rows)
    return _render(
        f"gate: {candidate} vs {baseline}",
        f"exit code {exit_code}",
        lines=[_plain(_gate_head(decisions, paragraph))],
        tables=[table],
    )


def gate_text(decisions: Sequence[Decision], *, baseline: str, candidate: str, paragraph: str, exit_code: int) -> str:
    """``GateOutcome bert-int8 vs bert: exit code 1`` and the decision, then ``check: outcome`` per check."""
    checks = " · ".join(f"{d.check}: {d.outcome}" for d in decisions)
    return (
        f"GateOutcome {candidate} vs {baseline}: exit code {exit_code}\n  {_gate_head(decisions, paragraph)}\n"
        f"  {checks}"
    )


def sweep_html(result: SweepResult, *, out_dir: Path | str | None = None) -> str:
    """A sweep as a notebook shows it: the recommendation, then the table of every variant and batch size."""
    rows = sweep_rows(result)
    level = sweep_level(result)  # the headers name the level, as sweep.md's note does
    headers = [c.replace("(CI)", f"({level} CI)") for c in SWEEP_COLUMNS]
    table = _table(headers, [[row[c] for c in SWEEP_COLUMNS] for row in rows])
    verdicts = [c.quality.verdict for c in result.cells() if c.quality is not None]
    subtitle = (
        f"{_models([m.model for m in result.models])} · {result.dataset.n_examples:,} examples of "
        f"{result.dataset.source} · {_saved(out_dir)}"
    )
    return _render(
        f"sweep {result.name}",
        subtitle,
        lines=[_plain(result.recommendation.sentence)],
        tables=[table],
        notes=result.warnings,
        details=verdicts,
        details_title="Quality of each variant against its parent",
    )


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
    rows = training_rows(training)
    table = (
        _table(list(rows[0]), [list(row.values()) for row in rows], caption="Training (identical order and settings)")
        if rows
        else None
    )
    subtitle = (
        f"{_models(training.models)} × {len(training.seeds)} seed(s) trained on {training.n_train:,} "
        f"examples of {training.train_source} · {_saved(out_dir)}"
    )
    if result is None:  # a non-main process of a torchrun launch: no evaluation here
        return _render("training", subtitle, tables=[table] if table else [], notes=training.warnings)
    parts = _run_parts(result, training)
    parts["tables"] = parts["tables"] + ([table] if table else [])
    parts["notes"] = [*parts["notes"], *seed_lines(training), *training.warnings]
    return _render(result.name, subtitle, details_title="Every comparison in full", **parts)


def training_text(training: TrainingSummary, result: RunResult | None, *, out_dir: Path | str | None = None) -> str:
    """``TrainOutcome 'name' — 2 models: a, b × 1 seed(s) · saved in …`` and the verdict's headline."""
    name = f" {result.name!r}" if result is not None else ""
    head = f"TrainOutcome{name} — {_models(training.models)} × {len(training.seeds)} seed(s) · {_saved(out_dir)}"
    return "\n".join([head, *(_headline(result, training) if result is not None else [])])


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
    rows = suite_rank_rows(result)
    tables = [_table(list(rows[0]), [list(r.values()) for r in rows])] if rows else []
    return _render(
        f"suite {result.name}",
        _suite_subtitle(result, out_dir),
        lines=[_plain(v) for v in result.verdict],
        tables=tables,
        notes=result.warnings,
        details=[pair_sentence(p, result) for p in result.pairs],
        details_title="Every pair across data sets",
    )


def suite_text(result: SuiteResult, *, out_dir: Path | str | None = None) -> str:
    """``SuiteOutcome 'name' — 2 models: a, b · 6 data sets · accuracy · saved in …`` and the verdict's first lines."""
    lines = [f"  {line}" for line in result.verdict[:_REPR_LINES]]
    if len(result.verdict) > _REPR_LINES:
        lines.append(f"  … and {len(result.verdict) - _REPR_LINES} more line(s)")
    return "\n".join([f"SuiteOutcome {result.name!r} — {_suite_subtitle(result, out_dir)}", *lines])
