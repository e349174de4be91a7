"""A size headtohead cannot read (a callable, a naive Bayes) is unknown — None in the records, "unknown" in reports."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB

import headtohead
from headtohead.report.formats.terminal import render_text
from headtohead.report.sections.run import terminal_document
from headtohead.report.sections.run.summary import summary_texts
from headtohead.report.write import render_html, render_markdown

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
    texts = summary_texts(result)
    assert [texts[m]["parameters"] for m in ("bayes", "linear", "rule")] == ["unknown", "15", "unknown"]
    text = render_text(terminal_document(result), width=200)
    (parameters,) = [line for line in text.splitlines() if line.startswith("│ parameters")]
    assert [c.strip() for c in parameters.split("│")[2:5]] == ["unknown", "15", "unknown"]
    html = render_html(result)
    assert html.count(">unknown<") >= 4  # the summary table and the models table, two models each
    markdown, _ = render_markdown(result)
    assert "| parameters | unknown | 15 | unknown |" in markdown


def test_weights_cell_unknown_measured_or_not():
    from types import SimpleNamespace

    from headtohead.report.words.numbers import weights_text

    assert weights_text(SimpleNamespace(weights_mb=None)) == "unknown"  # memory measured, size unreadable
    assert weights_text(SimpleNamespace(weights_mb=2.5)) == "2.5"
    assert weights_text(None, missing="—") == "—"  # memory not measured
