"""The Wilson interval of one model's share correct: statsmodels' bounds, and always around its estimate."""

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from headtohead.stats.intervals import wilson_interval


def test_wilson_is_statsmodels_and_contains_its_estimate_at_every_count():
    for n in range(1, 2001):
        for successes in {0, 1, n // 2, n - 1, n}:
            low, high = wilson_interval(successes, n)
            assert low <= successes / n <= high, (successes, n)
            reference = proportion_confint(successes, n, alpha=0.05, method="wilson")
            np.testing.assert_allclose((low, high), reference, rtol=0, atol=1e-15)
    # a perfect model's interval reaches 1 exactly (it fell to 1 - 2**-53 for 613 values of n up to 2,000)
    assert all(wilson_interval(n, n)[1] == 1.0 and wilson_interval(0, n)[0] == 0.0 for n in range(1, 2001))


@pytest.mark.parametrize("n", [10, 13, 25])
def test_a_perfect_model_on_few_examples_gets_its_report(tmp_path, n):
    """Its accuracy interval's upper end was below 1.0 (at 10, 13 and 25 of as many): the report's error bar was
    negative and no report came. The report shows 100 % inside its interval."""
    import headtohead
    from headtohead.report.rows.summary import summary_rows
    from headtohead.report.sections.run.summary import summary_texts

    labels = (["neg", "pos"] * n)[:n]
    (tmp_path / "data.csv").write_text(
        "id,text,label\n" + "".join(f"e{i},text {i},{y}\n" for i, y in enumerate(labels))
    )
    (tmp_path / "perfect.csv").write_text("id,prediction\n" + "".join(f"e{i},{y}\n" for i, y in enumerate(labels)))
    (tmp_path / "other.csv").write_text("id,prediction\n" + "".join(f"e{i},pos\n" for i in range(n)))
    run = headtohead.run(
        {
            "name": "perfect",
            "data": {"path": "data.csv", "id_column": "id"},
            "models": [
                {"name": "perfect", "kind": "predictions", "source": "perfect.csv"},
                {"name": "other", "kind": "predictions", "source": "other.csv"},
            ],
            "stats": {"n_resamples": 200},
        },
        base_dir=tmp_path,
        out_dir=tmp_path / "out",
        report=True,
    )
    accuracy = run.result.stats.model("perfect").accuracy
    assert accuracy.value == accuracy.high == 1.0 and 0.5 < accuracy.low < 1.0
    cell = summary_rows(run.result)["perfect"]["accuracy"]
    assert cell.low <= cell.value == cell.high == 1.0
    shown = summary_texts(run.result)["perfect"]["accuracy"]  # 100 % inside its interval, as every format shows it
    assert shown == f"100.0 % ({100 * accuracy.low:.1f}–100.0)"
    assert shown in (tmp_path / "out" / "report.html").read_text()
