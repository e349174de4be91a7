"""One report document, drawn by each format: the same numbers written the same way everywhere.

Every outcome is built once into typed sections; the terminal, HTML, Markdown, CSV and LaTeX draw
it. These tests hold the promises that follow: one p-value rule and one minus sign in every format
and outcome, a column written with one set of decimals, a terminal that never cuts a number, user
strings escaped in every Markdown document, and a run's detail sections found without a list.
"""

from __future__ import annotations

import html
import io
import re

import pandas as pd
import pytest
from sim.sample import sample_run

import headtohead
from headtohead.report.document import Cell, Column, Row, Table
from headtohead.report.formats.markdown import md_escape, render_markdown
from headtohead.report.formats.terminal import render_text
from headtohead.report.sections.run import detail_sections, run_document, run_views, terminal_document
from headtohead.report.words.numbers import MINUS, column_texts, format_p, p_text
from headtohead.report.write import render_html, render_suite_markdown


@pytest.fixture(scope="module")
def run():
    return sample_run({"bert": 0.84, "roberta": 0.88, "distil": 0.80}, n_examples=400, n_resamples=200)


def _pairs_texts(document) -> list[dict[str, str]]:  # noqa: ANN001
    table = next(t for t in document.tables() if t.key == "pairs")
    return [{c.key: t.plain() for c, t in zip(table.columns, row, strict=True)} for row in table.texts()]


def test_a_runs_p_values_and_intervals_read_the_same_in_terminal_markdown_and_html(run):
    result, predictions = run
    document = run_document(result, predictions=predictions)
    rows = _pairs_texts(document)
    terminal = render_text(document, width=400)
    markdown, _ = render_markdown(document)
    page = html.unescape(render_html(result, predictions=predictions))
    for row in rows:
        pair, accuracy, p, holm = row["pair"], row["accuracy_difference"], row["mcnemar_p"], row["holm_p"]
        assert p == p_text(result.stats.comparison(*pair.split(" − ")).p_value)
        for shown in (terminal, markdown, page):
            line = next(line for line in shown.splitlines() if pair.replace("−", MINUS) in line and accuracy in line)
            assert p in line and holm in line, (pair, line)


def test_one_p_value_rule_for_runs_suites_the_gate_and_papers():
    # 0.046875 is Wilcoxon's exact p for 5 data sets won 4 to 1; rounded to two decimals it would read 0.05
    assert p_text(0.046875) == "0.047" and format_p(0.046875) == "= 0.047"
    table = pd.DataFrame({"dataset": list("abcde"), "x": [0.9, 0.8, 0.85, 0.7, 0.6], "y": [0.8, 0.7, 0.8, 0.65, 0.62]})
    result = headtohead.suite(scores=table, metric="accuracy").result
    pair = result.pairs[0]
    expected = p_text(pair.wilcoxon_p)
    assert f"Wilcoxon signed-rank p = {expected}" in " ".join(result.verdict)
    markdown, _ = render_suite_markdown(result)
    assert f"| {expected} |" in markdown  # the pairs table: the same rule as the sentence


def test_one_minus_sign_and_no_negative_zero_or_exponent():
    cells = [Cell(-0.003), Cell(-2.78e-17), Cell(0.012)]
    assert [t.plain() for t in column_texts("pp", cells)] == [f"{MINUS}0.3", "0.0", "+1.2"]
    assert [t.plain() for t in column_texts("signed_number", [Cell(-2.78e-17), Cell(-0.5)])] == [
        "0.0000",
        f"{MINUS}0.5000",
    ]
    table = pd.DataFrame({"dataset": list("abcdef"), "x": [0.5] * 6, "y": [0.5] * 6, "z": [0.4] * 6})
    result = headtohead.suite(scores=table, metric="accuracy").result
    markdown, _ = render_suite_markdown(result)
    assert "e-1" not in markdown and "−0.0 " not in markdown and not re.search(r"(?<![\w-])-\d", markdown)


def test_a_column_keeps_its_decimals_and_ranked_scores_never_read_alike():
    assert [t.plain() for t in column_texts("number", [Cell(0.59), Cell(1.0), Cell(0.8481)])] == [
        "0.590",
        "1.000",
        "0.848",
    ]
    # two scores ranked 2 and 3 on one data set print apart, and the whole group keeps one set of decimals
    columns = (Column("dataset", "data set"), Column("a", "a", "percent"), Column("b", "b", "percent"))
    rows = (
        Row({"dataset": Cell("x"), "a": Cell(0.97502, suffix="2"), "b": Cell(0.97498, suffix="3")}),
        Row({"dataset": Cell("y"), "a": Cell(0.91, suffix="1"), "b": Cell(0.88, suffix="2")}),
    )
    texts = [[t.plain() for t in row[1:]] for row in Table("t", columns, rows, shared=(("a", "b"),)).texts()]
    assert texts == [["97.502 % (2)", "97.498 % (3)"], ["91.000 % (1)", "88.000 % (2)"]]


def test_the_terminal_never_cuts_a_number_on_80_columns(run):
    result, _ = run
    text = render_text(terminal_document(result), width=80)
    assert "…" not in "".join(line for line in text.splitlines() if line.startswith(("│", "┃")))
    assert max(len(line) for line in text.splitlines() if line.startswith(("┏", "│", "└"))) <= 80
    for line in text.splitlines():
        if line.startswith(("┏", "┡", "└")):
            assert line.endswith(("┓", "┩", "┘")), line  # every table drawn whole, none cut at the edge
    summary = text.split("Speed and memory")[0]
    assert all(f"{100 * result.stats.model(m).accuracy.value:.1f} %" in summary for m in ("bert", "roberta", "distil"))
    if "Not shown at this width:" in text:  # what does not fit is named, not cut
        assert "widen the terminal" in text


def test_a_runs_markdown_escapes_user_strings():
    evil = "<b>x</b> *y* [z](w)"
    result, _ = sample_run({evil: 0.8, "plain": 0.7}, n_examples=200, n_resamples=100, speed=False)
    markdown, _ = render_markdown(run_document(result))
    markdown = re.sub(r"^(`{3,})text\n.*?^\1$", "", markdown, flags=re.M | re.S)  # the experiment as run: verbatim
    assert "<b>" not in markdown and md_escape(evil) in markdown


def test_a_runs_detail_sections_are_the_modules_of_the_package_in_their_order(run):
    result, predictions = run
    from headtohead.report.merge import as_merged

    view = run_views(as_merged(result, predictions=predictions))[0]
    titles = [b.title for b in detail_sections(view) if hasattr(b, "title")]
    assert titles.index("Paired comparisons") < titles.index("Where the models differ: slices")
    assert titles.index("Where the models differ: slices") < titles.index("Speed and memory")
    document = run_document(result, predictions=predictions)
    assert [s.key for s in document.sections] == ["verdict", "summary", "overview", "run1", "environment"]


def test_csv_writes_the_summary_table_unrounded(run):
    result, _ = run
    from headtohead.report.write import render_csv

    table = pd.read_csv(io.StringIO(render_csv(result)))
    row = table.set_index("model").loc["roberta"]
    est = result.stats.model("roberta").accuracy
    assert row["accuracy"] == pytest.approx(result.model("roberta").quality.accuracy)
    assert row["accuracy_ci_low"] == pytest.approx(est.low) and row["accuracy_ci_high"] == pytest.approx(est.high)
