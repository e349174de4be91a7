"""A model measured several ways is one model with a passes axis: its record, predictions.npz, statistics and words.

The scripted server (as in ``test_prompt_runs``) is right on a known number of the 40 examples for
each template, marked ``P1`` … ``P5`` (20, 24, 28, 32, 36), and for ``base`` (28) and ``w0`` (8). The
numbers written as expectations here were printed by headtohead before passes existed (``main`` at
3c8f585, where the prompts were models ``llm@p1`` …) on this very run: the representation changed,
the statistics did not.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

import headtohead
from headtohead.adapters.prediction_files import write_prediction_file
from headtohead.cli.main import main
from headtohead.errors import AnswersMissing
from headtohead.results import Predictions
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

    def __init__(self, truth: dict[str, str], down: str | None = None) -> None:
        self.truth, self.rank, self.down = truth, {t: i for i, t in enumerate(sorted(truth))}, down
        self.asked: list[str] = []

    def __call__(self, number, payload) -> Reply:
        prompt = last_prompt_text(payload)
        marker = prompt.split()[0]
        self.asked.append(marker)
        if marker == self.down:  # this template's every request fails in transport
            return Reply(kind="status", status=503)
        text = max((t for t in self.truth if t in prompt), key=len)
        label = self.truth[text]
        if self.rank[text] >= RIGHT[marker]:
            label = LABELS[1 - LABELS.index(label)]
        return Reply(text=label)


def _experiment(root: Path, url: str, markers=(1, 2, 3, 4, 5), others=("W0",)) -> Path:
    endpoint = {"kind": "openai", "source": "scripted", "base_url": url, "max_concurrency": 4, "timeout_s": 5}
    exp = {
        "name": "passes",
        "data": {"path": str(root / "dev.csv")},
        "models": [
            {"name": "llm", **endpoint, "prompts": [f"P{k} {{text}} ({{labels}})" for k in markers]},
            {"name": "base", **endpoint, "prompt": "B0 {text}"},
            *({"name": m.lower(), **endpoint, "prompt": f"{m} {{text}}"} for m in others),
        ],
        "eval": {"batch_size": 8, "device": "cpu"},
        "stats": {"n_resamples": 200},
    }
    (root / "exp.yaml").write_text(yaml.safe_dump(exp))
    return root / "exp.yaml"


def test_a_prompted_model_is_one_record_with_its_passes_an_axis_in_predictions_and_todays_numbers(data):
    root, truth = data
    out = root / "out"
    with ScriptedChatServer(Graded(truth)) as server:
        run = headtohead.run(_experiment(root, server.base_url), out_dir=out)
    result = headtohead.load_result(out / "results.json")

    # results.json: llm once, its five passes inside, each with its key, factor, words and rendered template
    assert result.schema_version == 9 and [m.name for m in result.models] == ["llm", "base", "w0"]
    llm = result.model("llm")
    assert [(p.key, p.factor) for p in llm.passes] == [(f"p{k}", "prompt") for k in range(1, 6)]
    assert [p.template for p in llm.passes] == [f"P{k} {{text}} (negative, positive)" for k in range(1, 6)]
    assert [p.varies for p in llm.passes] == ["the prompt as written", *(f"listed template {k}" for k in (2, 3, 4, 5))]
    assert [p.quality.accuracy for p in llm.passes] == [0.5, 0.6, 0.7, 0.8, 0.9]
    assert llm.quality is None and llm.eval_time_s == pytest.approx(sum(p.eval_time_s for p in llm.passes))
    assert llm.answers.endpoint.requests == 200 and [p.answers.endpoint.requests for p in llm.passes] == [40] * 5
    raw = json.loads((out / "results.json").read_text())
    assert [m["name"] for m in raw["experiment"]["models"]] == ["llm", "base", "w0"]

    # predictions.npz: the passes along a leading axis, each pass's accuracy that of its record
    saved = Predictions.load(out / "predictions.npz")
    assert saved["llm"].pred.shape == (5, 40) and saved["llm"].passes == ("p1", "p2", "p3", "p4", "p5")
    assert saved["llm"].factor == "prompt" and saved["llm"].proba is None  # label-only answers
    per_pass = [float(saved["llm"].pass_(i).correct(saved.y_true).mean()) for i in range(5)]
    assert per_pass == [p.quality.accuracy for p in llm.passes]
    assert saved["base"].pred.shape == (40,) and saved["base"].passes == ()  # a model measured once: as before
    with np.load(out / "predictions.npz") as arrays:
        assert "passes_1" not in arrays.files and list(arrays["passes_0"]) == ["p1", "p2", "p3", "p4", "p5"]

    # the statistics: the numbers main printed before passes existed, to the last digit
    stats = result.stats
    pools = {(p.model_a, p.model_b): p for p in stats.prompts.pools}
    before = {
        ("llm", "base"): (0.0, -0.19170860522288308, 0.19170860522288308, 1.0, 1.0, 5.935983324739592),
        ("llm", "w0"): (
            0.49999999999999994,
            0.2884691601217573,
            0.7115308398782426,
            0.0001762899577598112,
            0.0003525799155196224,
            13.807030556610256,
        ),
    }
    for pair, numbers in before.items():
        p = pools[pair]
        assert (p.estimate, p.low, p.high, p.p_value, p.p_adjusted, p.df) == pytest.approx(numbers, rel=1e-12)
    assert pools[("llm", "w0")].se_examples == pytest.approx(0.06856760976765376, rel=1e-12)
    assert pools[("llm", "base")].se_prompts == pytest.approx(0.07071067811865477, rel=1e-12)
    (pair,) = stats.comparisons
    assert (pair.model_a, pair.model_b) == ("base", "w0")
    assert (pair.p_value, pair.p_adjusted, pair.minimum_detectable_effect) == pytest.approx(
        (7.744216431044088e-06, 2.3232649293132264e-05, 0.33971421405045293), rel=1e-12
    )
    p2 = stats.model("llm").passes[1]  # each pass's own bootstrap interval, seeded as before
    assert p2.name == "llm@p2" and (p2.f1_macro.low, p2.f1_macro.high) == pytest.approx(
        (0.43971560732822973, 0.7261335959043735), rel=1e-12
    )
    assert stats.model("llm").accuracy.value == pytest.approx(0.7) and stats.model("llm").accuracy.low is None
    assert repr(run).splitlines()[0].startswith("Run 'passes' — 3 models: llm (5 prompts), base, w0 · 40 examples")


def _pass_files(root: Path, saved: Predictions, name: str) -> list[str]:
    """Each pass of ``name`` in ``saved`` written as a prediction file, rows in the data's order."""
    order = np.argsort(saved.order, kind="stable")
    paths = []
    for i, model in enumerate(saved[name].each_pass()):
        path = root / f"{name}-{i + 1}.csv"
        labels = [LABELS[k] for k in model.pred[order]]
        write_prediction_file(path, None, labels)
        paths.append(str(path))
    return paths


def test_stored_prediction_files_as_passes_are_pooled_as_the_live_model_that_wrote_them(data):
    """Three files, one per prompt, given as one model's passes (YAML, and compare()): the live run's pooled numbers."""
    root, truth = data
    with ScriptedChatServer(Graded(truth)) as server:
        live = headtohead.run(_experiment(root, server.base_url, markers=(1, 3, 5), others=()), out_dir=root / "live")
    assert repr(live).splitlines()[0].startswith("Run 'passes' — 2 models: llm (3 prompts), base")
    saved = Predictions.load(root / "live" / "predictions.npz")
    files = _pass_files(root, saved, "llm")
    (base,) = _pass_files(root, Predictions(saved.order, saved.y_true, saved.label_names, {"b": saved["base"]}), "b")
    stored = {
        "name": "stored",
        "data": {"path": str(root / "dev.csv")},
        "models": [
            {"name": "llm", "kind": "predictions", "source": files, "passes": "prompt"},
            {"name": "base", "kind": "predictions", "source": base},
        ],
        "stats": {"n_resamples": 200},
        "speed": {"enabled": False},
    }
    from_files = headtohead.run(stored, base_dir=root, out_dir=root / "stored").result
    order = np.argsort(saved.order, kind="stable")
    frame = __import__("pandas").read_csv(root / "dev.csv")
    arrays = [[LABELS[k] for k in model.pred[order]] for model in saved["llm"].each_pass()]
    in_memory = headtohead.compare(
        {"llm": arrays, "base": [LABELS[k] for k in saved["base"].pred[order]]}, frame, stats={"n_resamples": 200}
    ).result

    (want,) = live.result.stats.prompts.pools
    fields = ("estimate", "low", "high", "p_value", "df", "se_examples", "se_prompts", "ahead_a", "better_a")
    for result in (from_files, in_memory):
        llm = result.model("llm")
        assert [(p.key, p.factor) for p in llm.passes] == [("p1", "prompt"), ("p2", "prompt"), ("p3", "prompt")]
        assert [p.quality.accuracy for p in llm.passes] == [p.quality.accuracy for p in live.result.model("llm").passes]
        (got,) = result.stats.prompts.pools
        assert [getattr(got, f) for f in fields] == pytest.approx([getattr(want, f) for f in fields], rel=1e-12)
        assert [c.p_value for c in got.cells] == pytest.approx([c.p_value for c in want.cells], rel=1e-12)
    assert [p.source for p in from_files.model("llm").passes] == files
    assert from_files.model("llm").passes[1].varies == f"the answers stored in {files[1]}"


def test_resume_asks_again_only_the_pass_whose_answers_are_missing(data):
    root, truth = data
    out = root / "out"
    exp = yaml.safe_load(_experiment(root, "http://127.0.0.1:9/v1", others=()).read_text())
    script = Graded(truth, down="P3")
    with ScriptedChatServer(script) as server:
        for model in exp["models"]:
            model.update(base_url=server.base_url, max_retries=0)
        (root / "exp.yaml").write_text(yaml.safe_dump(exp))
        with pytest.raises(AnswersMissing):
            headtohead.run(root / "exp.yaml", out_dir=out)
        script.down, script.asked = None, []  # the server answers every template now
        again = headtohead.run(root / "exp.yaml", out_dir=out, resume=True)
        asked = script.asked
    assert asked == ["P3"] * 40  # the other passes, and base, come back from the earlier run
    assert sorted(again.resumed) == ["base", "llm@p1", "llm@p2", "llm@p4", "llm@p5"]
    assert again.result.missing is None and [p.quality.accuracy for p in again.result.model("llm").passes][2] == 0.7
    assert again.result.stats.prompts.pools[0].model_a == "llm"


def test_an_old_schema_6_prompted_result_reads_as_passes_and_renders_its_report(tmp_path):
    """A results.json written by version 6 (a model per prompt, llm@p1 …) and its predictions.npz, as main wrote them."""
    fixture = Path(__file__).resolve().parents[1] / "results" / "fixtures" / "prompted_v6"
    for name in ("results.json", "predictions.npz"):
        (tmp_path / name).write_bytes((fixture / name).read_bytes())
    result = headtohead.load_result(tmp_path / "results.json")
    assert [m.name for m in result.models] == ["llm", "base"] and [p.key for p in result.model("llm").passes] == [
        "p1",
        "p2",
        "p3",
    ]
    assert [p.quality.accuracy for p in result.model("llm").passes] == pytest.approx([6 / 12, 8 / 12, 10 / 12])
    assert result.stats.model("llm").accuracy.value == pytest.approx(2 / 3)
    old = headtohead.load_predictions(tmp_path / "predictions.npz")  # an old file reads unchanged
    assert list(old.models) == ["llm@p1", "llm@p2", "llm@p3", "base"] and old["llm@p1"].pred.shape == (12,)

    from headtohead.report.write import render_markdown, write_reports

    write_reports(result, tmp_path, predictions=old)
    markdown, _ = render_markdown(result)
    html = (tmp_path / "report.html").read_text()
    for page in (markdown, html):
        assert "Prompts as a source of noise" in page and "chosen after seeing these examples" in page
        assert "mean of 3 prompts" in page and "llm@p3" in page and "pooled over 3 prompts of llm" in page


def _cli_error(capsys, path: Path, out: Path) -> str:
    with pytest.raises(SystemExit) as info:
        main(["run", str(path), "--out", str(out)])
    err = capsys.readouterr().err.strip()
    errors = [line for line in err.splitlines() if line and not line.startswith("warning: ")]  # no ids: said
    assert info.value.code == 2 and len(errors) == 1 and errors[0].startswith("error: "), err
    assert "Traceback" not in err
    return errors[0]


@pytest.mark.parametrize(
    ("llm", "said"),
    [
        ({"source": "{a}", "passes": "prompt"}, "passes: prompt needs two or more prediction files"),
        ({"source": ["{a}", "{b}"], "passes": "seed"}, "passes: 'seed' is not a factor; use passes: prompt or repeat"),
        ({"source": ["{a}", "{b}"]}, "say what differs between them with passes: prompt"),
        ({"source": ["{a}", "{short}"], "passes": "prompt"}, "short.csv"),
    ],
)
def test_bad_passes_of_prediction_files_are_refused_in_one_line(tmp_path, capsys, llm, said):
    rows = make_text_rows(10, classes=LABELS, seed=1)
    write_text_table(tmp_path / "dev.csv", rows)
    files, labels = {}, [r["label"] for r in rows]
    for name, n in (("a", len(rows)), ("b", len(rows)), ("short", len(rows) - 1)):
        files[name] = str(write_prediction_file(tmp_path / f"{name}.csv", None, labels[:n]))
    source = llm["source"]
    entry = {
        **llm,
        "source": [s.format(**files) for s in source] if isinstance(source, list) else source.format(**files),
    }
    exp = {
        "data": {"path": "dev.csv"},
        "models": [
            {"name": "llm", "kind": "predictions", **entry},
            {"name": "b", "kind": "predictions", "source": "b.csv"},
        ],
        "speed": {"enabled": False},
    }
    (tmp_path / "exp.yaml").write_text(yaml.safe_dump(exp))
    assert said in _cli_error(capsys, tmp_path / "exp.yaml", tmp_path / "out")


def test_passes_run_alike_in_worker_processes_and_shards(tmp_path):
    """Each pass is a unit of work on any executor: its tasks carry the pass, shards merge back per pass."""
    rows = make_text_rows(20, classes=LABELS, seed=2)
    write_text_table(tmp_path / "dev.csv", rows)
    rng, gold = np.random.default_rng(4), [r["label"] for r in rows]
    files = []
    for k, accuracy in enumerate((0.6, 0.75, 0.9), start=1):
        said = [g if rng.random() < accuracy else LABELS[1 - LABELS.index(g)] for g in gold]
        files.append(str(write_prediction_file(tmp_path / f"p{k}.csv", None, said)))
    write_prediction_file(tmp_path / "base.csv", None, [g if rng.random() < 0.7 else "" for g in gold])
    exp = {
        "data": {"path": "dev.csv"},
        "models": [
            {"name": "llm", "kind": "predictions", "source": files, "passes": "prompt"},
            {"name": "base", "kind": "predictions", "source": "base.csv"},
        ],
        "eval": {"batch_size": 8, "device": "cpu"},
        "stats": {"n_resamples": 100},
        "speed": {"enabled": False},
    }
    local = headtohead.run(exp, base_dir=tmp_path)
    spread = headtohead.run(
        {**exp, "execution": {"mode": "processes", "num_workers": 2, "shards": 2}}, base_dir=tmp_path
    )
    for name in ("llm", "base"):
        np.testing.assert_array_equal(spread.predictions[name].pred, local.predictions[name].pred)
    assert spread.predictions["llm"].passes == ("p1", "p2", "p3")
    assert spread.result.model("llm").execution_mode == "processes"
    assert [p.quality for p in spread.result.model("llm").passes] == [
        p.quality for p in local.result.model("llm").passes
    ]
    assert spread.result.stats.prompts.pools == local.result.stats.prompts.pools
