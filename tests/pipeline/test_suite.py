"""``headtohead.suite``: real models on four real scikit-learn data sets, each an ordinary run; resume; failures; inputs."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from sim.sample import sample_run, sample_training

import headtohead
from headtohead.config.suite import load_suite
from headtohead.errors import ConfigError, DataError, ResultsError
from headtohead.results import load_result, save_result
from headtohead.results.suite import load_suite_result
from headtohead.testing.suite_models import RECIPE, fit_recipe

DATASETS = ("digits", "wine", "breast_cancer", "iris")


def write_suite(folder: Path, datasets=DATASETS, **extra) -> Path:
    """A suite of the recipe on scikit-learn's built-in data sets (each split 70/30 with the suite's seed)."""
    suite = {
        "name": "four-sklearn",
        "seed": 42,
        "datasets": [{"name": d, "data": {"path": f"sklearn:{d}", "split": {"eval_fraction": 0.3}}} for d in datasets],
        "models": [{"name": m, "kind": "sklearn", "source": f"models/{{dataset}}/{m}.skops"} for m in RECIPE],
        "speed": {"enabled": False},
        "stats": {"n_resamples": 200},
        **extra,
    }
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return path


def fit_models(path: Path) -> None:
    config = load_suite(path)
    for dataset in config.datasets:
        if not (path.parent / "models" / dataset.name).is_dir():
            fit_recipe(dataset.data, path.parent / "models" / dataset.name, seed=config.seed)


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("suite")
    path = write_suite(root)
    fit_models(path)
    events = []
    outcome = headtohead.suite(path, out_dir=root / "out", on_event=events.append)
    return root, path, outcome, events


def test_each_data_set_is_an_ordinary_run_in_its_own_folder(suite_run):
    root, _, outcome, events = suite_run
    result = outcome.result
    assert result.input == "suite" and result.models == list(RECIPE) and result.n_datasets == 4
    assert [d.name for d in result.datasets] == list(DATASETS) and not outcome.failed
    for entry in result.datasets:
        folder = root / "out" / entry.name
        assert {"results.json", "predictions.npz", "report.html"} <= {p.name for p in folder.iterdir()}
        run = load_result(folder / "results.json")
        assert entry.results == f"{entry.name}/results.json" and entry.report == f"{entry.name}/report.html"
        assert entry.scores == {m: run.model(m).quality.accuracy for m in RECIPE}
        assert entry.n_examples == run.dataset.n_examples and entry.n_classes == len(run.dataset.label_names)
        order = sorted(RECIPE, key=lambda m: -entry.scores[m])
        assert entry.ranks[order[0]] <= entry.ranks[order[1]] <= entry.ranks[order[2]]
        own = {(c.model_a, c.model_b): (c.significant, c.winner) for c in run.stats.comparisons}
        assert {(v.model_a, v.model_b): (v.significant, v.winner) for v in entry.verdicts} == own
    assert {d.n_classes for d in result.datasets} == {10, 3, 2}  # data sets differ in labels and size
    assert len({d.n_examples for d in result.datasets}) == 4
    assert any("digits: finished" in e for e in events) and any("iris: running (4 of 4)" in e for e in events)


def test_suite_json_holds_the_statistics_and_reads_back(suite_run):
    root, _, outcome, _ = suite_run
    saved = load_suite_result(root / "out" / "suite.json")
    assert saved == outcome.result
    raw = (root / "out" / "suite.json").read_text()
    for key in (
        '"schema_version": 1',
        '"average_ranks"',
        '"friedman"',
        '"iman_davenport"',
        '"nemenyi_cd"',
        '"wilcoxon_p"',
        '"holm_p"',
        '"p_a_better"',
        '"p_equivalent"',
        '"p_b_better"',
    ):
        assert key in raw
    result = saved
    scores = np.array([[d.scores[m] for m in RECIPE] for d in result.datasets])
    ranks = np.array([[d.ranks[m] for m in RECIPE] for d in result.datasets])
    assert [result.average_ranks[m] for m in RECIPE] == pytest.approx(ranks.mean(axis=0).tolist())
    assert result.friedman is not None and len(result.pairs) == 3 and result.nemenyi_cd > 0
    mean = {p.model_a + p.model_b: p.mean_difference for p in result.pairs}
    assert mean["logregnb"] == pytest.approx(float((scores[:, 0] - scores[:, 1]).mean()))
    assert result.verdict and result.verdict[0].startswith("4 data sets, 3 models, accuracy")
    assert any("2/2^4" in w for w in result.warnings)  # four data sets: no Wilcoxon p can reach 0.05
    for name in ("suite.html", "suite.md", "suite.csv", "suite_files/critical-difference.png"):
        assert (root / "out" / name).is_file()


def test_finished_runs_give_the_same_statistics(suite_run):
    root, _, outcome, _ = suite_run
    paths = [root / "out" / d / "results.json" for d in DATASETS]
    again = headtohead.suite(paths, out_dir=root / "across")
    result = again.result
    assert result.input == "results" and [d.name for d in result.datasets] == list(DATASETS)
    assert result.average_ranks == outcome.result.average_ranks
    assert result.friedman == outcome.result.friedman and result.pairs == outcome.result.pairs
    assert result.dataset("iris").report == "../out/iris/report.html"  # relative to the suite's own folder
    assert headtohead.suite([root / "out" / d for d in DATASETS]).result.pairs == result.pairs  # folders work too
    f1 = headtohead.suite(paths, metric="f1_macro").result
    assert (
        f1.metric == "f1_macro"
        and f1.dataset("wine").scores["nb"] == load_result(paths[1]).model("nb").quality.f1_macro
    )
    brier = headtohead.suite(paths, metric="brier").result
    assert not brier.higher_is_better


def test_resume_skips_finished_data_sets_and_runs_the_rest(suite_run, tmp_path):
    root, path, outcome, _ = suite_run
    shutil.copytree(root, tmp_path / "copy")
    out = tmp_path / "copy" / "out"
    before = {d: (out / d / "results.json").stat().st_mtime_ns for d in DATASETS}
    shutil.rmtree(out / "wine")
    (out / "iris" / "report.html").unlink()  # killed between its results and its report
    events = []
    resumed = headtohead.suite(tmp_path / "copy" / "suite.yaml", out_dir=out, resume=True, on_event=events.append)
    assert set(resumed.runs) == {"wine"}
    assert [d.reused for d in resumed.result.datasets] == [True, False, True, True]
    assert "digits: finished in an earlier run; skipped (--resume)" in events
    for d in ("digits", "breast_cancer", "iris"):
        assert (out / d / "results.json").stat().st_mtime_ns == before[d]
    assert (out / "iris" / "report.html").is_file()
    assert resumed.result.average_ranks == outcome.result.average_ranks
    assert resumed.result.dataset("wine").scores == outcome.result.dataset("wine").scores


def test_a_suite_files_figure_size_reaches_its_cd_files_and_the_option_replaces_it(suite_run, tmp_path):
    """``across.figure`` is not part of any data set's experiment: every run is reused, only the files change."""
    root, _, _, _ = suite_run
    shutil.copytree(root, tmp_path / "copy")
    out = tmp_path / "copy" / "out"
    sized = headtohead.suite(
        tmp_path / "copy" / "suite.yaml", out_dir=out, resume=True, overrides=["across.figure.width=3.5"]
    )
    assert not sized.runs and 'width="252pt"' in (out / "cd.svg").read_text()  # 3.5 in × 72
    headtohead.suite(
        tmp_path / "copy" / "suite.yaml",
        out_dir=out,
        resume=True,
        overrides=["across.figure.width=3.5"],
        figure_size=(7.16, 2.0),
    )
    assert 'width="515.52pt" height="144pt"' in (out / "cd.svg").read_text()


def test_a_changed_experiment_is_not_skipped(suite_run, tmp_path):
    root, _, _, _ = suite_run
    shutil.copytree(root, tmp_path / "copy")
    events = []
    changed = headtohead.suite(
        tmp_path / "copy" / "suite.yaml",
        out_dir=tmp_path / "copy" / "out",
        resume=True,
        overrides=["datasets.iris.data.limit=30"],
        on_event=events.append,
    )
    assert set(changed.runs) == {"iris"} and changed.result.dataset("iris").n_examples == 30


def test_a_failing_data_set_is_reported_and_the_others_go_on(suite_run, tmp_path):
    root, _, _, _ = suite_run
    shutil.copytree(root / "models", tmp_path / "models")
    path = write_suite(tmp_path, datasets=("wine", "no-models", "iris"))
    suite = yaml.safe_load(path.read_text())
    suite["datasets"][1]["data"] = {"path": "sklearn:iris", "split": {"eval_fraction": 0.3}}
    path.write_text(yaml.safe_dump(suite))
    outcome = headtohead.suite(path, out_dir=tmp_path / "out")
    (failed,) = outcome.failed
    assert failed.name == "no-models" and "no-models/logreg.skops" in failed.error and "\n" not in failed.error
    assert outcome.result.n_datasets == 2 and [d.name for d in outcome.result.finished] == ["wine", "iris"]
    assert outcome.result.average_ranks and outcome.result.pairs  # the statistics use the two that finished
    assert any("failed and is left out: no-models" in w for w in outcome.result.warnings)
    assert load_suite_result(tmp_path / "out" / "suite.json").dataset("no-models").status == "failed"


def test_too_few_finished_data_sets_give_a_record_without_statistics(tmp_path):
    path = write_suite(tmp_path, datasets=("iris", "wine"))
    outcome = headtohead.suite(yaml.safe_load(path.read_text()), base_dir=tmp_path)  # a dict; no models: both fail
    assert len(outcome.failed) == 2 and outcome.result.statistics_note.startswith("0 data sets finished")
    assert outcome.result.average_ranks == {} and outcome.out_dir is None
    assert outcome.result.verdict == [
        "No comparison across data sets: 0 data sets finished; comparing across data sets needs at least two."
    ]


def test_another_suites_folder_is_refused(suite_run, tmp_path):
    root, path, _, _ = suite_run
    other = tmp_path / "other.yaml"
    other.write_text(path.read_text().replace("name: four-sklearn", "name: another"))
    shutil.copytree(root / "out", tmp_path / "out")
    with pytest.raises(ResultsError, match="holds the results of suite 'four-sklearn'"):
        headtohead.suite(other, out_dir=tmp_path / "out", base_dir=root)


def test_multi_seed_runs_get_aso_and_the_spread_of_seeds(tmp_path):
    paths = []
    for i, (name, gap) in enumerate([("sst", 0.04), ("snips", 0.02), ("ag", 0.03)]):
        models = {"bert": 0.86, "roberta": 0.86 + gap}
        result, predictions = sample_run(models, n_examples=800, seed=i, speed=False, n_resamples=200)
        training = sample_training(models, seeds=(0, 1, 2, 3, 4), seed=i)
        folder = tmp_path / name
        folder.mkdir()
        save_result(result.model_copy(update={"training": training}), folder / "results.json")
        paths.append(folder / "results.json")
    result = headtohead.suite(paths).result
    for entry in result.datasets:
        seeds = entry.seeds
        assert seeds is not None and seeds.seeds == [0, 1, 2, 3, 4]
        (pair,) = seeds.pairs
        assert pair.t_p_value is not None and pair.aso_a_over_b is not None and pair.aso_b_over_a is not None
        assert pair.aso_confidence == pytest.approx(1 - 0.05 / 3)  # Bonferroni over three data sets
        assert 0 <= pair.seed_share <= 1 and all(m.test_set_se > 0 for m in seeds.models)
        assert entry.scores["roberta"] == pytest.approx(np.mean(seeds.models[1].mean))  # the mean over seeds
    assert result.pair("bert", "roberta").wins_b == 3


def test_a_table_of_scores_from_python(tmp_path):
    table = pd.DataFrame(
        {
            "dataset": ["a", "b", "c", "d", "e", "f"],
            "x": [0.81, 0.72, 0.93, 0.64, 0.85, 0.79],
            "y": [0.80, 0.70, 0.90, 0.60, 0.83, 0.78],
        }
    )
    outcome = headtohead.suite(scores=table, out_dir=tmp_path / "s", rope=0.005)
    pair = outcome.result.pairs[0]
    assert pair.winner == "x" and pair.wilcoxon_p == pytest.approx(2 / 64) and outcome.result.rope == 0.005
    assert outcome.result.metric == "score" and (tmp_path / "s" / "suite.html").is_file()
    text = repr(outcome)
    assert text.startswith("SuiteOutcome 'scores' — 2 models: x, y · 6 data sets") and "x vs y" in text
    html = outcome._repr_html_()
    assert "<table" in html and "average rank" in html and "<script" not in html


def test_bad_inputs_raise_one_line(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("dataset,a,b\nx,0.1,0.2\nx,0.3,0.4\n")
    with pytest.raises(DataError, match=r"line 3: data set 'x' appears twice"):
        headtohead.suite(scores=table)
    table.write_text("name,a,b\nx,0.1,0.2\n")
    with pytest.raises(DataError, match="no 'dataset' column"):
        headtohead.suite(scores=table)
    table.write_text("dataset,a,b\nx,0.1,n/a\n")
    with pytest.raises(DataError, match="column b: 'n/a' is not a number"):
        headtohead.suite(scores=table)
    with pytest.raises(ConfigError, match="nothing to compare"):
        headtohead.suite()
    with pytest.raises(ConfigError, match="not two of them"):
        headtohead.suite("suite.yaml", scores=table)
    with pytest.raises(ResultsError, match="no such results.json"):
        headtohead.suite([tmp_path / "a", tmp_path / "b"])


def test_a_table_with_a_seed_column_gets_the_seed_analysis(tmp_path):
    rows = ["dataset,seed,a,b"]
    rng = np.random.default_rng(0)
    for d in ("u", "v", "w", "x", "y", "z"):
        level = rng.uniform(0.7, 0.9)  # data sets differ; within one, seeds move each model by about 0.5 pp
        for seed in range(5):
            rows.append(f"{d},{seed},{level + 0.03 + rng.normal(0, 0.005):.4f},{level + rng.normal(0, 0.005):.4f}")
    (tmp_path / "seeds.csv").write_text("\n".join(rows) + "\n")
    result = headtohead.suite(scores=tmp_path / "seeds.csv").result
    entry = result.dataset("u")
    (pair,) = entry.seeds.pairs
    assert entry.seeds.seeds == [0, 1, 2, 3, 4] and pair.mean_difference == pytest.approx(0.03, abs=0.01)
    assert pair.aso_a_over_b < 0.2 and pair.aso_b_over_a > 0.8 and pair.t_p_value < 0.01
    assert pair.seed_share is None and entry.seeds.models[0].test_set_se is None  # a table has no test-set interval
    assert pair.aso_confidence == pytest.approx(1 - 0.05 / 6)  # Bonferroni over six data sets
    assert entry.scores["a"] == pytest.approx(entry.seeds.models[0].mean)  # the mean over seeds
    assert result.pairs[0].wins_a == 6
