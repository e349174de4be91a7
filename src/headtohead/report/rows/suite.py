"""A suite's tables as typed rows: ranks, the per-data-set grid, pairs, the baseline, seeds, and the CSV's rows.

Every score of the suite's metric is one column kind (a share as a percentage, any other figure
with the same decimals down the column), so two different scores never print alike.
"""

from __future__ import annotations

from headtohead.report.document import Cell, Column, Row, text_cell
from headtohead.report.words.numbers import Kind
from headtohead.report.words.suite import is_share
from headtohead.results.suite import SuiteDataset, SuiteResult

__all__ = [
    "score_kind",
    "difference_kind",
    "rank_columns",
    "rank_rows",
    "grid_columns",
    "grid_rows",
    "pair_columns",
    "pair_rows",
    "control_columns",
    "control_rows",
    "seed_columns",
    "seed_rows",
    "csv_columns",
    "csv_rows",
]


def score_kind(metric: str) -> Kind:
    """How the suite's scores are written: a share as a percentage, another figure in its own decimals."""
    return "percent" if is_share(metric) else "number"


def difference_kind(metric: str) -> Kind:
    """How a difference of scores is written: percentage points for a share, a signed figure otherwise."""
    return "pp" if is_share(metric) else "signed_number"


def _wins(entry: SuiteDataset, model: str) -> tuple[list[str], list[str]]:
    """The models ``model`` beat and was beaten by on this data set (its own significant tests)."""
    beats = [
        v.model_b if v.model_a == model else v.model_a for v in entry.verdicts if v.significant and v.winner == model
    ]
    beaten = [str(v.winner) for v in entry.verdicts
              if v.significant and v.winner not in (None, model) and model in (v.model_a, v.model_b)]  # fmt: skip
    return beats, beaten


def rank_columns(result: SuiteResult) -> list[Column]:
    """The rank table's columns."""
    columns = [
        Column("model", "model", "text", priority=0),
        Column("average_rank", "average rank", "rank", higher_is_better=False, priority=0),
        Column("mean_score", f"mean {result.metric}", score_kind(result.metric), priority=0),
        Column("first_on", "first on (ties too)", "text"),
    ]
    if any(d.verdicts for d in result.finished):
        columns.append(Column("own_tests", "own tests won / lost", "text"))
    return columns


def rank_rows(result: SuiteResult) -> list[Row]:
    """The models by average rank, with their mean score and how often they came first."""
    rows = []
    finished = result.finished
    for model in sorted(result.average_ranks, key=lambda m: result.average_ranks[m]):
        values = [d.scores[model] for d in finished if model in d.scores]
        firsts = sum(1 for d in finished if d.ranks.get(model) == min(d.ranks.values(), default=None))
        won = sum(len(_wins(d, model)[0]) for d in finished)
        lost = sum(len(_wins(d, model)[1]) for d in finished)
        cells = {
            "model": text_cell(model),
            "average_rank": Cell(result.average_ranks[model]),
            "mean_score": Cell(sum(values) / len(values) if values else None),
            "first_on": Cell(f"{firsts} of {len(finished)}", raw=firsts),
            "own_tests": Cell(f"{won} / {lost}", raw=won),
        }
        rows.append(Row(cells, subject=model))
    return rows


def grid_columns(result: SuiteResult) -> list[Column]:
    """The per-data-set table's columns: the data set, its size, each model's score, its own test."""
    kind = score_kind(result.metric)
    return [
        Column("dataset", "data set", "text", priority=0, wrap=True),
        Column("examples", "examples", "integer", priority=2, paper=False),
        *(Column(m, m, kind, priority=0) for m in result.models),
        Column("own", "its own test", "text", wrap=True, priority=1, paper=False),
    ]


def _own_tests(entry: SuiteDataset) -> str:
    from headtohead.report.words.numbers import format_p

    if entry.status != "finished":
        return f"failed: {entry.error}"
    if not entry.verdicts:
        return "no test (scores only)" if entry.results is None else "no paired test in its run"
    significant = [v for v in entry.verdicts if v.significant and v.winner is not None]
    if not significant:
        return "no significant difference"
    parts = []
    for v in significant:
        loser = v.model_b if v.winner == v.model_a else v.model_a
        parts.append(f"{v.winner} > {loser}" + (f" (p {format_p(v.p_adjusted)})" if v.p_adjusted is not None else ""))
    return "; ".join(parts)


def _marks(entry: SuiteDataset, model: str, two: bool) -> str | None:
    beats, beaten = _wins(entry, model)
    if two:
        return "▲" if beats else ("▼" if beaten else None)
    text = (f"▲{', '.join(beats)}" if beats else "") + (f" ▼{', '.join(beaten)}" if beaten else "")
    return text.strip() or None


def grid_rows(result: SuiteResult) -> list[Row]:
    """One row per data set: each model's score with its rank in brackets (the best in bold), ▲/▼ where the data
    set's own test is significant; a footer row of average ranks."""
    two = len(result.models) == 2
    rows = []
    for entry in result.datasets:
        best = min(entry.ranks.values()) if entry.ranks else None
        name = text_cell(entry.name, link=entry.report, suffix="earlier run" if entry.reused else None)
        cells = {"dataset": name, "examples": Cell(entry.n_examples),
                 "own": text_cell(_own_tests(entry), tone="warning" if entry.status != "finished" else None)}  # fmt: skip
        for model in result.models:
            if entry.status != "finished" or model not in entry.scores:
                cells[model] = Cell()
                continue
            rank = entry.ranks.get(model)
            cells[model] = Cell(entry.scores[model], suffix=f"{rank:g}" if rank is not None else None,
                                aside=_marks(entry, model, two), best=rank is not None and rank == best)  # fmt: skip
        rows.append(Row(cells))
    if result.average_ranks:
        top = min(result.average_ranks.values())
        footer = {"dataset": text_cell("Average rank")}
        footer.update({m: Cell(result.average_ranks[m], kind="rank", best=result.average_ranks[m] == top)
                       for m in result.models if m in result.average_ranks})  # fmt: skip
        rows.append(Row(footer, separated=True))
    return rows


def pair_columns(result: SuiteResult) -> list[Column]:
    """The pairs table's columns (A and B: each row's first and second model)."""
    methods = {p.wilcoxon_method for p in result.pairs}
    wilcoxon = f"Wilcoxon p ({next(iter(methods))})" if len(methods) == 1 else "Wilcoxon p"
    difference = difference_kind(result.metric)
    unit = " (pp)" if is_share(result.metric) else ""
    return [
        Column("pair", "A vs B", "text", priority=0),
        Column("wins", "A wins / ties / B wins", "text", priority=1),
        Column("mean_difference", f"mean Δ{unit}", difference, priority=0),
        Column("median_difference", f"median Δ{unit}", difference, priority=3, paper=False),
        Column("w", "W+ / W−", "text", priority=4, paper=False),
        Column("wilcoxon_p", wilcoxon, "p", priority=1),
        Column("holm_p", "Holm p", "p", priority=0),
        Column("sign_test_p", "sign test p", "p", priority=3, paper=False),
        Column("rank_biserial", "rank-biserial", "signed_rank", priority=3, paper=False),
        Column("rank_difference", "Δ rank", "signed_rank", priority=2, paper=False),
        Column("p_a_better", "P(A better)", "probability", priority=1),
        Column("p_equivalent", "P(equiv.)", "probability", priority=1),
        Column("p_b_better", "P(B better)", "probability", priority=1),
    ]


def pair_rows(result: SuiteResult) -> list[Row]:
    """Every pair across data sets: wins, differences, the tests, the effect size, the Bayesian probabilities."""
    several = len({q.wilcoxon_method for q in result.pairs}) > 1
    return [
        Row({
            "pair": text_cell(f"{p.model_a} vs {p.model_b}"),
            "wins": Cell(f"{p.wins_a} / {p.ties} / {p.wins_b}", raw=p.wins_a),
            "mean_difference": Cell(p.mean_difference),
            "median_difference": Cell(p.median_difference),
            "w": Cell(f"{p.w_plus:g} / {p.w_minus:g}", raw=p.w_plus),
            "wilcoxon_p": Cell(p.wilcoxon_p, suffix=p.wilcoxon_method if several else None),
            "holm_p": Cell(p.holm_p, mark="✓" if p.significant else None),
            "sign_test_p": Cell(p.sign_test_p),
            "rank_biserial": Cell(p.rank_biserial),
            "rank_difference": Cell(p.rank_difference, mark="✓" if p.nemenyi_significant else None),
            "p_a_better": Cell(p.p_a_better),
            "p_equivalent": Cell(p.p_equivalent),
            "p_b_better": Cell(p.p_b_better),
        }, name=f"{p.model_a}_vs_{p.model_b}")
        for p in result.pairs
    ]  # fmt: skip


def control_columns(result: SuiteResult) -> list[Column]:
    """The table against the baseline: the Wilcoxon test (which decides), then Demšar's rank test (which does not)."""
    return [
        Column("model", "model", "text", priority=0),
        Column("wins", "wins / ties / losses", "text", priority=1),
        Column(
            "mean_difference",
            "mean Δ" + (" (pp)" if is_share(result.metric) else ""),
            difference_kind(result.metric),
            priority=0,
        ),
        Column("wilcoxon_p", "Wilcoxon p", "p", priority=2, paper=False),
        Column("holm_p", "Wilcoxon Holm p (decides)", "p", priority=0),
        Column("rank_difference", "Δ rank", "signed_rank", priority=1),
        Column("rank_z", "rank z", "signed_rank", priority=3, paper=False),
        Column("rank_holm_p", "rank test Holm p (does not decide)", "p", priority=1),
    ]


def control_rows(result: SuiteResult) -> list[Row]:
    """Each model against the baseline (``--baseline``), Holm over k − 1 comparisons."""
    return [
        Row({
            "model": text_cell(c.model),
            "wins": Cell(f"{c.wins} / {c.ties} / {c.losses}", raw=c.wins),
            "mean_difference": Cell(c.mean_difference),
            "wilcoxon_p": Cell(c.wilcoxon_p),
            "holm_p": Cell(c.holm_p, mark="✓" if c.significant else None),
            "rank_difference": Cell(c.rank_difference),
            "rank_z": Cell(c.rank_z),
            "rank_holm_p": Cell(c.rank_holm_p, mark="✓" if c.rank_significant else None),
        }, subject=c.model)
        for c in result.control
    ]  # fmt: skip


def seed_columns(result: SuiteResult) -> list[Column]:
    """Per data set and model trained with several seeds: the spread over seeds against the test set's."""
    metric = next((d.seeds.metric for d in result.datasets if d.seeds is not None), result.metric)
    spread: Kind = "points" if is_share(metric) else "number"
    unit = " (pp)" if is_share(metric) else ""
    return [
        Column("dataset", "data set", "text", priority=0),
        Column("model", "model", "text", priority=0),
        Column("seeds", "seeds", "integer"),
        Column("mean", "mean", score_kind(metric), priority=0),
        Column("seed_sd", f"sd over seeds{unit}", spread, priority=0),
        Column("test_set_se", f"test-set se{unit}", spread),
        Column("seed_share", "from seeds", "percent"),
    ]


def seed_rows(result: SuiteResult) -> list[Row]:
    """One row per data set and model with seeds."""
    return [
        Row({
            "dataset": text_cell(d.name),
            "model": text_cell(s.model),
            "seeds": Cell(s.n_seeds),
            "mean": Cell(s.mean),
            "seed_sd": Cell(s.seed_sd),
            "test_set_se": Cell(s.test_set_se),
            "seed_share": Cell(s.seed_share),
        }, subject=s.model)
        for d in result.datasets
        if d.seeds is not None
        for s in d.seeds.models
    ]  # fmt: skip


def csv_columns() -> list[Column]:
    """The columns of ``suite.csv``: one row per data set and model, numbers unrounded."""
    names = ("dataset", "status", "model", "metric", "score", "rank", "average_rank", "own_test_wins",
             "own_test_losses", "results", "error")  # fmt: skip
    return [Column(name, name, "number" if name in ("score", "rank", "average_rank") else "text") for name in names]


def csv_rows(result: SuiteResult) -> list[Row]:
    """One row per data set and model (a failed data set: one row with its error)."""
    rows = []
    for entry in result.datasets:
        if entry.status != "finished":
            rows.append(Row({"dataset": text_cell(entry.name), "status": text_cell(entry.status),
                             "error": text_cell(entry.error)}))  # fmt: skip
            continue
        for model in result.models:
            beats, beaten = _wins(entry, model)
            values = {"dataset": entry.name, "status": entry.status, "model": model, "metric": result.metric,
                      "score": entry.scores.get(model), "rank": entry.ranks.get(model),
                      "average_rank": result.average_ranks.get(model), "own_test_wins": len(beats),
                      "own_test_losses": len(beaten), "results": entry.results}  # fmt: skip
            rows.append(Row({k: Cell(v, kind="text") if isinstance(v, str) else Cell(v) for k, v in values.items()}))
    return rows
