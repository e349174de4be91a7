"""A debiased calibration error clipped at 0 reads as its upper bound, never as 0.000, and is never ranked (issue 41).

An overconfident model (confidence 8 points above its accuracy) on 100 examples can have a
debiased squared ℓ2 error below 0: the square root of the clip read "0.000 (0.000–0.101)", a
claim of perfect calibration, and was marked the best calibrated beside a calibrated model
whose estimate happened to be positive.
"""

from __future__ import annotations

import numpy as np

import headtohead
from headtohead.report.rows.summary import summary_rows
from headtohead.report.sections.run.summary import summary_notes, summary_table, summary_texts
from headtohead.stats.calibration import CLIPPED_NOTE


def _draw(seed: int, gap: float, n: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Confidences in [0.6, 1] and correctness with P(right) = confidence − ``gap`` (``gap`` 0: calibrated)."""
    rng = np.random.default_rng(seed)
    confidence = 0.6 + 0.4 * rng.beta(4, 1, n)
    return confidence, rng.random(n) < confidence - gap


def _write(path, labels: list[str], confidence: np.ndarray, right: np.ndarray) -> None:
    other = {"neg": "pos", "pos": "neg"}
    lines = ["id,prediction,proba_neg,proba_pos"]
    for i, (y, p, ok) in enumerate(zip(labels, confidence, right, strict=True)):
        predicted = y if ok else other[y]
        p_neg = float(p) if predicted == "neg" else 1.0 - float(p)
        lines.append(f"e{i},{predicted},{p_neg!r},{1.0 - p_neg!r}")
    path.write_text("\n".join(lines) + "\n")


def test_an_overconfident_model_clipped_at_0_reads_its_upper_bound_and_is_not_ranked(tmp_path):
    n = 100
    labels = ["neg", "pos"] * (n // 2)
    (tmp_path / "data.csv").write_text("id,text,label\n" + "".join(f"e{i},t {i},{y}\n" for i, y in enumerate(labels)))
    over_conf, over_right = _draw(9, 0.08)  # overconfident by 8 pp (8.1 pp in this draw)
    assert 0.07 < over_conf.mean() - over_right.mean() < 0.09
    cal_conf, cal_right = _draw(7, 0.0)  # perfectly calibrated, its estimate above 0 by chance (0.086)
    _write(tmp_path / "over.csv", labels, over_conf, over_right)
    _write(tmp_path / "calibrated.csv", labels, cal_conf, cal_right)
    run = headtohead.run(
        {
            "name": "calibration-bound",
            "data": {"path": "data.csv", "id_column": "id"},
            "models": [{"name": m, "kind": "predictions", "source": f"{m}.csv"} for m in ("over", "calibrated")],
            "stats": {"n_resamples": 200},
        },
        base_dir=tmp_path,
        out_dir=tmp_path / "out",
        report=True,
    )
    over = run.result.stats.model("over").calibration
    calibrated = run.result.stats.model("calibrated").calibration
    # the record keeps the unclipped estimate, and says what a value of 0 is
    assert over.ece_l2_squared_debiased < 0 and over.ece_l2_debiased.value == 0.0
    assert over.ece_l2_debiased.note == CLIPPED_NOTE and over.ece_l2_debiased.high > 0.08
    assert calibrated.ece_l2_squared_debiased > 0 and calibrated.ece_l2_debiased.note is None
    texts = summary_texts(run.result)
    high = over.ece_l2_debiased.high
    assert texts["over"]["calibration_error"] == f"≤ {high:.3f}"  # not "0.000 (0.000–0.101)"
    assert "0.000" not in texts["over"]["calibration_error"]
    low, value = calibrated.ece_l2_debiased.low, calibrated.ece_l2_debiased.value
    assert texts["calibrated"]["calibration_error"].startswith(f"{value:.3f} (")
    table = summary_table_of(run)
    assert table.best("calibration_error") == set()  # no ranking by a clipped point
    assert table.best("accuracy")  # the other rows still mark their best
    assert any(note.startswith('Calibration error "≤ x"') for note in summary_notes(run.result))
    html = (tmp_path / "out" / "report.html").read_text()
    assert f"≤ {high:.3f}" in html and "0.000 (0.000" not in html
    csv_cell = summary_rows(run.result)["over"]["calibration_error"]
    assert csv_cell.value is None and csv_cell.high == high and csv_cell.low == 0.0 and low == 0.0


def summary_table_of(run):  # type: ignore[no-untyped-def]
    from headtohead.report.merge import as_merged
    from headtohead.report.sections.run.view import RunView

    table = summary_table(RunView(as_merged(run.result).runs[0], 1, {}))
    assert table is not None
    return table


def test_a_calibrated_model_clipped_at_0_reads_its_upper_bound_too(tmp_path):
    """Perfect calibration cannot be shown either: the cell says how large the error may be, not that it is 0."""
    n = 100
    labels = ["neg", "pos"] * (n // 2)
    (tmp_path / "data.csv").write_text("id,text,label\n" + "".join(f"e{i},t {i},{y}\n" for i, y in enumerate(labels)))
    conf, right = _draw(5, 0.0)
    _write(tmp_path / "calibrated.csv", labels, conf, right)
    run = headtohead.run(
        {
            "name": "calibrated",
            "data": {"path": "data.csv", "id_column": "id"},
            "models": [{"name": "calibrated", "kind": "predictions", "source": "calibrated.csv"}],
            "stats": {"n_resamples": 200},
        },
        base_dir=tmp_path,
    )
    estimate = run.result.stats.model("calibrated").calibration.ece_l2_debiased
    assert estimate.value == 0.0 and 0.0 < estimate.high < 0.08
    assert summary_texts(run.result)["calibrated"]["calibration_error"] == f"≤ {estimate.high:.3f}"
