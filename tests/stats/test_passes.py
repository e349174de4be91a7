"""A model's passes pooled by one rule per factor (stats.passes): every number as it was before passes existed.

``fixtures/prompted_summary_before_passes.json`` is the whole ``StatsSummary`` headtohead computed
(``main`` at 3c8f585: ``analyse(prompted=…)`` then ``with_pooled_family``) for a model asked with five
prompts, an encoder and a third model, without and with groups of examples, when each prompt was a
model ``llm@p1`` … . The same predictions, now one model with a passes axis, give the same numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sim.prompts import FIXED_OFFSETS, prompt_correctness, prompted_predictions

from headtohead.errors import ResultsError
from headtohead.results.predictions import Predictions
from headtohead.stats import analyse
from headtohead.stats.passes import RULES, pooled_over_passes

BEFORE = json.loads((Path(__file__).parent / "fixtures" / "prompted_summary_before_passes.json").read_text())


def _predictions() -> Predictions:
    rng = np.random.default_rng(11)
    a, b = prompt_correctness(rng, 120, np.array(FIXED_OFFSETS), gap=0.05)
    predictions = prompted_predictions(a, b)
    predictions.add("other", (rng.random(120) < 0.6).astype(np.int64), None)
    return predictions


@pytest.mark.parametrize("grouped", [False, True])
def test_every_statistic_of_a_model_with_passes_is_what_it_was_as_pseudo_models(grouped):
    predictions = _predictions()
    if grouped:
        predictions.groups = np.array([f"g{i // 3}" for i in range(120)], dtype=object)
        predictions.group_column = "user"
    summary = analyse(predictions, n_resamples=200, seed=3).model_dump(mode="json")
    for comparison in summary["comparisons"]:  # a field added after the fixture: a test's p-value (ROC AUC's)
        for diff in comparison["differences"]:
            assert diff.pop("p_value") is None
    before = BEFORE["groups" if grouped else "plain"]
    for comparison in summary["comparisons"]:  # fields added since the fixture was made (issue 41)
        fragility, differ = comparison.pop("fragility"), comparison.pop("answers_differ")
        assert (fragility is not None) == (comparison["significant"] and not grouped) and (differ is None) == (
            fragility is None
        )
    for found in (summary["slices"] or {}).get("slices", []):  # added since the fixture: comparisons over runs
        assert found.pop("repeat_pairs") == []  # none here: no model was run several times
    for field in ("settings", "comparisons", "ranking", "slices", "disagreements", "sequential"):
        assert summary[field] == before[field], field
    # the prompts' records: the same numbers; a pass is described by the run's records (here: "prompt k")
    words = [p.pop("prompt") for f in summary["prompts"]["families"] for p in f["prompts"]]
    assert words == [f"prompt {k}" for k in range(1, 6)]
    for family in before["prompts"]["families"]:
        for p in family["prompts"]:
            del p["prompt"]
    assert summary["prompts"] == before["prompts"]
    # each pass's own statistics, within its model's; the model's own figures the means over them
    (llm, encoder, other) = summary["models"]
    assert [p["name"] for p in llm["passes"]] == [f"llm@p{k}" for k in range(1, 6)]
    assert [{**p, "passes": None} for p in llm["passes"]] == [{**m, "passes": None} for m in before["models"][:5]]
    assert [encoder, other] == [{**m, "passes": []} for m in before["models"][5:]]
    means = {k: float(np.mean([p[k]["value"] for p in llm["passes"]])) for k in ("accuracy", "f1_macro")}
    assert {k: llm[k]["value"] for k in means} == pytest.approx(means)
    assert llm["accuracy"]["low"] is None and llm["accuracy"]["method"] == "mean over passes"


def test_each_factor_has_one_rule_and_a_factor_without_one_is_refused():
    assert list(RULES) == ["prompt", "repeat"]  # the order they are joined in (repeat's join is the last)
    predictions = _predictions()
    summary = analyse(predictions, n_resamples=100)
    held = predictions["llm"]
    predictions.models["llm"] = type(held)(held.pred, held.proba, held.passes, "seed")
    with pytest.raises(ResultsError, match="factor 'seed', which no rule pools"):
        pooled_over_passes(predictions, summary, 0.05)
