"""What a notebook shows: ``Run``, ``GateOutcome``, ``SweepRun`` and ``TrainOutcome`` as HTML (the verdict and the
summary, the report's words, escaped) and as a short text.

A notebook asks an object for its MIME bundle through IPython's display formatter; these tests ask
the same formatter, so ``text/html`` is exactly what a Jupyter cell shows.
"""

from __future__ import annotations

import re

import markupsafe
import numpy as np
import pandas as pd
import pytest
from sim.sample import sample_run, sample_training

import headtohead
from headtohead.pipeline.run import Run
from headtohead.pipeline.training import TrainOutcome
from headtohead.report.notebook import training_html, training_text
from headtohead.report.sections.run.summary import summary_notes
from headtohead.report.words.gate import decision_explanation
from headtohead.report.words.verdict import build_verdict

EVIL = "<script>alert(1)</script>"


def mime_bundle(obj: object) -> dict[str, str]:
    """What Jupyter gets for ``obj`` as the last line of a cell."""
    formatters = pytest.importorskip("IPython.core.formatters", reason="IPython (the dev extra) shows notebooks")
    data, _ = formatters.DisplayFormatter().format(obj)
    return data


def escaped(text: str) -> str:
    """As the report's templates escape a string (quotes too)."""
    return str(markupsafe.escape(text))


@pytest.fixture(scope="module")
def outcome(tmp_path_factory):
    """A comparison in memory with a model and a label whose names are markup."""
    out = tmp_path_factory.mktemp("notebook")
    frame = pd.DataFrame(
        {
            "text": ["good film", "bad film", "fine plot", "awful plot", "good plot", "bad acting"] * 30,
            "label": ["pos", EVIL, "pos", EVIL, "pos", EVIL] * 30,
        }
    )

    def rule(texts):
        return [[("bad" in t) + ("awful" in t), ("good" in t) + ("fine" in t)] for t in texts]

    guesses = np.where(np.arange(180) % 4 == 0, EVIL, "pos").tolist()
    return headtohead.compare(
        {"rule " + EVIL: rule, "guess": guesses},
        frame,
        label_names=[EVIL, "pos"],
        stats={"n_resamples": 200},
        out_dir=out,
    )


def test_a_run_shows_its_verdict_and_summary_table_in_a_notebook(outcome):
    bundle = mime_bundle(outcome)
    page = bundle["text/html"]
    for line in build_verdict(outcome.result).headline:  # the report's headline, word for word
        assert escaped(line.text) in page
    for note in summary_notes(outcome.result):
        assert escaped(note) in page
    assert "accuracy ↑" in page and "macro-F1 ↑" in page and "parameters" in page
    assert escaped("rule " + EVIL) in page and escaped(str(outcome.out_dir)) in page
    assert not re.search(r"<script", page, re.IGNORECASE)  # every user string is text, and nothing runs
    assert page.count("<table") == 1  # the summary: one row per metric, one column per model
    text = bundle["text/plain"]
    assert text == repr(outcome)
    lines = text.splitlines()
    assert lines[0] == f"Run 'compare' — 2 models: rule {EVIL}, guess · 180 examples · saved in {outcome.out_dir}"
    assert 2 <= len(lines) <= 6 and lines[1].startswith("  rule " + EVIL + ": ")
    assert len(text) < 2000  # not a dump of the record


def test_a_gate_shows_its_decision_and_each_check(outcome):
    gate = headtohead.gate(
        outcome.out_dir / "results.json", baseline="rule " + EVIL, candidate="guess", max_accuracy_drop="1pp"
    )
    page = mime_bundle(gate)["text/html"]
    assert gate.exit_code == 1 and "FAIL: guess is worse than" in page
    for decision in gate.decisions:
        assert escaped(decision_explanation(decision)) in page
    assert not re.search(r"<script", page, re.IGNORECASE)
    lines = repr(gate).splitlines()
    assert lines[0] == f"GateOutcome guess vs rule {EVIL}: exit code 1"
    assert lines[1].startswith("  FAIL: guess is worse than") and lines[2] == "  accuracy: fail"


def test_a_training_comparison_shows_the_verdict_and_the_training_table():
    result, predictions = sample_run({"bert": 0.84, "roberta": 0.92}, n_examples=400, n_resamples=200, speed=False)
    training = sample_training({"bert": 0.84, "roberta": 0.92}, seeds=(0, 1, 2))
    trained = TrainOutcome(training=training, run=Run(result, predictions, None), out_dir="runs/x", experiment={})
    page = mime_bundle(trained)["text/html"]
    for line in build_verdict(result, training).headline:
        assert escaped(line.text) in page
    assert "Training (identical order and settings)" in page and "s per epoch" in page
    assert page == training_html(training, result, out_dir="runs/x")
    text = repr(trained)
    assert text == training_text(training, result, out_dir="runs/x")
    assert text.startswith(f"TrainOutcome '{result.name}' — 2 models: bert, roberta × 3 seed(s) · saved in runs/x")
    assert "Training (identical" in training_html(training, None)  # a worker of a torchrun launch: no evaluation
