"""``data.group_column``: related examples (one user's) are one unit in every test, interval, the gate and
``--until-decided``; the groups travel with the predictions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import headtohead
from headtohead.testing import known
from headtohead.testing.data import write_text_table

LABELS = ("negative", "positive")


def _grouped_frame(users: int = 30, per_user: int = 12, seed: int = 0) -> tuple[pd.DataFrame, list, list]:
    """Two models equally good on average: each is much better for half of the users."""
    rng = np.random.default_rng(seed)
    n = users * per_user
    user = np.repeat([f"u{i}" for i in range(users)], per_user)
    y = rng.integers(0, 2, n)
    favours_a = np.repeat(np.arange(users) % 2 == 0, per_user)
    a_right = rng.random(n) < np.where(favours_a, 0.95, 0.6)
    b_right = rng.random(n) < np.where(favours_a, 0.6, 0.95)
    frame = pd.DataFrame({"text": [f"example {i}" for i in range(n)], "label": [LABELS[k] for k in y], "user": user})
    return (
        frame,
        [LABELS[k if ok else 1 - k] for k, ok in zip(y, a_right)],
        [LABELS[k if ok else 1 - k] for k, ok in zip(y, b_right)],
    )


def test_compare_with_groups_treats_a_user_as_the_unit(tmp_path):
    frame, a, b = _grouped_frame()
    plain = headtohead.compare({"a": a, "b": b}, frame, stats={"n_resamples": 200})
    grouped = headtohead.compare(
        {"a": a, "b": b}, frame, group_column="user", out_dir=tmp_path / "out", stats={"n_resamples": 200}
    )
    settings = grouped.result.stats.settings
    assert settings.group_column == "user" and settings.n_groups == 30 and plain.result.stats.settings.n_groups is None
    (pair,), (plain_pair,) = grouped.result.stats.comparisons, plain.result.stats.comparisons
    assert pair.test == "mcnemar-clustered" and plain_pair.test == "mcnemar-score"
    assert pair.p_value >= plain_pair.p_value and pair.table == plain_pair.table
    accuracy = pair.difference("accuracy")
    assert accuracy.method == "tango-score+clusters"
    assert (
        accuracy.ci_high - accuracy.ci_low
        >= plain_pair.difference("accuracy").ci_high - plain_pair.difference("accuracy").ci_low
    )
    assert grouped.result.stats.model("a").accuracy.method == "wilson+clusters"
    assert pair.difference("f1_macro").method.startswith("cluster-")
    assert "over 30 groups" in pair.verdict
    assert all(p.test == "mcnemar-clustered" for s in grouped.result.stats.slices.slices for p in s.pairs)
    # the groups are saved with the predictions, so the gate accounts for them too
    saved = headtohead.load_predictions(tmp_path / "out")
    assert saved.group_column == "user" and len(set(saved.groups)) == 30
    gate = headtohead.gate(tmp_path / "out" / "results.json", baseline="a", candidate="b", max_accuracy_drop="5pp")
    assert gate.decisions[0].groups == 30 and "in 30 groups" in gate.paragraph


def test_one_group_for_every_example_is_refused_in_one_line():
    frame, a, b = _grouped_frame(users=1)
    with pytest.raises(headtohead.errors.ConfigError, match="one group"):
        headtohead.compare({"a": a, "b": b}, frame, group_column="user", stats={"n_resamples": 200})


def test_until_decided_evaluates_whole_groups_in_a_random_order(tmp_path):
    rows = known.known_accuracy_rows(400, seed=5)
    for i, row in enumerate(rows):
        row["user"] = f"user{i // 7}"  # groups of 7 (the last one smaller)
    data = write_text_table(tmp_path / "dev.csv", rows)
    model = {"kind": "python", "source": "headtohead.testing.known:known_accuracy", "outputs": "probabilities"}
    exp = {
        "name": "grouped-seq",
        "seed": 3,
        "data": {"path": str(data), "group_column": "user"},
        "models": [
            {**model, "name": "strong", "model_args": {"accuracy": 0.97, "seed": 1}},
            {**model, "name": "weak", "model_args": {"accuracy": 0.55, "seed": 2}},
        ],
        "eval": {"batch_size": 8, "device": "cpu", "until_decided": True, "chunk_size": 32},
        "stats": {"n_resamples": 200},
        "speed": {"enabled": False},
    }
    outcome = headtohead.run(exp, out_dir=tmp_path / "out")
    (record,) = outcome.result.stats.sequential
    assert record.decision == "a_better" and record.groups_used is not None
    assert "whole groups" in record.method and record.examples_used < 400
    users = outcome.predictions.groups
    used = list(dict.fromkeys(users.tolist()))  # the groups in the order they were evaluated
    assert len(used) == record.groups_used
    # every group evaluated whole, in one chunk (inside a chunk, texts of similar length share a batch)
    chunk_of_row = np.searchsorted([s.n for s in record.steps], np.arange(len(users)), side="right")
    assert all(len(set(chunk_of_row[users == g])) == 1 for g in used)
    assert all(s.n >= 32 * (i + 1) for i, s in enumerate(record.steps))  # chunks end at a group boundary at/after 32
    assert used != sorted(used, key=lambda g: int(g.split("user")[1]))  # a random order of groups
    comparison = outcome.result.stats.comparisons[0]
    assert comparison.stopped_early and comparison.winner == "strong" and "McNemar" not in comparison.verdict


def test_a_report_of_a_model_with_failures_and_groups_renders(tmp_path):
    frame, a, _ = _grouped_frame(users=12, per_user=10)
    truth = dict(zip(frame["text"], frame["label"]))

    def flaky(texts):  # right on most, NaN on every seventh example
        rows = [[0.9, 0.1] if truth[t] == "negative" else [0.1, 0.9] for t in texts]
        return np.array([[np.nan, np.nan] if int(t.split()[1]) % 7 == 0 else r for t, r in zip(texts, rows)])

    outcome = headtohead.compare(
        {"a": a, "flaky": flaky},
        frame,
        group_column="user",
        outputs={"flaky": "probabilities"},
        out_dir=tmp_path / "out",
        report=True,
        stats={"n_resamples": 200},
    )
    quality = outcome.result.model("flaky").quality
    assert quality.n_failed == len([t for t in frame["text"] if int(t.split()[1]) % 7 == 0])
    assert quality.confusion_labels[-1] == "(no prediction)" and len(quality.confusion_matrix) == 3
    html = (tmp_path / "out" / "report.html").read_text()
    assert "no prediction (counted wrong)" in html and "12 groups" in html
