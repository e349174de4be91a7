"""Failures worded for what the model is and counted as they claim: predictions given to compare(), a prompted model's
passes, slices of one model (issue 40; a harness's log: tests/adapters/test_harness_logs.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import headtohead
from headtohead.report.rows.summary import summary_rows
from headtohead.report.rows.where import slices_note
from headtohead.report.sections.run.summary import summary_texts
from headtohead.report.words.warnings import model_warnings

N = 60


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "text": [f"text {i}" for i in range(N)],
            "label": rng.choice(["neg", "pos"], N),
            "topic": rng.choice(["x", "y"], N),
            "id": [f"e{i:02d}" for i in range(N)],
        }
    )


def _with_gaps(frame: pd.DataFrame, at: list[int]) -> list[str]:
    labels = list(frame.label)
    for i in at:
        labels[i] = ""  # no prediction
    return labels


def test_predictions_given_to_compare_are_named_as_such_and_their_failures_by_id(frame):
    outcome = headtohead.compare(
        {"m": _with_gaps(frame, [3, 7, 41])}, frame, id_column="id", slice_columns=["topic"], stats={"n_resamples": 200}
    )
    (said,) = model_warnings(outcome.result.model("m"))
    assert "gave no prediction for 3 of 60 examples" in said and "predictions given to compare()" in said
    named = said.split("ids ")[1].split(":")[0]  # by the data's own ids, not by dataset rows
    assert sorted(named.split(", ")) == ["e03", "e07", "e41"]
    assert "prediction file" not in said and "dataset rows" not in said and "fp16" not in said
    # one model: its slices have no pair and no test to adjust, and say nothing of 0 tests
    note = slices_note(outcome.result)
    assert note.startswith("Accuracy per slice with 95 % Wilson intervals") and "no pair is compared" in note
    assert "0 (slice, pair) tests" not in note and "Holm" not in note


def test_a_prompted_models_examples_without_a_prediction_are_summed_over_its_prompts(frame):
    gaps = [[3], [7, 9], [3, 11]]  # 5 over 3 prompts: their mean, 1.67, is no count of examples
    outcome = headtohead.compare(
        {"llm": [_with_gaps(frame, at) for at in gaps], "base": list(frame.label)},
        frame,
        id_column="id",
        stats={"n_resamples": 200},
    )
    cell = summary_rows(outcome.result)["llm"]["n_failed"]
    assert cell.value == 5 and cell.suffix == "sum over 3 prompts"
    assert summary_texts(outcome.result)["llm"]["n_failed"] == "5 (sum over 3 prompts)"
    assert summary_rows(outcome.result)["llm"]["accuracy"].suffix == "mean of 3 prompts"
