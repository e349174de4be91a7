"""The tables of a model run several times, as typed rows: each metric over the runs, how steady each model's answers
are, the examples whose answer changed most, and each comparison over every run."""

from __future__ import annotations

from headtohead.metrics import CATALOGUE
from headtohead.report.document import Cell, Column, Row, text_cell
from headtohead.report.words.numbers import Kind
from headtohead.report.words.repeats import REPEAT_RULE, runs_of
from headtohead.results.records import RunResult
from headtohead.results.repeats import MetricSpread, RepeatPool, RepeatSummary

__all__ = [
    "SPREAD_COLUMNS",
    "STEADY_COLUMNS",
    "CHANGED_COLUMNS",
    "POOL_COLUMNS",
    "spread_rows",
    "steady_rows",
    "changed_rows",
    "pool_rows",
    "repeat_lines",
    "repeat_note",
]

SPREAD_COLUMNS = (
    Column("model", "model", "text", priority=0),
    Column("metric", "metric", "text", priority=0),
    Column("mean", "mean over runs", "percent", priority=0),
    Column("sd", "run-to-run SD (pp for a share)", "points", priority=0),
    Column("lowest", "lowest run", "percent"),
    Column("highest", "highest run", "percent"),
)
STEADY_COLUMNS = (
    Column("model", "model", "text", priority=0),
    Column("runs", "runs", "integer"),
    Column("floor", "two runs differ by up to (pp, 95 %)", "points", priority=0),
    Column("means_floor", "two means of its runs differ by up to (pp, 95 %): its noise floor", "points", priority=0),
    Column("changed", "answer changed", "percent", priority=0),
    Column("agreement", "agreement with its majority answer", "percent"),
    Column("pass_all", "right in all runs (pass^k)", "percent", priority=0),
    Column("pass_any", "right in any run (pass@k)", "percent", priority=0),
)
CHANGED_COLUMNS = (
    Column("model", "model", "text", priority=0),
    Column("example", "example", "text", priority=0),
    Column("input", "input", "text", wrap=True, priority=2),
    Column("gold", "gold", "text"),
    Column("answers", "answers (runs)", "text", priority=0),
    Column("right", "right", "text"),
)
POOL_COLUMNS = (
    Column("pair", "pair", "text", priority=0),
    Column("runs", "runs", "text"),
    Column("difference", "accuracy Δ over runs (pp)", "pp", priority=0),
    Column("p", "p", "p"),
    Column("p_adjusted", "Holm p", "p", priority=0),
    Column("se_examples", "SE examples (pp)", "points", priority=2),
    Column("se_runs", "SE whole runs (pp)", "points", priority=2),
    Column("floor", "noise floor: two means of runs differ by (pp)", "points"),
    Column("significant", "significant", "text", priority=0),
)


def _summary(result: RunResult) -> RepeatSummary | None:
    return result.stats.repeats if result.stats is not None else None


def _share(metric: str) -> bool:
    """A metric written as a share (%; its spread in points), or a score of its own scale."""
    entry = CATALOGUE.get(metric)
    return metric in ("accuracy", "balanced_accuracy", "f1_macro", "f1_weighted") or (
        entry is not None and entry.scale == "share"
    )


def _spread_row(model: str, spread: MetricSpread) -> Row:
    share = _share(spread.metric)
    kind: Kind = "percent" if share else "score"
    sd_kind: Kind = "points" if share else "score"
    sd = (
        Cell(spread.sd, spread.sd_low, spread.sd_high, kind=sd_kind)
        if spread.sd_high is not None
        else Cell(spread.sd, kind=sd_kind, bare="unbounded above")
    )
    return Row(
        {
            "model": text_cell(model),
            "metric": text_cell(spread.metric),
            "mean": Cell(spread.mean, kind=kind),
            "sd": sd,
            "lowest": Cell(spread.low, kind=kind),
            "highest": Cell(spread.high, kind=kind),
        },
        subject=model,
        name=f"{model}_{spread.metric}",
    )


def spread_rows(result: RunResult) -> list[Row]:
    """One row per metric of each repeated model: its mean over the runs, the run-to-run SD (with its chi-square
    interval), the lowest and highest run."""
    summary = _summary(result)
    if summary is None:
        return []
    return [_spread_row(m.name, s) for m in summary.models for s in m.spreads]


def steady_rows(result: RunResult) -> list[Row]:
    """One row per repeated model: how far two of its runs differ, how far two means of its runs differ (the noise
    floor its gaps are held against), how often an example's answer changed, agreement, pass^k and pass@k."""
    summary = _summary(result)
    if summary is None:
        return []
    return [
        Row(
            {
                "model": text_cell(m.name),
                "runs": Cell(m.n_repeats),
                "floor": Cell(m.two_runs_differ),
                "means_floor": Cell(m.means_differ),
                "changed": Cell(m.changed_share, suffix=f"{m.changed} of {m.n_examples}"),
                "agreement": Cell(m.agreement),
                "pass_all": Cell(m.pass_all),
                "pass_any": Cell(m.pass_any),
            },
            subject=m.name,
        )
        for m in summary.models
    ]


def changed_rows(result: RunResult) -> list[Row]:
    """The examples whose answer changed most, per repeated model (lowest agreement first)."""
    summary = _summary(result)
    if summary is None:
        return []
    return [
        Row(
            {
                "model": text_cell(m.name),
                "example": text_cell(e.id if e.id is not None else f"row {e.index}"),
                "input": text_cell(e.input),
                "gold": text_cell(e.gold),
                "answers": text_cell(", ".join(f"{answer} ({times})" for answer, times in e.answers.items())),
                "right": Cell(f"{e.right} of {m.n_repeats}", raw=e.right),
            },
            subject=m.name,
        )
        for m in summary.models
        for e in m.most_changed
    ]


def pool_rows(result: RunResult) -> list[Row]:
    """One row per comparison over every run: the gap, its interval, p, and the two parts of its standard error."""
    summary = _summary(result)
    if summary is None:
        return []
    return [
        Row(
            {
                "pair": text_cell(f"{p.model_a} − {p.model_b}"),
                "runs": text_cell(runs_of(p)),
                "difference": Cell(p.estimate, p.low, p.high),
                "p": Cell(p.p_value),
                "p_adjusted": Cell(p.p_adjusted),
                "se_examples": Cell(p.se_examples),
                "se_runs": Cell(p.se_runs),
                "floor": Cell(p.noise_floor, suffix=p.floor_of) if p.noise_floor is not None else Cell(note="unknown"),
                "significant": text_cell(_significant(p, summary.alpha)),
            },
            name=f"{p.model_a}_vs_{p.model_b}",
        )
        for p in summary.pools
    ]


def _significant(pool: RepeatPool, alpha: float) -> str:
    """``yes: llm``, ``no: within the noise floor`` (the test alone would have said yes), or ``no``."""
    if pool.winner:
        return f"yes: {pool.winner}"
    return "no: within the noise floor" if pool.within_floor and pool.p_adjusted <= alpha else "no"


def repeat_lines(result: RunResult) -> list[str]:
    """The section's sentences (stored with the numbers, :mod:`headtohead.report.words.repeats`)."""
    summary = _summary(result)
    return list(summary.sentences) if summary is not None else []


def repeat_note(result: RunResult) -> str:
    """How the comparison over runs is made (under its table)."""
    return REPEAT_RULE[0].upper() + REPEAT_RULE[1:] + "."
