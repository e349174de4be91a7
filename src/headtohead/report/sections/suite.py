"""A suite's document: the verdict, the CD diagram, ranks, the per-data-set grid, pairs, the baseline, seeds.

``suite.html``, ``suite.md``, ``suite.tex`` (the tables with a caption for a paper), the terminal's
output and a notebook's all draw it; ``suite.csv`` writes :func:`suite_csv_table` unrounded.
"""

from __future__ import annotations

from collections.abc import Callable

from headtohead.report.document import Block, Document, Figure, Fold, Line, Lines, Paragraph, Section, Table
from headtohead.report.plots import model_styles
from headtohead.report.rows.suite import (
    control_columns,
    control_rows,
    csv_columns,
    csv_rows,
    grid_columns,
    grid_rows,
    pair_columns,
    pair_rows,
    rank_columns,
    rank_rows,
    seed_columns,
    seed_rows,
)
from headtohead.report.words.numbers import format_number
from headtohead.report.words.suite import (
    bayes_can_decide,
    direction,
    is_share,
    no_bayes_verdict,
    pair_sentence,
    rope_text,
    scale_note,
    seed_sentences,
)
from headtohead.results.suite import SuiteResult

__all__ = ["CD_TITLE", "cd_caption", "suite_document", "suite_terminal", "suite_brief", "suite_csv_table", "subtitle"]

CD_TITLE = "Critical-difference diagram"


def cd_caption(result: SuiteResult) -> str:
    """How to read the diagram."""
    if result.nemenyi_cd is None:
        return (
            f"Average rank of each model over {result.n_datasets} data sets (1 = best). With two models there is "
            f"no critical difference: the Wilcoxon signed-rank test of the pair decides."
        )
    return (
        f"Average rank of each model over {result.n_datasets} data sets (1 = best). Models joined by a bar are "
        f"within Nemenyi's critical difference ({format_number(result.nemenyi_cd, 'rank')} ranks, α = "
        f"{result.alpha:g}) of each other: the diagram does not show them to differ. Pairwise Wilcoxon tests with "
        f"Holm (the table below) do not depend on the other models and decide the verdict."
    )


def subtitle(result: SuiteResult) -> str:
    """``3 models (a, b, c) on 6 data sets · accuracy, higher is better · from runs of this suite``."""
    source = {"suite": "runs of this suite", "results": "finished runs", "scores": "a table of scores"}[result.input]
    return (
        f"{len(result.models)} models ({', '.join(result.models)}) on {len(result.datasets)} data sets · "
        f"{result.metric}, {direction(result)} · from {source}"
    )


def _scores_caption(result: SuiteResult) -> str:
    unit = " (%)" if is_share(result.metric) else ""
    better = "higher" if result.higher_is_better else "lower"
    return (
        f"{result.metric}{unit} of each model on {result.n_datasets} data sets ({better} is better); in brackets the "
        f"model's rank on the data set (1 = best, ties share the mean), in bold the best."
    )


def _pairs_caption(result: SuiteResult) -> str:
    unit = " (pp)" if is_share(result.metric) else ""
    return (
        f"Pairs of models across {result.n_datasets} data sets: wins/ties/losses of A, the mean difference A − B"
        f"{unit}, the Wilcoxon signed-rank p and its Holm adjustment over {len(result.pairs)} pairs (✓: significant "
        f"at α = {result.alpha:g}), and the Bayesian signed-rank posterior probabilities with a region of practical "
        f"equivalence of ±{rope_text(result).lstrip('±')}."
        + ("" if bayes_can_decide(result) else f" {no_bayes_verdict(result)}")
    )


def _control_caption(result: SuiteResult) -> str:
    unit = " (pp)" if is_share(result.metric) else ""
    return (
        f"Each model against the baseline {result.baseline} over {result.n_datasets} data sets: wins/ties/losses, the "
        f"mean difference{unit}, the Wilcoxon signed-rank test (Holm over {len(result.control)} comparisons), which "
        f"decides; then the difference of average ranks with Demšar's rank test (Holm over {len(result.control)}), "
        f"which does not (✓: significant at α = {result.alpha:g})."
    )


def _figure(result: SuiteResult, size: tuple[float | None, float | None] | None) -> Figure:
    from headtohead.report.plots_suite import critical_difference_figure

    styles = model_styles(result.models)

    def make() -> object:
        return critical_difference_figure(
            result.average_ranks, result.nemenyi_cd, result.cliques, styles, alpha=result.alpha, size=size
        )

    return Figure("critical-difference", CD_TITLE, cd_caption(result), make)


def cd_figure(result: SuiteResult, size: tuple[float | None, float | None] | None = None) -> Figure:
    """The CD diagram as a document figure (``size``: width and height in inches, else the default)."""
    return _figure(result, size)


def _grid(result: SuiteResult) -> Section:
    two = len(result.models) == 2
    marks = (
        "▲ / ▼: the data set's own paired test found this model significantly better / worse."
        if two
        else "▲x: this data set's own paired test found the model significantly better than x; ▼x: significantly "
        "worse than x."
    )
    note = (
        f"Each cell: the model's {result.metric} on the data set and its rank there (bold: the best). {marks} The "
        "data set's name opens its own report."
    )
    table = Table("scores", tuple(grid_columns(result)), tuple(grid_rows(result)), fit=True,
                  latex=_scores_caption(result) if result.average_ranks else None,
                  shared=(tuple(result.models),))  # fmt: skip
    return Section("datasets", "Per data set", (table, Paragraph(note, "note")))


def _pairs(result: SuiteResult) -> Section:
    note = (
        f"Wins count data sets (A first). Wilcoxon signed-rank on the differences over data sets (zero differences "
        f"split their ranks), exact up to 50 data sets; Holm over {len(result.pairs)} pair(s) (✓: significant at "
        f"α = {result.alpha:g}). Δ rank: A's average rank minus B's (✓: at least Nemenyi's critical difference). "
        f"Rank-biserial: (W+ − W−)/(W+ + W−). Bayesian signed-rank test with a region of practical equivalence of "
        f"{rope_text(result)}: the posterior probability that each region is the most probable."
    )
    table = Table("pairs", tuple(pair_columns(result)), tuple(pair_rows(result)), compact=True, fit=True,
                  latex=_pairs_caption(result))  # fmt: skip
    words = Fold("Every pair in words", (Lines(tuple(Line(pair_sentence(p, result)) for p in result.pairs)),))
    return Section("pairs", "Pairs across data sets", (table, Paragraph(note, "note"), words))


def _baseline(result: SuiteResult) -> Section:
    n = len(result.control)
    note = (
        f"Demšar's comparisons with a control: each other model against {result.baseline} only, so Holm adjusts over "
        f"{n} comparison(s), not over every pair. The Wilcoxon signed-rank test of the two models' scores decides "
        f"(✓: significant at α = {result.alpha:g}); the rank test, z = (R − R_baseline)/√(k(k+1)/(6N)) on the "
        f"average ranks, is shown beside it and decides nothing: it depends on the other models of the suite."
    )
    table = Table("baseline", tuple(control_columns(result)), tuple(control_rows(result)), compact=True, fit=True,
                  latex=_control_caption(result))  # fmt: skip
    return Section("baseline", f"Against the baseline {result.baseline}", (table, Paragraph(note, "note")))


def _seeds(result: SuiteResult) -> Section:
    note = (
        '"From seeds": the share of the variance that the training seed makes, against the test set\'s sampling '
        "variance (from the run's interval)."
    )
    table = Table("seeds", tuple(seed_columns(result)), tuple(seed_rows(result)), compact=True, fit=True)
    return Section(
        "seeds", "Seeds", (table, Paragraph(note, "note"), Lines(tuple(Line(s) for s in seed_sentences(result))))
    )


def _sections(result: SuiteResult, figure: Callable[[], list[Block]]) -> list[Section]:
    sections: list[Section] = []
    if result.warnings:
        sections.append(Section("warnings", "Read with care", (Lines(tuple(Line(w, kind="warning") for w in result.warnings), style="warnings"),),
                                tone="warnings", nav=False))  # fmt: skip
    scale = (Paragraph(scale_note(result), "note"),) if scale_note(result) else ()
    sections.append(Section("verdict", "Verdict", (Lines(tuple(Line(v) for v in result.verdict), style="headline"),
                                                   *scale), tone="verdict"))  # fmt: skip
    sections += [Section("critical-difference", CD_TITLE, tuple(figure()))] if result.average_ranks else []
    if result.average_ranks:
        note = (
            f'Rank 1 is the best {result.metric} on a data set; ties share the mean of their ranks. "Own tests" '
            "count the pairs each data set's own run found significant (McNemar on accuracy, Holm within the run)."
        )
        table = Table("ranks", tuple(rank_columns(result)), tuple(rank_rows(result)), fit=True)
        sections.append(Section("ranks", "Ranks", (table, Paragraph(note, "note"))))
    sections.append(_grid(result))
    if result.pairs:
        sections.append(_pairs(result))
    if result.control:
        sections.append(_baseline(result))
    if any(d.seeds is not None for d in result.datasets):
        sections.append(_seeds(result))
    return sections


def suite_document(result: SuiteResult) -> Document:
    """The suite's whole report (``suite.html``, ``suite.md``, ``suite.tex``); its CD diagram at the screen's size."""
    colours = {m: s.colour for m, s in model_styles(result.models).items()}
    sections = _sections(result, lambda: [_figure(result, None)])
    return Document(result.name, subtitle(result), tuple(sections), colours=colours)


def suite_terminal(result: SuiteResult) -> Document:
    """What ``h2h suite`` prints: the verdict, what to read with care, ranks, the baseline, the grid, the seeds."""
    keep = {"warnings", "verdict", "ranks", "baseline", "datasets", "seeds"}
    colours = {m: s.colour for m, s in model_styles(result.models).items()}
    sections = [s for s in _sections(result, lambda: []) if s.key in keep]
    return Document(result.name, subtitle(result), tuple(sections), colours=colours)


def suite_brief(result: SuiteResult, *, subtitle_text: str) -> Document:
    """A suite as a notebook shows it: the verdict, the rank table, every pair folded."""
    blocks: list[Block] = [Lines(tuple(Line(v) for v in result.verdict), style="headline")]
    blocks += [Paragraph(scale_note(result), "note")] if scale_note(result) else []
    if result.average_ranks:
        blocks.append(Table("ranks", tuple(rank_columns(result)), tuple(rank_rows(result))))
    blocks += [Paragraph(w, "note") for w in result.warnings]
    if result.pairs:
        blocks.append(
            Fold("Every pair across data sets", (Lines(tuple(Line(pair_sentence(p, result)) for p in result.pairs)),))
        )
    return Document(f"suite {result.name}", subtitle_text, (Section("suite", result.name, tuple(blocks)),))


def suite_csv_table(result: SuiteResult) -> Table:
    """``suite.csv``: one row per data set and model, numbers unrounded."""
    return Table("suite", tuple(csv_columns()), tuple(csv_rows(result)))
