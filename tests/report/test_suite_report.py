"""The suite's words and files: escaped everywhere, the CD diagram inline, the grid's marks from each run's own tests."""

from __future__ import annotations

import csv
import io

import pandas as pd
import pytest
from sim.sample import sample_run

import headtohead
from headtohead.report.document import Table
from headtohead.report.notebook import suite_html, suite_text
from headtohead.report.rows.suite import grid_columns, grid_rows
from headtohead.report.words.suite import aso_meaning, pair_sentence, suite_verdict
from headtohead.report.write import render_suite_csv, render_suite_html, render_suite_markdown
from headtohead.results import save_result

EVIL = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def hostile():
    table = pd.DataFrame(
        {
            "dataset": ["<script>alert(1)</script>", "=cmd|' /C calc'!A0", "c", "d", "e", "f"],
            EVIL: [0.9, 0.8, 0.7, 0.95, 0.6, 0.85],
            "b|*x*": [0.85, 0.79, 0.72, 0.9, 0.55, 0.8],
            "c": [0.5, 0.6, 0.5, 0.7, 0.4, 0.6],
        }
    )
    return headtohead.suite(scores=table, metric="accuracy", rope=0.01).result


def test_html_escapes_every_user_string_and_inlines_the_diagram(hostile):
    page = render_suite_html(hostile)
    assert EVIL not in page and "<script>alert" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert page.count('src="data:image/svg+xml;base64,') == 1 and "<script" not in page.replace("&lt;script", "")
    assert "Content-Security-Policy" in page and "Critical-difference diagram" in page
    for line in hostile.verdict[:1]:
        assert line.split(":")[0].replace("<", "&lt;") in page


def test_markdown_and_notebook_escape_and_csv_defuses_formulas(hostile):
    markdown, images = render_suite_markdown(hostile)
    assert list(images) == ["critical-difference.png"]
    assert EVIL not in markdown and "b\\|\\*x\\*" in markdown
    assert "![Critical-difference diagram](suite_files/critical-difference.png)" in markdown
    rows = list(csv.DictReader(io.StringIO(render_suite_csv(hostile))))
    assert len(rows) == 6 * 3 and {r["dataset"] for r in rows} >= {"'=cmd|' /C calc'!A0"}
    assert float(rows[0]["score"]) == 0.9 and rows[0]["rank"] == "1.0"
    html = suite_html(hostile, out_dir="runs/x")
    assert EVIL not in html and "average rank" in html and "saved in runs/x" in html
    assert suite_text(hostile).startswith("SuiteOutcome 'scores' — 3 models")


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory):
    """Three runs of three models whose accuracies differ clearly: each run's own tests are significant."""
    root = tmp_path_factory.mktemp("runs")
    paths = []
    for i, name in enumerate(["sst2", "snips", "agnews"]):
        result, _ = sample_run(
            {"small": 0.70, "base": 0.80, "large": 0.90},
            n_examples=600,
            seed=i,
            speed=False,
            n_resamples=100,
            name=name,
        )
        (root / name).mkdir()
        save_result(result, root / name / "results.json")
        paths.append(root / name / "results.json")
    return headtohead.suite(paths, out_dir=root).result


def test_the_grid_marks_where_each_data_sets_own_test_was_significant(three_runs):
    table = Table(
        "grid", tuple(grid_columns(three_runs)), tuple(grid_rows(three_runs)), shared=(tuple(three_runs.models),)
    )
    texts = {
        str(row.get("dataset").value): {c.key: t for c, t in zip(table.columns, row_texts, strict=True)}
        for row, row_texts in zip(table.rows, table.texts(), strict=True)
    }
    cells = texts["sst2"]
    assert cells["large"].aside == "▲small, base" and cells["small"].aside == "▼base, large"
    assert cells["large"].plain().startswith(f"{100 * three_runs.dataset('sst2').scores['large']:.1f} % (1)")
    assert "large > base (p < 0.001)" in texts["snips"]["own"].text
    assert table.rows[0].get("dataset").link is None  # no report.html
    assert three_runs.dataset("sst2").results == "sst2/results.json"


def test_sentences_name_tests_and_probabilities(three_runs):
    pair = three_runs.pair("small", "large")
    sentence = pair_sentence(pair, three_runs)
    assert sentence.startswith("small vs large: small better on 0 of 3 data sets, large on 3")
    assert "Wilcoxon signed-rank p = 0.25 (exact)" in sentence and "P(large better)" in sentence
    verdict = suite_verdict(three_runs)
    assert verdict[0].startswith("3 data sets, 3 models, accuracy (higher is better): average rank large 1.00")
    assert "No pair differs significantly after Holm's adjustment over 3 pairs" in " ".join(verdict)
    assert any("2/2^3 = 0.25" in w for w in three_runs.warnings)


def test_aso_words():
    assert aso_meaning(0.1, "a", "b") == "a is almost stochastically better than b (ε_min < 0.2)"
    assert aso_meaning(0.7, "a", "b").startswith("neither is shown")


def test_two_data_sets_give_no_bayesian_verdict_and_say_why():
    """With 2 data sets any two gaps beyond twice the ROPE give P(better) = 0.964: no verdict, in words; 6 do."""
    from headtohead.report.words.suite import suite_warnings

    two = headtohead.suite(
        scores=pd.DataFrame({"dataset": ["d1", "d2"], "a": [0.80, 0.70], "b": [0.83, 0.75]}), metric="accuracy"
    ).result
    (pair,) = two.pairs
    assert pair.p_b_better == pytest.approx(0.964, abs=0.005)  # what the posterior says of any two such gaps
    said = " ".join(two.verdict)
    assert "Practically better" not in said and "no verdict with 2 data sets" in said
    assert "No Bayesian verdict with 2 data sets: below 4," in said and "0.964 whatever the gaps" in said
    (warning,) = suite_warnings(two)
    assert "read the Bayesian probabilities" not in warning and "below 4 the Bayesian signed-rank test" in warning
    six = headtohead.suite(
        scores=pd.DataFrame(
            {
                "dataset": [f"d{i}" for i in range(6)],
                "a": [0.80, 0.70, 0.6, 0.9, 0.5, 0.75],
                "b": [0.85, 0.76, 0.65, 0.95, 0.58, 0.8],
            }
        ),
        metric="accuracy",
    ).result
    assert "Practically better (Bayesian signed-rank, ROPE ±1.0 pp, P ≥ 0.95): b than a" in " ".join(six.verdict)
    assert "No Bayesian verdict" not in " ".join(six.verdict)
