"""HTML, Markdown and CSV reports, several runs merged, write_reports and the `h2h report` command."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pandas as pd
import pytest
import typer
from sim.sample import sample_environment, sample_run, sample_training
from typer.testing import CliRunner

from headtohead.cli.report import report
from headtohead.errors import ConfigError, ResultsError
from headtohead.report.merge import RunEntry, load_runs, merge_runs
from headtohead.report.sections.run.summary import ID_COLUMNS
from headtohead.report.words.verdict import build_verdict
from headtohead.report.write import render_csv, render_html, render_markdown, write_outputs, write_reports
from headtohead.results import save_result


@pytest.fixture(scope="module")
def full():
    return sample_run({"bert": 0.84, "roberta": 0.92}, n_examples=800, n_resamples=200)


@pytest.fixture(scope="module")
def full_html(full):
    result, predictions = full
    return render_html(result, predictions=predictions)


def _images(html: str) -> list[str]:
    return re.findall(r'<img src="([^"]+)"', html)


def test_html_is_one_self_contained_file_verdict_first(full, full_html):
    result, _ = full
    html = full_html
    assert html.startswith("<!DOCTYPE html>")
    assert "<script" not in html.lower()
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    # nothing is loaded from anywhere: every image is a data: URI, no link/stylesheet/font URL
    assert not re.search(r'(src|href)="(?!data:|#)', html)
    images = _images(html)
    assert len(images) == 7 and all(src.startswith("data:image/svg+xml;base64,") for src in images)
    assert all(base64.b64decode(src.split(",", 1)[1]).lstrip().startswith(b"<?xml") for src in images)
    # the verdict (worded from the records) comes before the summary, then details, then the environment
    headline = build_verdict(result).headline[0]
    order = [
        html.index(s)
        for s in ('id="verdict"', headline.text.replace("…", "…"), 'id="summary"', 'id="run1"', 'id="environment"')
    ]
    assert order == sorted(order)


def test_html_summary_shows_every_metric_with_its_interval(full, full_html):
    result, _ = full
    acc = result.stats.model("roberta").accuracy
    assert f"{100 * acc.value:.1f} % ({100 * acc.low:.1f}–{100 * acc.high:.1f})" in full_html
    for label in ("accuracy", "macro-F1", "ECE", "latency p50 (ms, batch 1)", "throughput (examples/s)"):
        assert f"<th>{label} " in full_html


def test_html_leaves_out_sections_that_do_not_exist():
    result, _ = sample_run(n_examples=200, stats=False, speed=False)
    html = render_html(result)
    assert len(_images(html)) == 2  # confusion matrices and per-class F1 only
    assert "Paired comparisons" not in html and "Speed and memory" not in html and 'id="overview"' not in html
    assert "no winner is declared" in html


def test_markdown_has_verdict_tables_and_png_files(full):
    result, predictions = full
    text, images = render_markdown(result, predictions=predictions, image_folder="r_files")
    assert text.startswith("# sample-comparison\n")
    assert text.index("## Verdict") < text.index("## Summary") < text.index("## Details") < text.index("## Environment")
    assert "| metric | bert | roberta |" in text
    linked = re.findall(r"!\[[^\]]*\]\(r_files/([^)]+)\)", text)
    assert sorted(linked) == sorted(images) and len(images) == 7
    assert all(data.startswith(b"\x89PNG") for data in images.values())


def test_csv_has_one_row_per_model_and_run_and_one_column_per_metric(full):
    result, _ = full
    other, _ = sample_run({"bert": 0.8, "distil": 0.7}, n_examples=300, speed=False, name="other-run", n_resamples=200)
    text = render_csv([result, other])
    table = pd.read_csv(__import__("io").StringIO(text), float_precision="round_trip")  # every digit back
    assert list(table.columns[: len(ID_COLUMNS)]) == list(ID_COLUMNS)
    assert list(zip(table["run"], table["model"])) == [
        ("sample-comparison", "bert"),
        ("sample-comparison", "roberta"),
        ("other-run", "bert"),
        ("other-run", "distil"),
    ]
    roberta = table[table["model"] == "roberta"].iloc[0]
    est = result.stats.model("roberta").accuracy
    assert roberta["accuracy"] == pytest.approx(result.model("roberta").quality.accuracy, abs=0)
    assert (roberta["accuracy_ci_low"], roberta["accuracy_ci_high"]) == pytest.approx((est.low, est.high), abs=0)
    assert roberta["offline_throughput_per_s"] == pytest.approx(result.speed.model("roberta").offline.throughput_per_s)
    assert table[table["run"] == "other-run"]["offline_throughput_per_s"].isna().all()  # no speed in that run


def test_merging_groups_by_machine_and_warns_about_versions_and_data(tmp_path):
    a, _ = sample_run(
        n_examples=200, speed=False, n_resamples=200, name="cpu-box", environment=sample_environment("box-a")
    )
    b, _ = sample_run(
        n_examples=200,
        speed=False,
        n_resamples=200,
        name="gpu-box",
        environment=sample_environment("box-b", torch="2.3.0"),
    )
    c, _ = sample_run(
        n_examples=300, speed=False, n_resamples=200, name="again-a", environment=sample_environment("box-a")
    )
    paths = []
    for result in (a, b, c):
        save_result(result, tmp_path / result.name / "results.json")
        paths.append(tmp_path / result.name)
    merged = merge_runs(load_runs(paths))
    assert [[r.label for r in g.runs] for g in merged.groups] == [["cpu-box", "again-a"], ["gpu-box"]]
    torch_warning = next(w for w in merged.warnings if w.startswith("torch version differs"))
    assert "torch version differs: cpu-box, again-a 2.14.1; gpu-box 2.3.0 — " in torch_warning
    assert any("different data" in w for w in merged.warnings)
    html = render_html(merged)
    assert html.count("torch version differs") == 1 and "box-a — Sample CPU" in html
    across = html[html.index(">Across runs</h3>") : html.index('id="run1"')]
    # a model's rows sit together, one per run, in group order
    assert [m for m in re.findall(r"<tr><td[^>]*>(?:<span[^>]*></span>)?(\w+)</td><td[^>]*>([\w-]+)</td>", across)] == [
        ("bert", "cpu-box"),
        ("bert", "again-a"),
        ("bert", "gpu-box"),
        ("roberta", "cpu-box"),
        ("roberta", "again-a"),
        ("roberta", "gpu-box"),
    ]
    text, _ = render_markdown(merged)
    assert "### Across runs" in text


def test_runs_with_the_same_name_are_told_apart(tmp_path):
    for host in ("h1", "h2"):
        result, _ = sample_run(n_examples=200, speed=False, stats=False, environment=sample_environment(host))
        save_result(result, tmp_path / host / "results.json")
    runs = load_runs([tmp_path / "h1" / "results.json", tmp_path / "h2"])
    assert [r.label for r in runs] == ["sample-comparison @ h1", "sample-comparison @ h2"]


def test_missing_results_file_is_a_one_line_error(tmp_path):
    with pytest.raises(ResultsError, match=r"no such results file; pass a results.json") as info:
        load_runs([tmp_path / "nope.json"])
    assert "\n" not in str(info.value)


def test_write_reports_writes_report_html_beside_the_results(full, tmp_path):
    result, predictions = full
    path = write_reports(result, tmp_path, predictions=predictions)
    assert path == tmp_path / "report.html" and "<!DOCTYPE html>" in path.read_text()


def test_write_outputs_checks_extensions(full, tmp_path):
    with pytest.raises(ConfigError, match=r"--md .*report.html: expected a file ending in .md"):
        write_outputs(full[0], markdown=tmp_path / "report.html")


def test_the_report_command_writes_every_format(full, tmp_path):
    result, predictions = full
    out = tmp_path / "run"
    save_result(result, out / "results.json")
    predictions.save(out / "predictions.npz")
    app = typer.Typer()
    app.command("report")(report)
    app.command("other")(lambda: None)  # two commands, so "report" is a sub-command as in h2h
    cli = CliRunner()
    done = cli.invoke(
        app,
        [
            "report",
            str(out / "results.json"),
            "--html",
            str(tmp_path / "r.html"),
            "--md",
            str(tmp_path / "r.md"),
            "--csv",
            str(tmp_path / "t.csv"),
        ],
    )
    assert done.exit_code == 0, done.output
    for name in ("r.html", "r.md", "t.csv", "r_files/run1-confusion.png"):
        assert (tmp_path / name).is_file(), name
    default = cli.invoke(app, ["report", str(out)])
    assert default.exit_code == 0 and (out / "report.html").is_file()
    assert Path(str(out / "report.html")).read_text().count("<img ") == 7


def test_training_adds_its_table_curves_seed_chart_and_seed_verdict(full, tmp_path):
    result, predictions = full
    training = sample_training({"bert": 0.84, "roberta": 0.92}, seeds=(0, 1, 2))
    html = render_html(
        merge_runs([RunEntry(result=result, label="trained", predictions=predictions, training=training)])
    )
    assert 'id="run1-training"' in html and 'id="run1-seeds"' in html
    assert ">Training</h3>" in html and "every model saw the same examples in the same order" in html
    seed = training.multi_seed.comparisons[0]
    assert seed.significant
    assert "mean accuracy over bert across 3 seeds (paired t p" in html


def test_training_json_beside_the_results_is_picked_up(full, tmp_path):
    from headtohead.results.training_file import TrainingResult

    result, _ = full
    save_result(result, tmp_path / "results.json")
    record = TrainingResult(
        headtohead_version="0.1.0",
        name="t",
        created_at="now",
        environment=result.environment,
        training=sample_training(seeds=(0,)),
    )
    (tmp_path / "training.json").write_text(record.model_dump_json())
    (entry,) = load_runs([tmp_path])
    assert entry.training is not None and entry.training.seeds == [0]
    (tmp_path / "training.json").write_text("{not json")
    with pytest.raises(ResultsError, match=r"training.json"):
        load_runs([tmp_path])


def test_a_speed_only_run_reports_speed_without_quality():
    result, _ = sample_run(n_examples=200, stats=False)
    bench = result.model_copy(
        update={
            "models": [
                m.model_copy(
                    update={"quality": None, "label_alignment": None, "eval_time_s": None, "label_columns": None}
                )
                for m in result.models
            ]
        }
    )
    html = render_html(bench)
    assert "Speed and memory" in html and "Confusion matrices" not in html and "Per-class quality" not in html
    assert [line.kind for line in build_verdict(bench).headline] == ["speed", "speed"]
    assert "accuracy ↑" not in html and "latency p50 (ms, batch 1)" in html


def test_the_report_command_turns_a_missing_file_into_a_one_line_error(tmp_path):
    app = typer.Typer()
    app.command("report")(report)
    app.command("other")(lambda: None)
    done = CliRunner().invoke(app, ["report", str(tmp_path / "missing.json")])
    assert done.exit_code != 0 and isinstance(done.exception, ResultsError)
    assert "missing.json: no such results file" in str(done.exception)
