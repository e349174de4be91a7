"""The Python API says everything the CLI can: the gate on a run outcome, its folder or bare
predictions; ``compare(..., until_decided=True)`` stops where ``h2h run --until-decided`` stops."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import headtohead
from headtohead.adapters.predictions import write_prediction_file
from headtohead.cli.main import main
from headtohead.errors import ConfigError

LABELS = ("negative", "positive")


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """2,000 examples with ids, and two models' labels: 'new' right 4 points less often than 'old'."""
    root = tmp_path_factory.mktemp("api")
    rng = np.random.default_rng(11)
    n = 2000
    y = rng.integers(0, 2, n)
    ids = [f"e{i:04d}" for i in range(n)]
    frame = pd.DataFrame({"id": ids, "text": [f"text {i}" for i in range(n)], "label": [LABELS[k] for k in y]})
    frame.to_csv(root / "dev.csv", index=False)
    old = np.where(rng.random(n) < 0.89, y, 1 - y)
    new = np.where(rng.random(n) < 0.85, y, 1 - y)
    models = {"old": [LABELS[k] for k in old], "new": [LABELS[k] for k in new]}
    for name, labels in models.items():
        write_prediction_file(root / f"{name}.csv", ids, labels)
    return root, frame, models


def _cli_gate(capsys, target, *margins):
    with pytest.raises(SystemExit) as exit_:
        main(["gate", str(target), "--baseline", "old", "--candidate", "new", *margins])
    return exit_.value.code, capsys.readouterr().out.strip()


def test_gate_on_an_outcome_its_folder_and_bare_predictions_decides_as_h2h_gate(table, tmp_path, capsys):
    root, frame, models = table
    outcome = headtohead.compare(models, frame, id_column="id", out_dir=tmp_path / "run", stats={"n_resamples": 200})
    code, paragraph = _cli_gate(capsys, tmp_path / "run", "--max-accuracy-drop", "0.005")  # the folder, as h2h report
    assert code == _cli_gate(capsys, tmp_path / "run" / "results.json", "--max-accuracy-drop", "0.005")[0]
    kinds = {
        "outcome": headtohead.gate(outcome, baseline="old", candidate="new", max_accuracy_drop=0.005),
        "folder": headtohead.gate(tmp_path / "run", baseline="old", candidate="new", max_accuracy_drop=0.005),
        "predictions": headtohead.gate(
            headtohead.load_predictions(tmp_path / "run"), baseline="old", candidate="new", max_accuracy_drop=0.005
        ),
        "in memory": headtohead.gate(
            models, labels=frame["label"], baseline="old", candidate="new", max_accuracy_drop=0.005
        ),
    }
    assert code == 1  # 4 points worse: beyond a 0.5-point margin, with confidence
    for kind, gated in kinds.items():
        assert (gated.exit_code, gated.paragraph) == (code, paragraph), kind
        assert [d.outcome for d in gated.decisions] == ["fail"], kind
    with pytest.raises(ConfigError, match="hold no speed"):
        headtohead.gate(models, labels=frame["label"], baseline="old", candidate="new", max_slowdown="5%")
    with pytest.raises(ConfigError, match="need labels="):
        headtohead.gate(models, baseline="old", candidate="new", max_accuracy_drop=0.005)


def test_gate_on_predictions_counts_a_failure_as_a_wrong_answer():
    y = ["a", "b"] * 100
    perfect = list(y)
    failing = list(y)
    failing[:30] = [""] * 30  # no answer on 30 examples
    gated = headtohead.gate(
        {"base": perfect, "cand": failing}, labels=y, baseline="base", candidate="cand", max_accuracy_drop="1pp"
    )
    assert gated.exit_code == 1  # 15 points lost to failures is worse, not left out


def test_show_takes_the_folder_report_takes(table, tmp_path, capsys):
    root, frame, models = table
    headtohead.compare(models, frame, id_column="id", out_dir=tmp_path / "run", stats={"n_resamples": 200})
    main(["show", str(tmp_path / "run")])
    assert "old" in capsys.readouterr().out


def test_compare_until_decided_stops_where_h2h_run_until_decided_stops(table, tmp_path):
    root, frame, models = table
    api = headtohead.compare(models, frame, id_column="id", seed=2, until_decided=True, stats={"n_resamples": 200})
    main(
        [
            "run",
            "--data",
            str(root / "dev.csv"),
            "--id-column",
            "id",
            "-m",
            f"old={root / 'old.csv'}",
            "-m",
            f"new={root / 'new.csv'}",
            "--until-decided",
            "--set",
            "seed=2",
            "--set",
            "stats.n_resamples=200",
            "--out",
            str(tmp_path / "cli"),
        ]
    )
    cli = headtohead.load_result(tmp_path / "cli")
    (a,), (b,) = api.result.stats.sequential, cli.stats.sequential
    assert 64 < a.examples_used < a.examples_available  # it stopped early, after several looks …
    assert (a.examples_used, a.decision, a.order_seed, a.chunk_size) == (
        b.examples_used,
        b.decision,
        b.order_seed,
        b.chunk_size,
    )  # … where the CLI stopped
    assert [(s.n, s.only_a_correct, s.only_b_correct) for s in a.steps] == [
        (s.n, s.only_a_correct, s.only_b_correct) for s in b.steps
    ]
    full = headtohead.compare(models, frame, id_column="id", seed=2, stats={"n_resamples": 200})
    assert full.result.stats.sequential is None


def test_gate_on_predictions_takes_groups_as_a_run_does():
    y = ["a", "b"] * 100
    worse = [("b" if v == "a" else "a") if i < 12 else v for i, v in enumerate(y)]  # 12 errors, in the first groups
    alone = headtohead.gate({"a": y, "b": worse}, labels=y, baseline="a", candidate="b", max_accuracy_drop="1pp")
    grouped = headtohead.gate(
        {"a": y, "b": worse},
        labels=y,
        groups=[i // 10 for i in range(200)],
        baseline="a",
        candidate="b",
        max_accuracy_drop="1pp",
    )
    assert alone.exit_code == 1 and grouped.exit_code == 3  # 20 users, not 200 examples: it cannot tell yet
    assert "over 200 examples in 20 groups" in grouped.paragraph
