"""The front's section: its sentences, table and charts in the terminal and in HTML (user text escaped)."""

from __future__ import annotations

import pytest
from sim.sample import sample_run

from headtohead.config.schema import Experiment
from headtohead.pipeline.decision import run_decision
from headtohead.report.formats.html import render_html
from headtohead.report.formats.terminal import render_text
from headtohead.report.plots import model_styles
from headtohead.report.plots_front import front_figure
from headtohead.report.sections.run import run_document

NAMES = {"small": (0.90, 100.0), "<b>large</b>": (0.85, 300.0), "big": (0.93, 600.0)}


@pytest.fixture(scope="module")
def decided():
    result, predictions = sample_run(
        {m: a for m, (a, _) in NAMES.items()}, n_examples=1000, latency_us={m: t for m, (_, t) in NAMES.items()}
    )
    exp = Experiment.model_validate(
        {
            "data": {"path": "sample.tsv"},
            "models": [{"name": m, "kind": "python", "source": "sample:model"} for m in NAMES],
            "speed": {"scenarios": ["offline"], "price_per_hour": 2.0},
            "decide": {"resamples": 200},
        }
    )
    return result.model_copy(update={"decision": run_decision(exp, result, predictions)})


def test_the_section_says_who_dominates_and_shows_every_model(decided):
    decision = decided.decision
    assert decision.axes == ["quality", "latency"]  # the sample's speed has no cost records: cost not measured
    assert decision.not_measured == {"cost": list(NAMES)}
    text = render_text(run_document(decided), 200)
    assert "Quality, speed and cost together" in text
    for line in decision.sentences + [p.sentence for p in decision.pairs if p.dominates]:
        assert line.split(":")[0] in text
    assert "P(on the front)" in text and "not measured" in text


def test_the_html_draws_the_front_and_escapes_names(decided):
    html = render_html(run_document(decided))
    assert "Accuracy vs latency: the front" in html
    assert "<b>large</b>" not in html and "&lt;b&gt;large&lt;/b&gt;" in html


def test_front_figure_greys_the_dominated_and_joins_the_front(decided):
    figure = front_figure(decided.decision, "latency", model_styles(list(NAMES)))
    assert figure is not None and front_figure(decided.decision, "cost", model_styles(list(NAMES))) is None
    ax = figure.axes[0]
    assert ax.get_xlabel().startswith("latency per prediction (ms")
    assert [line.get_label() for line in ax.get_lines() if line.get_label() == "front"] == ["front"]


def test_h2h_runs_verdict_says_who_dominates_and_the_front(decided):
    from headtohead.report.sections.run import terminal_document

    text = render_text(terminal_document(decided), 200)
    verdict = text[text.index("Verdict") :]
    assert "small dominates <b>large</b>" in verdict and "On the front: small" in verdict
