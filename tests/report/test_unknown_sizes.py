"""A size headtohead cannot read (a callable, a naive Bayes) is unknown — None in the records, "unknown" in reports."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB

import headtohead
from headtohead.report.html import render_html
from headtohead.report.markdown import render_markdown
from headtohead.report.rows.summary import format_cell, summary_columns, summary_rows
from headtohead.report.table import quality_table

X, Y = load_iris(return_X_y=True)


@pytest.fixture(scope="module")
def outcome():
    bayes = GaussianNB().fit(X[::2], Y[::2])
    linear = LogisticRegression(max_iter=500).fit(X[::2], Y[::2])
    return headtohead.compare(
        {"bayes": bayes, "linear": linear, "rule": lambda rows: np.asarray(rows)[:, :3]},
        (X, Y),
        stats={"n_resamples": 100},
    )


def test_the_records_say_none_where_the_size_is_unknown(outcome):
    result = outcome.result
    assert result.model("bayes").num_parameters is None and result.model("bayes").parameter_bytes is None
    assert result.model("rule").num_parameters is None
    assert result.model("linear").num_parameters == 3 * 4 + 3  # coef_ and intercept_: known
    assert result.model("linear").parameter_bytes == 15 * 8


def test_every_report_shows_unknown_never_zero(outcome):
    result = outcome.result
    column = next(c for c in summary_columns(result) if c.key == "parameters")
    rows = summary_rows(result)
    assert [format_cell(rows[m][column.key], column) for m in ("bayes", "linear", "rule")] == [
        "unknown",
        "15",
        "unknown",
    ]
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(quality_table(result))
    lines = {line.split()[1]: line for line in console.export_text().splitlines() if line.startswith("│ ")}
    assert "unknown" in lines["bayes"] and "unknown" in lines["rule"] and "unknown" not in lines["linear"]
    html = render_html(result)
    assert html.count(">unknown<") >= 4  # the summary table and the models table, two models each
    markdown, _ = render_markdown(result)
    assert "| parameters | unknown | 15 | unknown |" in markdown


def test_weights_cell_unknown_measured_or_not():
    from types import SimpleNamespace

    from headtohead.report.words.numbers import weights_text

    def mib(value):
        return f"{value:.1f}"

    assert weights_text(SimpleNamespace(weights_mb=None), mib) == "unknown"  # memory measured, size unreadable
    assert weights_text(SimpleNamespace(weights_mb=2.5), mib) == "2.5"
    assert weights_text(None, mib, missing="—") == "—"  # memory not measured
