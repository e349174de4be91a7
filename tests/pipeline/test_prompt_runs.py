"""A model asked with several prompts (``prompts:``), against the scripted server: each prompt one pass, pooled.

Five templates, each marked (``P1`` … ``P5``), make the scripted server right on a known number of
the 40 examples (20, 24, 28, 32, 36: accuracy 50 … 90 %); a second model, asked with one prompt,
is right on 28 (70 %, the prompts' mean). The per-prompt accuracies are exact, the pooled gap is
0 and undecided, the best prompt is named as chosen, and the reports show it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

import headtohead
from headtohead.errors import AnswersMissing
from headtohead.report.rows.summary import summary_rows
from headtohead.report.sections.run.summary import summary_texts
from headtohead.report.write import render_markdown
from headtohead.testing.chat_server import Reply, ScriptedChatServer, last_prompt_text
from headtohead.testing.data import make_text_rows, write_text_table

LABELS = ("negative", "positive")
RIGHT = {"P1": 20, "P2": 24, "P3": 28, "P4": 32, "P5": 36, "B0": 28, "W0": 8}


@pytest.fixture()
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("H2H_CACHE_DIR", str(tmp_path / "cache"))
    rows = make_text_rows(20, classes=LABELS, seed=7)
    write_text_table(tmp_path / "dev.csv", rows)
    return tmp_path, {r["text"]: r["label"] for r in rows}


class Graded:
    """Right on the first ``RIGHT[marker]`` examples (texts in sorted order), wrong on the rest."""

    def __init__(self, truth: dict[str, str]) -> None:
        self.truth, self.rank = truth, {t: i for i, t in enumerate(sorted(truth))}

    def __call__(self, number, payload) -> Reply:
        prompt = last_prompt_text(payload)
        text = max((t for t in self.truth if t in prompt), key=len)
        marker = prompt.split()[0]
        label = self.truth[text]
        if self.rank[text] >= RIGHT[marker]:
            label = LABELS[1 - LABELS.index(label)]
        return Reply(text=label)


def _experiment(root: Path, url: str, *others: str) -> dict:
    endpoint = {"kind": "openai", "source": "scripted", "base_url": url, "max_concurrency": 4, "timeout_s": 5}
    return {
        "name": "prompts",
        "data": {"path": str(root / "dev.csv")},
        "models": [
            {"name": "llm", **endpoint, "prompts": [f"P{k} {{text}} ({{labels}})" for k in range(1, 6)]},
            {"name": "base", **endpoint, "prompt": "B0 {text}"},
            *({"name": marker.lower(), **endpoint, "prompt": f"{marker} {{text}}"} for marker in others),
        ],
        "eval": {"batch_size": 8, "device": "cpu"},
        "stats": {"n_resamples": 200},
    }


def test_each_prompt_is_a_pass_with_its_exact_accuracy_and_the_pooled_verdict_is_undecided(data):
    root, truth = data
    out = root / "out"
    with ScriptedChatServer(Graded(truth)) as server:
        exp = _experiment(root, server.base_url)
        (root / "exp.yaml").write_text(yaml.safe_dump(exp))
        run = headtohead.run(root / "exp.yaml", out_dir=out, report=True)
        assert server.counts.requests == 6 * 40  # one pass per prompt, the same 40 examples each

    result = headtohead.load_result(out / "results.json")
    assert result.schema_version == 9
    prompts = result.stats.prompts
    family = prompts.families[0]
    assert family.name == "llm" and [p.model for p in family.prompts] == [f"llm@p{k}" for k in range(1, 6)]
    assert [p.accuracy for p in family.prompts] == [20 / 40, 24 / 40, 28 / 40, 32 / 40, 36 / 40]  # exact
    assert [p.correct for p in family.prompts] == [20, 24, 28, 32, 36]
    assert family.mean_accuracy == pytest.approx(0.7) and family.best == "llm@p5"
    assert [result.model("llm").pass_record(f"p{k}").quality.accuracy for k in (1, 5)] == [0.5, 0.9]
    (pool,) = prompts.pools
    assert (pool.model_a, pool.model_b, pool.n_prompts_a, pool.n_prompts_b) == ("llm", "base", 5, 1)
    assert pool.estimate == pytest.approx(0.0) and pool.low < 0 < pool.high and pool.winner is None
    assert (pool.ahead_a, pool.ahead_b) == (2, 2)  # p4 and p5 ahead, p1 and p2 behind, p3 tied
    text = " ".join(prompts.sentences)
    assert "chosen after seeing these examples" in text and "ahead on 2 of 5 prompts" in text
    assert run.result.stats.prompts == prompts
    html = (out / "report.html").read_text()
    markdown, _ = render_markdown(result)
    for page in (html, markdown):
        assert "Prompts as a source of noise" in page and "llm@p5" in page and "chosen after seeing" in page
    assert json.loads((out / "results.json").read_text())["stats"]["prompts"]["families"][0]["name"] == "llm"


def test_a_pass_is_never_compared_or_ranked_as_a_model(data):
    """llm (5 prompts), base (70 %) and w0 (20 %): three models, three comparisons in one Holm family."""
    from statsmodels.stats.multitest import multipletests

    from headtohead.report.words.quality import verdict_lines
    from headtohead.report.words.verdict import build_verdict

    root, truth = data
    out = root / "out"
    with ScriptedChatServer(Graded(truth)) as server:
        (root / "exp.yaml").write_text(yaml.safe_dump(_experiment(root, server.base_url, "W0")))
        headtohead.run(root / "exp.yaml", out_dir=out, report=True)
    result = headtohead.load_result(out / "results.json")
    stats = result.stats

    # every pass keeps its record and its intervals, within its model's: they are real passes of one model
    assert [m.name for m in result.models] == ["llm", "base", "w0"]
    assert [p.key for p in result.model("llm").passes] == [f"p{k}" for k in range(1, 6)]
    assert {m.name for m in stats.models} == {m.name for m in result.models}
    assert [p.name for p in stats.model("llm").passes] == [f"llm@p{k}" for k in range(1, 6)]
    # the ordinary pairs: models asked with one prompt only (no pass against a pass, nor against a model)
    assert [(c.model_a, c.model_b) for c in stats.comparisons] == [("base", "w0")]
    # one Holm family: one comparison per pair of models (3), not C(7, 2) = 21 pairs of passes
    pools = stats.prompts.pools
    assert [(p.model_a, p.model_b) for p in pools] == [("llm", "base"), ("llm", "w0")]
    assert stats.prompts.family_size == 3
    raw = [stats.comparisons[0].p_value, pools[0].p_value, pools[1].p_value]
    holm = multipletests(raw, method="holm")[1]
    assert [stats.comparisons[0].p_adjusted, pools[0].p_adjusted, pools[1].p_adjusted] == pytest.approx(holm)
    # the slices: every pass's accuracy per slice, pairs (and their Holm family) only of models
    assert all(
        len(r.accuracies) == 7 and [(p.model_a, p.model_b) for p in r.pairs] == [("base", "w0")]
        for r in stats.slices.slices
    )
    assert stats.slices.n_tests == len(stats.slices.slices)
    assert [(d.model_a, d.model_b) for d in stats.disagreements] == [("base", "w0")]
    from headtohead.stats.power import minimum_detectable_effect

    mde = minimum_detectable_effect(40, stats.comparisons[0].discordance, power=0.8, alpha=0.05, n_comparisons=3)
    assert stats.comparisons[0].minimum_detectable_effect == pytest.approx(mde)  # quoted for the family of 3
    assert stats.comparisons[0].winner == "base" and pools[1].winner == "llm" and pools[0].winner is None
    # the ranking: llm once, by its mean over prompts (70 %), never a pass
    ranked = [(m, a) for g in stats.ranking for m, a in zip(g.models, g.accuracies, strict=True)]
    assert sorted(ranked) == sorted([("llm", pytest.approx(0.7)), ("base", 0.7), ("w0", 0.2)])
    assert [sorted(g.models) for g in stats.ranking] == [["base", "llm"], ["w0"]]
    lines = verdict_lines(stats) + [line.plain() for line in build_verdict(result).headline]
    for line in lines:
        if "llm@p" in line:  # a pass is named only as a chosen prompt, never as the model
            assert "chosen after seeing these examples" in line, line
    (ranking,) = [line for line in lines if line.startswith("Ranking by accuracy")]
    assert ranking.startswith(
        ("Ranking by accuracy (1. llm, base · 2. w0)", "Ranking by accuracy (1. base, llm · 2. w0)")
    )
    assert "pooled over prompts" in ranking
    assert any("Holm over 3 comparisons of models" in line for line in lines)
    # the summary table: llm once, its mean over prompts, not an interval; the passes only in the prompts section
    rows = summary_rows(result)
    assert list(rows) == ["llm", "base", "w0"]
    assert rows["llm"]["accuracy"].value == pytest.approx(0.7) and rows["llm"]["accuracy"].low is None
    assert summary_texts(result)["llm"]["accuracy"] == "70.0 % (mean of 5 prompts)"
    assert rows["llm"]["f1_macro"].value == pytest.approx(
        sum(stats.model("llm").passes[k].f1_macro.value for k in range(5)) / 5
    )
    markdown, _ = render_markdown(result)
    summary_table = markdown[markdown.index("| metric |") : markdown.index("Prompts as a source of noise")]
    assert "llm@p" not in summary_table.split("\n\n")[0]  # the table itself
    assert "llm: the mean of its 5 prompts' passes" in markdown
    assert "holm over all pairs and the 2 comparisons pooled over prompts (3 comparisons of models" in markdown


def test_a_suite_scores_a_prompted_model_by_its_mean_over_prompts(data):
    """``h2h suite`` (and a suite of finished runs): llm once per data set, its accuracy averaged over prompts."""
    root, first = data
    second = {r["text"]: r["label"] for r in make_text_rows(20, classes=LABELS, seed=8)}
    write_text_table(root / "dev2.csv", make_text_rows(20, classes=LABELS, seed=8))
    graded = Graded(first)
    graded.truth = {**first, **second}  # each data set's texts ranked within it: the same accuracies on both
    graded.rank |= {t: i for i, t in enumerate(sorted(second))}
    with ScriptedChatServer(graded) as server:
        exp = _experiment(root, server.base_url, "W0")
        paths = {"one": root / "dev.csv", "two": root / "dev2.csv"}
        suite = {
            "name": "prompted",
            "datasets": [{"name": n, "data": {"path": str(p)}} for n, p in paths.items()],
            **{k: exp[k] for k in ("models", "eval", "stats")},
            "speed": {"enabled": False},
        }
        (root / "suite.yaml").write_text(yaml.safe_dump(suite))
        made = headtohead.suite(root / "suite.yaml", out_dir=root / "suite").result
    read = headtohead.suite([root / "suite" / "one", root / "suite" / "two"], out_dir=root / "again").result
    for result in (made, read):
        assert result.models == ["llm", "base", "w0"]  # llm once, no pass
        for dataset in result.datasets:
            assert dataset.scores == pytest.approx({"llm": 0.7, "base": 0.7, "w0": 0.2})
            pooled = [v for v in dataset.verdicts if "llm" in (v.model_a, v.model_b)]
            assert [(v.model_a, v.model_b, v.winner) for v in pooled] == [("llm", "base", None), ("llm", "w0", "llm")]
            assert all("@" not in v.model_a + v.model_b for v in dataset.verdicts)


def test_the_terminal_table_shows_a_prompted_model_once_by_its_mean(data):
    """``h2h run``'s quality table: one row for llm, its mean over prompts, highlighted only as that."""
    from headtohead.report.formats.terminal import render_text
    from headtohead.report.sections.run import terminal_document

    root, truth = data
    with ScriptedChatServer(Graded(truth)) as server:
        (root / "exp.yaml").write_text(yaml.safe_dump(_experiment(root, server.base_url)))
        result = headtohead.run(root / "exp.yaml", out_dir=root / "out").result
    text = render_text(terminal_document(result), width=400)
    summary = text.split("Speed and memory")[0].split("Verdict")[0]
    assert "llm@p" not in summary
    (header,) = [line for line in summary.splitlines() if "llm" in line]  # one column for llm
    (accuracy,) = [line for line in summary.splitlines() if line.startswith("│ accuracy")]
    assert "70.0 % (mean of 5 prompts)" in accuracy and "90.0 %" not in summary


def test_until_decided_with_a_prompted_model_is_refused_in_one_line(data):
    root, _ = data
    exp = _experiment(root, "http://127.0.0.1:9/v1")
    exp["eval"]["until_decided"] = True
    (root / "exp.yaml").write_text(yaml.safe_dump(exp))
    with pytest.raises(headtohead.errors.ConfigError, match=r"llm is asked with several prompts.*drop --until-decided"):
        headtohead.load_experiment(root / "exp.yaml")


class OneTemplateDown(Graded):
    """As :class:`Graded`, but every request of template ``P3`` fails in transport (HTTP 503)."""

    def __call__(self, number, payload) -> Reply:
        if last_prompt_text(payload).startswith("P3 "):
            return Reply(kind="status", status=503)
        return super().__call__(number, payload)


def test_a_prompted_model_missing_one_prompts_answers_decides_nothing_and_its_other_passes_are_no_models(data):
    root, truth = data
    out = root / "out"
    with ScriptedChatServer(OneTemplateDown(truth)) as server:
        exp = _experiment(root, server.base_url, "W0")
        for model in exp["models"]:
            model["max_retries"] = 0
        (root / "exp.yaml").write_text(yaml.safe_dump(exp))
        with pytest.raises(AnswersMissing):
            headtohead.run(root / "exp.yaml", out_dir=out, report=True)

    result = headtohead.load_result(out / "results.json")
    assert result.missing.models == {"llm": 40}  # the model, whose pass p3 never came back
    assert [len(p.answers.missing) for p in result.model("llm").passes] == [0, 0, 40, 0, 0]
    stats = result.stats
    assert stats.prompts is None  # the model with a prompt unanswered is pooled with nothing
    named = {c.model_a for c in stats.comparisons} | {c.model_b for c in stats.comparisons}
    assert named == {"base", "w0"}  # no pass of llm stands in for the model
    ranked = {m for group in stats.ranking for m in group.models}
    assert ranked == {"base", "w0"}


def test_a_prompted_model_alone_missing_one_prompts_answers_leaves_no_statistics(data):
    root, truth = data
    out = root / "out"
    with ScriptedChatServer(OneTemplateDown(truth)) as server:
        exp = _experiment(root, server.base_url)
        exp["models"] = [dict(exp["models"][0], max_retries=0)]
        (root / "exp.yaml").write_text(yaml.safe_dump(exp))
        with pytest.raises(AnswersMissing):
            headtohead.run(root / "exp.yaml", out_dir=out, report=True)

    result = headtohead.load_result(out / "results.json")
    assert result.missing.models == {"llm": 40} and result.stats is None
    assert (out / "report.html").is_file()
