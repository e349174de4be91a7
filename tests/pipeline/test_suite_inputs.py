"""What a suite takes in, as carefully as a run: a model column named twice, the same data given twice, a baseline
that is not a model; and what it gives out for a paper (``suite.tex``, ``cd.svg``, ``cd.pdf``)."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET

import pandas as pd
import pytest
from sim.sample import sample_run

import headtohead
from headtohead.errors import ConfigError, DataError, ResultsError
from headtohead.report.formats.latex import latex_escape
from headtohead.report.rows.suite import control_columns, control_rows
from headtohead.report.words.numbers import format_p
from headtohead.report.words.suite import control_sentences
from headtohead.results import save_result

TABLE = pd.DataFrame(
    {
        "dataset": ["a", "b", "c", "d", "e", "f", "g"],
        "x": [0.81, 0.72, 0.93, 0.64, 0.85, 0.79, 0.70],
        "y": [0.80, 0.70, 0.90, 0.60, 0.83, 0.78, 0.69],
        "z": [0.60, 0.52, 0.71, 0.40, 0.62, 0.58, 0.50],
    }
)


def test_a_model_column_named_twice_is_refused_not_kept_last(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("dataset,a,a,c\nx,0.1,0.2,0.3\ny,0.3,0.4,0.5\n")
    with pytest.raises(DataError, match=r"t\.csv: column 'a' appears 2 times in the header") as info:
        headtohead.suite(scores=table)
    assert "\n" not in str(info.value)
    frame = pd.DataFrame([["x", 0.1, 0.2, 0.3], ["y", 0.3, 0.4, 0.5]], columns=["dataset", "a", "a", "c"])
    with pytest.raises(DataError, match="the scores table: column 'a' appears 2 times"):
        headtohead.suite(scores=frame)
    (tmp_path / "t.tsv").write_text("dataset\ta\tb\tdataset\nx\t0.1\t0.2\tx\n")
    with pytest.raises(DataError, match="column 'dataset' appears 2 times"):
        headtohead.suite(scores=tmp_path / "t.tsv")


def test_a_column_that_differs_only_in_surrounding_spaces_is_refused_and_a_lone_one_read_stripped(tmp_path):
    """``a `` beside ``a`` printed as two models both shown as ``a``: refused, naming both; ``a `` alone is ``a``."""
    table = tmp_path / "t.csv"
    table.write_text("dataset,a,a ,c\nx,0.1,0.2,0.3\ny,0.3,0.4,0.5\nz,0.2,0.1,0.6\n")
    with pytest.raises(DataError) as info:
        headtohead.suite(scores=table)
    said = str(info.value)
    assert said == (
        f"--scores {table}: columns 'a' and 'a ' differ only in spaces around the name, so they would read as "
        f"one model listed twice; rename one of them or drop the copy"
    )
    frame = pd.DataFrame([["x", 0.1, 0.2], ["y", 0.3, 0.4]], columns=["dataset", " b", "b\t"])
    with pytest.raises(DataError, match=r"the scores table: columns ' b' and 'b\\t' differ only in spaces"):
        headtohead.suite(scores=frame)
    table.write_text(" dataset ,a , B,b\nx,0.1,0.2,0.3\ny,0.3,0.4,0.5\nz,0.2,0.1,0.6\n")
    result = headtohead.suite(scores=table).result  # each name read stripped; case kept: B and b are two models
    assert result.models == ["a", "B", "b"] and [d.name for d in result.datasets] == ["x", "y", "z"]
    assert result.dataset("y").scores == {"a": 0.3, "B": 0.4, "b": 0.5}


def test_the_same_data_given_twice_is_refused(tmp_path):
    """Two run folders of the same data (one copied) would count as two data sets: N and every p would be wrong."""
    paths = []
    for i in range(3):
        result, _ = sample_run({"a": 0.8, "b": 0.85}, n_examples=300, seed=i, speed=False, n_resamples=100)
        (tmp_path / f"r{i}").mkdir()
        save_result(result, tmp_path / f"r{i}" / "results.json")
        paths.append(tmp_path / f"r{i}" / "results.json")
    assert headtohead.suite(paths).result.n_datasets == 3  # distinct data: accepted
    shutil.copytree(tmp_path / "r1", tmp_path / "r1-again")
    with pytest.raises(ResultsError, match=r"data sets 'r1' and 'r1-again' hold the same data \(fingerprint ") as info:
        headtohead.suite([*paths, tmp_path / "r1-again"])
    assert "give each data set once" in str(info.value) and "\n" not in str(info.value)


def test_identical_scores_on_two_data_sets_of_a_table_are_warned_about():
    copied = pd.concat([TABLE, TABLE.iloc[[2]].assign(dataset="c-copy")], ignore_index=True)
    result = headtohead.suite(scores=copied).result
    assert result.n_datasets == 8
    assert any(w.startswith("Identical scores for every model on c and c-copy") for w in result.warnings)
    assert not any("Identical scores" in w for w in headtohead.suite(scores=TABLE).result.warnings)


def test_a_baseline_gives_holm_over_k_minus_1_and_its_words():
    result = headtohead.suite(scores=TABLE, baseline="z").result
    assert result.baseline == "z" and [c.model for c in result.control] == ["x", "y"]
    for c in result.control:  # 7 of 7 better: Wilcoxon p = 2/128 each, Holm over 2
        assert c.wins == 7 and c.wilcoxon_p == pytest.approx(2 / 128) and c.holm_p == pytest.approx(4 / 128)
        assert c.significant and c.winner == c.model
    assert result.pair("x", "z").holm_p == pytest.approx(6 / 128)  # over every pair: 3
    said = " ".join(result.verdict)
    assert (
        "Against the baseline z, decided by the Wilcoxon signed-rank test (Holm over 2 comparisons, α = 0.05): "
        "x is better" in said
    )
    assert "Demšar's rank test with a control (average ranks, Holm over 2), a view that does not decide: " in said
    with pytest.raises(ConfigError, match=r"--baseline zz: not one of the models — did you mean z\?"):
        headtohead.suite(scores=TABLE, baseline="zz")
    assert headtohead.suite(scores=TABLE).result.control == []


def test_when_the_two_tests_against_the_baseline_disagree_the_words_say_which_decides():
    """x beats the baseline z on 7 of 7 data sets (Wilcoxon: better), but y sits between them on every data set, so
    x's average rank is 1 from z's: Demšar's rank test does not find it. The deciding test comes first, the rank
    test is worded as a view that does not decide, and one clause says they disagree and which verdict stands."""
    table = TABLE.assign(y=TABLE["x"] + 0.05)  # y best everywhere, x second, z last
    result = headtohead.suite(scores=table, baseline="z").result
    x, y = result.control
    assert (x.model, x.significant, x.winner, x.rank_significant) == ("x", True, "x", False)
    assert (y.model, y.significant, y.rank_significant) == ("y", True, True)
    decided, view = control_sentences(result)
    assert decided.startswith(
        "Against the baseline z, decided by the Wilcoxon signed-rank test (Holm over 2 comparisons, α = 0.05): "
        "x is better (better on 7 of 7 data sets"
    )
    assert view == (
        "Demšar's rank test with a control (average ranks, Holm over 2), a view that does not decide: the average "
        f"rank of y differs from z's (Holm p {format_p(y.rank_holm_p).removeprefix('= ')}); for x the two tests "
        "disagree, and the Wilcoxon verdict above stands (average ranks move with the other models in the suite; "
        "the Wilcoxon test reads the two models' scores only)."
    )
    assert result.verdict[-2:] == [decided, view]
    columns = [c.label for c in control_columns(result)]
    assert columns.index("Wilcoxon Holm p (decides)") < columns.index("rank test Holm p (does not decide)")
    (row_x, _) = control_rows(result)
    assert row_x.get("holm_p").mark == "✓" and row_x.get("rank_holm_p").mark is None
    agreeing = headtohead.suite(scores=TABLE[["dataset", "x", "z"]], baseline="z").result  # both find x: no clause
    (c,) = agreeing.control
    assert c.significant and c.rank_significant and "disagree" not in " ".join(control_sentences(agreeing))


def test_practically_better_pairs_are_named():
    result = headtohead.suite(scores=TABLE, rope=0.01).result
    line = next(v for v in result.verdict if v.startswith("Practically better"))
    assert "x than z" in line and "y than z" in line  # 20 points apart on every data set
    assert result.pair("x", "z").p_a_better >= 0.95


def test_a_papers_table_and_vector_diagram_are_written_beside_the_report(tmp_path):
    odd = TABLE.rename(columns={"x": "BERT_base & 50%", "y": "y"})
    outcome = headtohead.suite(scores=odd, metric="accuracy", baseline="z", out_dir=tmp_path, name="my suite")
    assert {"suite.html", "suite.tex", "cd.svg", "cd.pdf"} <= {p.name for p in tmp_path.iterdir()}
    tex = (tmp_path / "suite.tex").read_text()
    assert tex.count(r"\begin{tabular}") == 3 and tex.count(r"\toprule") == 3 and tex.count(r"\bottomrule") == 3
    assert r"\label{tab:my-suite-scores}" in tex and r"\label{tab:my-suite-baseline}" in tex
    assert r"BERT\_base \& 50\%" in tex and "BERT_base & 50%" not in tex
    assert r"\textbf{81.0 (1)}" in tex  # accuracy in % (the caption says so), the best of data set a in bold
    ranks = outcome.result.average_ranks
    assert f"Average rank & \\textbf{{{ranks['BERT_base & 50%']:.2f}}}" in tex
    for line in tex.splitlines():
        if line.endswith(r"\\"):  # every row has as many cells as its tabular has columns
            assert line.count(" & ") + 1 in (4, 8, 6)
        bare = line.replace(r"\{", "").replace(r"\}", "")
        assert bare.count("{") == bare.count("}"), line  # every group closes on its line
    root = ET.fromstring((tmp_path / "cd.svg").read_bytes())
    assert root.tag.endswith("svg") and root.find(".//{http://www.w3.org/2000/svg}path") is not None
    pdf = (tmp_path / "cd.pdf").read_bytes()
    assert pdf.startswith(b"%PDF-") and b"/Subtype /Image" not in pdf  # vector: no raster image inside
    assert (
        pdf == (headtohead.suite(scores=odd, baseline="z", out_dir=tmp_path / "again").out_dir / "cd.pdf").read_bytes()
    )


def test_latex_escape_covers_every_special_character():
    assert latex_escape("a_b&c%d$e#f{g}h~i^j\\k") == (
        r"a\_b\&c\%d\$e\#f\{g\}h\textasciitilde{}i\textasciicircum{}j\textbackslash{}k"
    )


def test_a_suite_file_names_its_baseline_under_across(tmp_path):
    from headtohead.config.suite import suite_from_dict

    suite = {
        "datasets": [{"name": "a", "data": {"path": "sklearn:iris"}}, {"name": "b", "data": {"path": "sklearn:wine"}}],
        "models": [
            {"name": "x", "kind": "sklearn", "source": "x.skops"},
            {"name": "y", "kind": "sklearn", "source": "y.skops"},
        ],
        "across": {"baseline": "y"},
    }
    assert suite_from_dict(suite).across.baseline == "y"
    with pytest.raises(ConfigError, match="across.baseline: 'z' is not one of the models"):
        suite_from_dict({**suite, "across": {"baseline": "z"}})


def test_a_table_metric_is_free_text_unless_a_catalogue_name_or_a_misspelling_of_one():
    """A catalogue name keeps its direction on a table too (brier: lower is better); a misspelt one is refused."""
    from headtohead.pipeline.suite_inputs import metric_direction

    assert metric_direction("auc", None, table=True) is True  # a table's own metric: higher unless told
    assert metric_direction("rank", True, table=True) is False
    assert metric_direction("brier", None, table=True) is False  # was higher-is-better on a table
    with pytest.raises(ConfigError, match=r"^--metric acuracy: not a catalogue metric .* did you mean accuracy\?"):
        metric_direction("acuracy", None, table=True)
    with pytest.raises(ConfigError, match="higher is better for accuracy"):
        metric_direction("accuracy", True, table=True)
    table = TABLE.head(1)
    with pytest.raises(DataError, match=r"^the scores table: one data set \(a\); a suite compares models across at"):
        headtohead.suite(scores=table)


def _gaps_of_a_third_of_a_point(scale: float) -> pd.DataFrame:
    """Two models 0.3 points apart on seven data sets (issue 41: "practically better (1.00)" on a 0–100 table)."""
    x = [81.3, 72.4, 93.1, 64.8, 85.2, 79.9, 70.6]
    return pd.DataFrame(
        {"dataset": list("abcdefg"), "x": [v * scale / 100 for v in x], "y": [(v - 0.3) * scale / 100 for v in x]}
    )


def test_a_percent_table_of_a_share_metric_reads_as_shares_and_gives_the_same_verdict():
    shares = headtohead.suite(scores=_gaps_of_a_third_of_a_point(1.0), metric="accuracy").result
    percent = headtohead.suite(scores=_gaps_of_a_third_of_a_point(100.0), metric="accuracy").result
    assert shares.scale is None and percent.scale == "percent"
    assert percent.dataset("a").scores["x"] == pytest.approx(0.813)  # not 81.3 (written "8130.0 %")
    assert percent.verdict == shares.verdict
    pair = percent.pair("x", "y")
    assert (
        pair.p_equivalent == pytest.approx(shares.pair("x", "y").p_equivalent) and pair.p_equivalent > 0.95
    )  # equivalent
    from headtohead.report.formats.terminal import render_text
    from headtohead.report.sections.suite import suite_terminal

    text = render_text(suite_terminal(percent), 140)
    assert "81.3 %" in text and "8130" not in text
    assert text.count("values are percent (0–100), read as shares (divided by 100)") == 1  # said once
    assert "percent (0–100)" not in render_text(suite_terminal(shares), 140)


def test_a_table_of_unknown_scale_beyond_one_needs_its_rope():
    """The default ROPE, 0.01 of the metric's units, called 0.3-point gaps 'practically better (1.00)'."""
    with pytest.raises(DataError, match=r"the values run from 64\.5 to 93\.1 .* give --rope in the table's units"):
        headtohead.suite(scores=_gaps_of_a_third_of_a_point(100.0))
    shares = headtohead.suite(scores=_gaps_of_a_third_of_a_point(1.0)).result
    points = headtohead.suite(scores=_gaps_of_a_third_of_a_point(100.0), rope=1.0).result  # one point
    assert points.scale is None and points.dataset("a").scores["x"] == pytest.approx(81.3)
    assert (
        points.pair("x", "y").p_equivalent == pytest.approx(shares.pair("x", "y").p_equivalent)
        and points.pair("x", "y").p_equivalent > 0.95
    )
    assert not any("Practically better" in v for v in points.verdict)
