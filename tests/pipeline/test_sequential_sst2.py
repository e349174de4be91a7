"""``--until-decided`` on SST-2 dev (872 sentences) with two real models: it decides with fewer examples
and reaches the full run's verdict (skipped where ../shared/data is absent)."""

from __future__ import annotations

import pytest
from sim.tfidf import save_tfidf_logreg

import headtohead

pytestmark = [pytest.mark.shared_data, pytest.mark.slow]


def test_strong_vs_weak_decides_early_with_the_full_runs_verdict(shared_data, tmp_path):
    train = shared_data / "sst2" / "train.tsv"
    experiment = {
        "name": "sst2-sequential",
        "seed": 42,
        "data": {"path": str(shared_data / "sst2" / "dev.tsv"), "label_column": "label"},
        "models": [
            {
                "name": "logreg-20k",
                "kind": "sklearn",
                "source": str(save_tfidf_logreg(train, 20_000, tmp_path / "strong.skops")),
            },
            {
                "name": "logreg-300",
                "kind": "sklearn",
                "source": str(save_tfidf_logreg(train, 300, tmp_path / "weak.skops")),
            },
        ],
        "eval": {"batch_size": 32, "device": "cpu", "chunk_size": 64},
        "stats": {"n_resamples": 500},
        "speed": {"enabled": False},
    }
    full = headtohead.run(experiment).result
    sequential = headtohead.run(experiment, overrides=["eval.until_decided=true"]).result
    accuracy = {m.name: m.accuracy.value for m in full.stats.models}
    assert accuracy["logreg-20k"] == pytest.approx(0.781, abs=0.01)
    assert accuracy["logreg-300"] == pytest.approx(0.640, abs=0.01)
    verdict = full.stats.comparisons[0]
    assert verdict.significant and verdict.winner == "logreg-20k" and verdict.n_examples == 872
    (record,) = sequential.stats.sequential
    assert record.decision == "a_better" and record.model_a == "logreg-20k"  # the same verdict …
    assert record.examples_used < 872 and record.examples_available == 872  # … from fewer examples
    assert sequential.stats.comparisons[0].n_examples == record.examples_used
