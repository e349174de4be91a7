"""``analyse``: the whole statistics pass over saved predictions, its records and its verdicts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from headtohead.errors import ConfigError, ResultsError
from headtohead.report.words.numbers import format_pp
from headtohead.report.words.quality import pair_verdict, verdict_lines, with_quality_sentences
from headtohead.results import Predictions
from headtohead.results.comparison import StatsSummary
from headtohead.stats import analyse as analyse_numbers


def analyse(predictions, **options):
    """The statistics with their sentences, as a run stores them."""
    return with_quality_sentences(analyse_numbers(predictions, **options))


LABELS = ("negative", "positive")


def _predictions(n: int = 872, accuracies: dict[str, float] | None = None, seed: int = 0) -> Predictions:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    preds = Predictions(np.arange(n), y, LABELS)
    for name, acc in (accuracies or {"strong": 0.93, "weak": 0.85}).items():
        pred = np.where(rng.random(n) < acc, y, 1 - y)
        sure = rng.uniform(0.55, 0.99, n)
        preds.add(name, pred, np.where(np.eye(2)[pred] == 1, sure[:, None], 1 - sure[:, None]))
    return preds


def test_two_models_full_record_and_verdict() -> None:
    summary = analyse(_predictions(), n_resamples=500)
    (comp,) = summary.comparisons
    assert (comp.model_a, comp.model_b, comp.n_examples) == ("strong", "weak", 872)
    assert comp.table.n == 872 and comp.effect == pytest.approx(
        (comp.table.only_a_correct - comp.table.only_b_correct) / 872
    )
    assert comp.test == "mcnemar-score" and comp.p_value < 1e-4 and comp.p_adjusted == comp.p_value
    assert comp.significant and comp.winner == "strong"
    acc = comp.difference("accuracy")
    assert acc.difference == pytest.approx(comp.effect) and acc.ci_low > 0 and acc.method == "tango-score"
    assert acc.value_a - acc.value_b == pytest.approx(acc.difference)
    assert {d.metric for d in comp.differences} == {
        "accuracy",
        "balanced_accuracy",
        "f1_macro",
        "f1_weighted",
        "recall:negative",
        "recall:positive",
        "brier",
        "nll",
    }
    assert comp.difference("recall:negative").method == "tango-score"  # a proportion on the class's examples
    assert not comp.difference("brier").higher_is_better
    assert comp.verdict.startswith("strong vs weak: strong is better (accuracy strong − weak = +")
    assert "McNemar p < 0.001" in comp.verdict and "Holm" not in comp.verdict
    first, where = verdict_lines(summary)  # the pair, then the slices where it differs (both classes here)
    assert first == comp.verdict
    assert where.startswith("strong vs weak by slice: strong is better on class ")


def test_model_intervals_and_calibration() -> None:
    summary = analyse(_predictions(), n_resamples=300, ece_bins=10)
    strong = summary.model("strong")
    assert strong.accuracy.method == "wilson" and strong.recall_per_class["positive"].method == "wilson"
    for est in (
        strong.accuracy,
        strong.f1_macro,
        strong.f1_weighted,
        strong.balanced_accuracy,
        strong.recall_per_class["positive"],
        strong.brier,
        strong.nll,
        strong.calibration.ece_l2_debiased,
    ):
        assert est is not None and est.low <= est.value <= est.high and est.confidence == 0.95
    assert strong.f1_macro.method == "bca" and len(strong.calibration.bins) == 10
    # the plug-in ECE is biased upwards: shown without an interval, the debiased ℓ2 error carries one
    assert strong.ece.value == pytest.approx(strong.calibration.ece) and strong.ece.low is None
    assert "biased" in strong.ece.note and strong.calibration_examples == 872
    assert strong.estimate("recall:negative") == strong.recall_per_class["negative"]
    with pytest.raises(KeyError):
        strong.estimate("speed")


def test_a_model_against_itself_in_a_real_run(tmp_path: Path) -> None:
    # real predictions of a real model (scikit-learn digits), saved and read back as a run does
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB

    x, y = load_digits(return_X_y=True)
    train, test = np.arange(len(y)) % 3 != 0, np.arange(len(y)) % 3 == 0
    preds = Predictions(np.flatnonzero(test), y[test], tuple(str(d) for d in range(10)))
    logreg = LogisticRegression(max_iter=300).fit(x[train], y[train])
    bayes = GaussianNB().fit(x[train], y[train])
    for name, model in (("logreg", logreg), ("logreg-again", logreg), ("bayes", bayes)):
        preds.add(name, model.predict(x[test]), model.predict_proba(x[test]))
    preds.save(tmp_path / "predictions.npz")
    summary = analyse(Predictions.load(tmp_path / "predictions.npz"), n_resamples=500)
    same = summary.comparison("logreg", "logreg-again")
    assert same.p_value == 1.0 and same.p_adjusted == 1.0 and not same.significant and same.winner is None
    assert "logreg vs logreg-again: no significant difference" in same.verdict
    assert "right and wrong on exactly the same examples" in same.verdict
    # identical predictions: the accuracy gap's interval is not a point, and no bootstrap claims zero width
    for d in same.differences:
        assert d.difference == 0.0
        assert (
            (d.ci_low < 0 < d.ci_high)
            if d.method == "tango-score"
            else (d.ci_low is None and "every resample" in d.note)
        )
    assert summary.comparison("logreg", "bayes").significant
    assert [g.models for g in summary.ranking] == [["logreg", "logreg-again"], ["bayes"]]


def test_many_models_holm_and_ranking() -> None:
    preds = _predictions(1500, {"a": 0.95, "b": 0.945, "c": 0.85, "d": 0.845})
    summary = analyse(preds, n_resamples=300)
    assert len(summary.comparisons) == 6
    raw = [c.p_value for c in summary.comparisons]
    from statsmodels.stats.multitest import multipletests

    assert [c.p_adjusted for c in summary.comparisons] == pytest.approx(list(multipletests(raw, method="holm")[1]))
    assert all(c.significant == (c.p_adjusted <= 0.05) for c in summary.comparisons)
    assert [sorted(g.models) for g in summary.ranking] == [["a", "b"], ["c", "d"]]
    lines = [line for line in verdict_lines(summary) if " by slice: " not in line]
    assert len(lines) == 7 and lines[-1].startswith("Ranking by accuracy (1. a, b · 2. c, d)")
    assert "Holm p" in lines[0]


def test_not_significant_verdict_gives_the_minimum_detectable_effect() -> None:
    summary = analyse(_predictions(872, {"x": 0.90, "y": 0.897}, seed=4), n_resamples=300)
    (comp,) = summary.comparisons
    assert not comp.significant and comp.winner is None
    assert comp.minimum_detectable_effect is not None and 0.01 < comp.minimum_detectable_effect < 0.06
    assert comp.verdict.startswith("x vs y: no significant difference (accuracy x − y = ")
    assert comp.verdict.endswith(
        f"872 examples find a gap of {format_pp(comp.minimum_detectable_effect, signed=False)}"
        f" pp with 80 % probability (smaller gaps less often)."
    )


def test_sign_convention_when_the_second_model_wins() -> None:
    text = pair_verdict(
        model_a="bert",
        model_b="roberta",
        n_examples=872,
        effect=-0.012,
        ci_low=-0.020,
        ci_high=-0.004,
        confidence=0.95,
        test="mcnemar-exact",
        p_value=0.003,
        p_adjusted=0.006,
        significant=True,
        discordant=40,
        minimum_detectable_effect=0.02,
    )
    assert text == (
        "bert vs roberta: roberta is better (accuracy roberta − bert = +1.2 pp, 95 % CI +0.4…+2.0, "
        "McNemar exact p = 0.003, Holm p = 0.006)."
    )


def test_single_model_has_intervals_and_no_comparisons() -> None:
    summary = analyse(_predictions(200, {"only": 0.8}), n_resamples=200)
    assert summary.comparisons == [] and [g.models for g in summary.ranking] == [["only"]]
    assert verdict_lines(summary) == []
    assert summary.models[0].accuracy.low < summary.models[0].accuracy.value


def test_summary_round_trips_through_json_and_is_deterministic() -> None:
    preds = _predictions(300)
    summary = analyse(preds, n_resamples=200, ci_method="percentile", seed=3)
    assert StatsSummary.model_validate_json(summary.model_dump_json()) == summary
    assert analyse(preds, n_resamples=200, ci_method="percentile", seed=3) == summary
    assert summary.settings.ci_method == "percentile" and summary.settings.confidence == pytest.approx(0.95)
    assert summary.comparisons[0].difference("f1_macro").method == "percentile"


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(alpha=0.0), "alpha=0.0"),
        (dict(n_resamples=10), "n_resamples=10"),
        (dict(ci_method="bcа"), "ci_method"),
        (dict(ci_method="percentil"), "did you mean percentile"),
        (dict(ece_bins=0), "ece_bins=0"),
    ],
)
def test_bad_settings_raise_config_errors(kwargs: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        analyse(_predictions(50), **kwargs)


def test_inconsistent_predictions_raise_results_errors() -> None:
    preds = _predictions(50)
    bad = preds.models["weak"].proba.copy()
    bad[3, 0] = np.nan
    preds.models["weak"] = type(preds.models["weak"])(preds.models["weak"].pred, bad)
    with pytest.raises(ResultsError, match="model 'weak': probabilities contain NaN"):
        analyse(preds)
    with pytest.raises(ResultsError, match="no evaluated examples"):
        analyse(Predictions(np.zeros(0, np.int64), np.zeros(0, np.int64), LABELS))


def test_statistics_never_import_torch() -> None:
    import pkgutil
    import subprocess
    import sys

    import headtohead.stats

    modules = [m.name for m in pkgutil.iter_modules(headtohead.stats.__path__)]  # every module, new ones too
    assert {"analyse", "bootstrap", "mcnemar", "power", "quality"} <= set(modules)
    code = (
        "import sys, headtohead.cli.plan, headtohead.results.comparison\n"
        + "".join(f"import headtohead.stats.{m}\n" for m in modules)
        + "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- examples a model could not score; classes only a model knows --------------------------
def test_a_failure_counts_as_a_wrong_answer_everywhere() -> None:
    full = _predictions(n=600, accuracies={"a": 0.9, "b": 0.8, "c": 0.85}, seed=3)
    broken = np.random.default_rng(4).random(600) < 0.05  # model b: no prediction on about 30 examples
    preds = Predictions(full.order, full.y_true, LABELS)
    for name in full:
        pred, proba = full[name].pred.copy(), full[name].proba.copy()
        if name == "b":
            pred[broken], proba[broken] = -1, np.nan
        preds.add(name, pred, proba)
    summary = analyse_numbers(preds, n_resamples=300)
    failed, y = int(broken.sum()), preds.y_true
    b = summary.model("b")
    assert b.n_failed == failed and b.n_examples == 600 and b.n_excluded == 0
    assert b.accuracy.value == pytest.approx(np.mean(preds["b"].pred == y))  # failures are wrong answers
    assert b.accuracy_answered.value == pytest.approx(np.mean(full["b"].pred[~broken] == y[~broken]))
    assert b.calibration_examples == 600 - failed  # calibration needs a probability: answered rows only
    alone = analyse_numbers(full, n_resamples=300).model("a")  # the other models' statistics are unchanged
    for field in ("accuracy", "balanced_accuracy", "f1_macro", "f1_weighted", "recall_per_class", "calibration"):
        assert getattr(summary.model("a"), field) == getattr(alone, field)
    for field in ("brier", "nll"):  # one draw of fewer models: the same resamples, summed in another order
        ours, theirs = getattr(summary.model("a"), field), getattr(alone, field)
        assert (ours.value, ours.low, ours.high) == pytest.approx((theirs.value, theirs.low, theirs.high), rel=1e-12)
    for comparison in summary.comparisons:
        assert comparison.n_examples == 600 and comparison.n_excluded == 0
        if "b" in (comparison.model_a, comparison.model_b):
            other = comparison.model_a if comparison.model_b == "b" else comparison.model_b
            right = preds[other].pred == y
            # every failed row where the other model was right is a discordant pair against b
            assert comparison.table.discordant >= int((broken & right).sum())
            assert comparison.difference("brier").on_answered_rows
            assert not comparison.difference("accuracy").on_answered_rows
    worded = with_quality_sentences(summary).comparisons
    assert all(
        (f"b gave no prediction for {failed} of 600" in c.verdict) == ("b" in (c.model_a, c.model_b)) for c in worded
    )


def test_a_model_that_fails_on_the_hardest_examples_never_looks_better() -> None:
    """The issue's case: NaN on the 200 hardest of 1,000 examples must not beat answering them all with the same skill."""
    rng = np.random.default_rng(12)
    n = 1000
    y = rng.integers(0, 2, n)
    difficulty = rng.random(n)
    skill = 0.95 - 0.3 * difficulty  # harder examples are more often wrong, for both models alike
    answered_all = np.where(rng.random(n) < skill, y, 1 - y)
    same_skill = np.where(rng.random(n) < skill, y, 1 - y)
    hardest = np.argsort(difficulty)[-200:]
    same_skill[hardest] = -1
    preds = Predictions(np.arange(n), y, LABELS)
    preds.add("answers-all", answered_all, None)
    preds.add("fails-hard", same_skill, None)
    summary = analyse_numbers(preds, n_resamples=200)
    fails = summary.model("fails-hard")
    assert fails.accuracy.value < summary.model("answers-all").accuracy.value
    assert fails.accuracy_answered.value > summary.model("answers-all").accuracy.value  # the figure that misled
    assert summary.ranking[0].models[0] == "answers-all"


@pytest.mark.filterwarnings("ignore:y_pred contains classes not in y_true")  # scikit-learn's own, below
def test_a_predicted_class_the_data_lacks_is_an_error_and_no_class_of_its_own() -> None:
    from sklearn import metrics as skm

    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, 400)
    preds = Predictions(np.arange(400), y, LABELS)
    pred = np.where(rng.random(400) < 0.8, y, rng.integers(0, 4, 400))  # classes 2, 3: only the model has them
    proba = np.full((400, 4), 0.1)
    proba[np.arange(400), pred] = 0.7
    preds.add("wide", pred, proba, outside=["neutral", "mixed"])
    preds.add("narrow", np.where(rng.random(400) < 0.75, y, 1 - y), np.full((400, 2), 0.5))
    summary = analyse_numbers(preds, n_resamples=300)
    wide = summary.model("wide")
    assert wide.f1_macro.value == pytest.approx(skm.f1_score(y, pred, labels=[0, 1], average="macro"))
    assert wide.balanced_accuracy.value == pytest.approx(skm.balanced_accuracy_score(y, pred))
    assert wide.accuracy.value == pytest.approx((pred == y).mean())
    assert set(wide.recall_per_class) == set(LABELS)
    assert summary.model("narrow").brier is not None  # its probabilities spread over the four columns: zeros
