"""Quality against the parent, the recommendation under a budget, the records and their renderings
(built from synthetic numbers: no model runs here)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from headtohead.errors import ResultsError
from headtohead.report.formats.terminal import render_text
from headtohead.report.sections.sweep import sweep_table, sweep_terminal
from headtohead.report.words.sweep import recommendation_sentence, variant_verdict
from headtohead.report.write import sweep_markdown, write_sweep_report
from headtohead.results.comparison import ContingencyTable
from headtohead.results.records import DatasetRecord, Environment
from headtohead.results.speed import ScenarioTiming, SpeedComparison
from headtohead.results.sweep import (
    ModelSweep,
    QualityVsParent,
    SpeedPoint,
    SweepCell,
    SweepResult,
    VariantParams,
    load_sweep,
    save_sweep,
)
from headtohead.stats import recommend as recommend_module
from headtohead.stats.variant_quality import quality_vs_parent


def recommend(models, **budget):
    """The recommendation with its sentence, as h2h sweep stores it."""
    rec = recommend_module.recommend(models, **budget)
    return rec.model_copy(update={"sentence": recommendation_sentence(rec, models)})


def test_identical_variant_is_unchanged_and_a_broken_one_is_significant():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 400)
    parent_pred = np.where(rng.random(400) < 0.9, y, 1 - y)
    proba = np.eye(2)[parent_pred].astype(np.float32)
    broken = np.where(rng.random(400) < 0.3, 1 - parent_pred, parent_pred)  # flips 30 % of predictions
    out = quality_vs_parent(
        y,
        ("bert", parent_pred, proba),
        {"bert[bf16]": (parent_pred, proba), "bert[int8]": (broken, np.eye(2)[broken])},
        label_names=["neg", "pos"],
        margin=0.01,
    )
    out = {name: q.model_copy(update={"verdict": variant_verdict(name, "bert", q)}) for name, q in out.items()}
    same, bad = out["bert[bf16]"], out["bert[int8]"]
    assert same.difference == 0.0 and same.agreement == 1.0 and not same.significant and same.non_inferior
    assert same.max_abs_probability_diff == 0.0 and same.table.only_a_correct == same.table.only_b_correct == 0
    assert bad.difference < -0.15 and bad.significant and bad.non_inferior is False
    assert bad.p_adjusted >= bad.p_value and bad.ci_high < 0
    assert bad.accuracy == pytest.approx(np.mean(broken == y)) and bad.parent_accuracy == pytest.approx(
        np.mean(parent_pred == y)
    )
    assert bad.verdict.startswith("bert[int8]: −") and "McNemar p " in bad.verdict
    assert "significant" in bad.verdict and "not shown non-inferior at a 1.0 pp margin" in bad.verdict
    assert "non-inferior at a 1.0 pp margin" in same.verdict and "0 of 400 predictions changed" in same.verdict


def _timing(batch_size: int, ms: float) -> ScenarioTiming:
    jitter = [0.98, 1.0, 1.02, 1.0, 1.0]  # mean exactly 1
    return ScenarioTiming(
        scenario="offline",
        batch_size=batch_size,
        timer="perf_counter_ns",
        warmup_iterations=1,
        warmup_s=0.01,
        rounds_ns=[[int(ms * 1e6 * j)] * 4 for j in jitter],
    )


def _point(batch_size: int, ms: float, memory: float, parent_ms: float | None, variant: str) -> SpeedPoint:
    ratio = None
    if parent_ms is not None:
        r = parent_ms / ms
        ratio = SpeedComparison(
            scenario="offline",
            model_a="m",
            model_b=variant,
            ratio=r,
            ci_low=r * 0.95,
            ci_high=r * 1.05,
            confidence=0.95,
            n_rounds=5,
            faster=variant if r > 1 else None,
            verdict=f"{variant} is {r:.2f}× faster than m",
        )
    return SpeedPoint(
        batch_size=batch_size, status="measured", offline=_timing(batch_size, ms), vs_parent=ratio, memory_mb=memory
    )


def _quality(diff: float, low: float, *, significant: bool = False, margin: float | None = 0.01) -> QualityVsParent:
    return QualityVsParent(
        n_examples=500,
        accuracy=0.9 + diff,
        parent_accuracy=0.9,
        difference=diff,
        ci_low=low,
        ci_high=diff + 0.01,
        confidence=0.95,
        ci_method="tango-score",
        table=ContingencyTable(both_correct=440, only_a_correct=5, only_b_correct=10, both_wrong=45),
        test="mcnemar-score",
        p_value=0.3,
        p_adjusted=0.3,
        alpha=0.05,
        significant=significant,
        agreement=0.97,
        max_abs_probability_diff=0.2,
        margin=margin,
        non_inferior=None if margin is None else low > -margin,
        verdict=f"diff {diff}",
    )


def _params(**kw) -> VariantParams:
    return VariantParams(
        **{
            "backend": "pytorch",
            "precision": "fp32",
            "compile": False,
            "channels_last": False,
            "sparsity": 0.0,
            "max_length": 128,
            **kw,
        }
    )


def _sweep() -> ModelSweep:
    # per-batch latency (ms) at batch 1 and 32: the parent, a fast int8, a faster but worse sparse variant
    parent = SweepCell(
        name="m",
        model="m",
        parent=True,
        params=_params(),
        status="measured",
        accuracy=0.9,
        points=[_point(1, 10, 400, None, "m"), _point(32, 80, 420, None, "m")],
    )
    int8 = SweepCell(
        name="m[int8]",
        model="m",
        params=_params(precision="int8"),
        status="measured",
        quality=_quality(-0.002, -0.006),
        accuracy=0.898,
        points=[_point(1, 5, 150, 10, "m[int8]"), _point(32, 40, 160, 80, "m[int8]")],
    )
    sparse = SweepCell(
        name="m[sparsity=0.5]",
        model="m",
        params=_params(sparsity=0.5),
        status="measured",
        quality=_quality(-0.05, -0.08, significant=True),
        accuracy=0.85,
        points=[_point(1, 2, 400, 10, "m[sparsity=0.5]"), _point(32, 20, 400, 80, "m[sparsity=0.5]")],
    )
    failed = SweepCell(
        name="m[onnxruntime,bf16]",
        model="m",
        params=_params(backend="onnxruntime", precision="bf16"),
        status="failed",
        stage="capability",
        reason="bf16 is not available with the onnxruntime backend",
    )
    oom = SweepCell(
        name="m[bf16]",
        model="m",
        params=_params(precision="bf16"),
        status="measured",
        quality=_quality(0.0, -0.004),
        accuracy=0.9,
        points=[
            _point(1, 9, 400, 10, "m[bf16]"),
            SpeedPoint(
                batch_size=32,
                status="failed",
                reason="out of memory; the largest batch that fits is 24",
                largest_fitting_batch=24,
            ),
        ],
    )
    return ModelSweep(
        model="m",
        kind="transformers",
        source="x",
        device="cpu",
        load_time_s=1.0,
        batch_sizes=[1, 32],
        cells=[parent, int8, sparse, failed, oom],
    )


def test_recommendation_respects_quality_latency_and_memory():
    sweep = _sweep()
    free = recommend([sweep], margin=0.01)
    # the sparse variant is fastest but not non-inferior; int8 at batch 32 is the best that qualifies
    assert free.met and free.cell == "m[int8]" and free.batch_size == 32 and free.best_batch_size == 32
    assert free.throughput == pytest.approx(32 / 0.040) and free.speedup_vs_parent == pytest.approx(2.0)
    assert free.excluded == {"not shown non-inferior to the parent": 2}
    assert free.sentence.startswith("Recommended: m[int8] at batch 32 — 800 samples/s, 2.00× the parent's speed")
    tight = recommend([sweep], max_latency_ms=6, margin=0.01)
    assert tight.cell == "m[int8]" and tight.batch_size == 1
    assert "without the budget its throughput would peak at batch 32" in tight.sentence
    assert tight.excluded["p95 latency over the budget"] == 4
    small = recommend([sweep], max_memory_mb=100)
    assert not small.met and small.cell is None and small.sentence.startswith("No variant meets the budget")
    assert "memory over the budget" in small.sentence and "of 7 measured points" in small.sentence
    # quality holds only with non-inferiority at the sweep's margin, never by "not significantly worse"
    plain = recommend([sweep])
    assert plain.cell == "m[int8]" and plain.excluded == {"not shown non-inferior to the parent": 2}
    assert "significantly" not in plain.sentence


def test_a_clearly_worse_variant_that_holm_cannot_call_worse_does_not_qualify():
    """The issue's case: −6 pp on a small test set among five variants (raw p ≈ 0.03, Holm p ≈ 0.16)."""
    rng = np.random.default_rng(2)
    n = 150
    y = rng.integers(0, 2, n)
    parent = np.where(rng.random(n) < 0.88, y, 1 - y)
    variants = {}
    for i in range(4):  # four harmless variants: a couple of changed predictions each
        flip = rng.random(n) < 0.02
        variants[f"m[v{i}]"] = np.where(flip, 1 - parent, parent)
    worse = parent.copy()
    wrong_now = np.flatnonzero(parent == y)[:11]  # 11 newly wrong, 2 newly right: −6 pp
    right_now = np.flatnonzero(parent != y)[:2]
    worse[wrong_now], worse[right_now] = 1 - y[wrong_now], y[right_now]
    variants["m[int4]"] = worse
    out = quality_vs_parent(
        y,
        ("m", parent, np.eye(2)[parent]),
        {k: (v, np.eye(2)[v]) for k, v in variants.items()},
        label_names=["neg", "pos"],
    )
    q = out["m[int4]"]
    assert q.difference == pytest.approx(-0.06) and q.p_value < 0.05 and not q.significant  # Holm: not "worse"
    assert q.margin == 0.01 and q.non_inferior is False  # but its quality is not shown to hold either


def test_parent_can_be_the_recommendation_and_nothing_measured_is_said_plainly():
    sweep = _sweep()
    parent_only = sweep.model_copy(update={"cells": [sweep.cells[0], sweep.cells[3]]})
    rec = recommend([parent_only])
    assert rec.cell == "m" and "as it is (the fp32 eager parent)" in rec.sentence and rec.speedup_vs_parent is None
    nothing = sweep.model_copy(update={"cells": [sweep.cells[3]]})
    assert recommend([nothing]).sentence.startswith("Nothing was measured")


def _result(sweep: ModelSweep) -> SweepResult:
    env = Environment(
        python="3.11",
        os="Linux",
        hostname="h",
        cpu_model="cpu",
        cpu_cores_physical=2,
        cpu_cores_logical=2,
        ram_gb=8.0,
        torch="2",
        torch_threads=2,
        transformers=None,
        timm=None,
        torchvision=None,
        sklearn=None,
        numpy="2",
        headtohead="0.1.0",
        cuda_available=False,
        gpus=[],
        git_revision=None,
    )
    data = DatasetRecord(
        source="d.csv",
        modality="text",
        n_examples=500,
        label_names=["neg", "pos"],
        class_counts=[250, 250],
        fingerprint="f",
    )
    return SweepResult(
        headtohead_version="0.1.0",
        name="s",
        created_at="2026-01-01T00:00:00+00:00",
        experiment={},
        settings={"max_accuracy_drop": 0.01},
        speed_settings={},
        environment=env,
        dataset=data,
        eval_batch_size=32,
        seed=0,
        models=[sweep],
        recommendation=recommend([sweep], margin=0.01),
    )


def test_records_round_trip_and_refuse_newer_or_foreign_files(tmp_path):
    result = _result(_sweep())
    path = tmp_path / "sweep.json"
    save_sweep(result, path)
    back = load_sweep(path)
    assert back == result
    assert back.model("m").cell("m[int8]").point(32).throughput == pytest.approx(800.0)
    assert back.model("m").best_batch_size("m[bf16]") == 1
    raw = json.loads(path.read_text())
    raw["schema_version"] = 99
    path.write_text(json.dumps(raw))
    with pytest.raises(ResultsError, match="newer than this headtohead"):
        load_sweep(path)
    (tmp_path / "other.json").write_text('{"schema_version": 1, "models": []}')
    with pytest.raises(ResultsError, match="not a sweep.json"):
        load_sweep(tmp_path / "other.json")
    with pytest.raises(ResultsError, match="not found"):
        load_sweep(tmp_path / "missing.json")


def test_table_markdown_and_figure(tmp_path):
    result = _result(_sweep())
    table = sweep_table(result)
    rows = [{c.key: t.plain() for c, t in zip(table.columns, texts, strict=True)} for texts in table.texts()]
    assert [r["variant"] for r in rows].count("m[int8]") == 2
    failed = next(r for r in rows if r["variant"] == "m[onnxruntime,bf16]")
    assert failed["status"] == "failed (capability)" and "onnxruntime backend" in failed["notes"]
    oom = next(r for r in rows if r["variant"] == "m[bf16]" and r["batch"] == "32")
    assert oom["status"] == "failed" and "largest batch that fits is 24" in oom["notes"]
    int8 = next(r for r in rows if r["variant"] == "m[int8]" and r["batch"] == "32")
    assert int8["speedup"] == "2.00 (1.90–2.10)" and int8["throughput"] == "800"
    assert int8["quality"] == "—"  # quality is shown on the cell's first row only
    markdown, images = sweep_markdown(result)
    assert "Recommended: m\\[int8\\] at batch 32" in markdown and "| m\\[int8\\] | 1 | measured |" in markdown
    assert "![Sweep curves](sweep.png)" in markdown and list(images) == ["sweep.png"]
    text = render_text(sweep_terminal(result), width=250)
    assert "m[onnxruntime,bf16]" in text  # names are not eaten as rich markup
    files = write_sweep_report(result, tmp_path)
    assert [f.name for f in files] == ["sweep.md", "sweep.png"]
    assert (tmp_path / "sweep.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sweep_md_escapes_every_user_string_as_report_md_does():
    """A model or data-source name with markup shows literally (sweep.md escaped only ``|`` and newlines)."""
    from headtohead.report.formats.markdown import md_escape

    evil = "<b>m</b> *x*"
    result = _result(_sweep())
    result = result.model_copy(
        update={"name": evil, "dataset": result.dataset.model_copy(update={"source": "data/<i>d</i>.tsv"})}
    )
    text, _ = sweep_markdown(result)
    assert "<b>" not in text and "<i>" not in text and md_escape(evil) in text


def test_a_variant_recommended_dominates_its_parent_non_inferior_and_decided_faster():
    """Issue 42, point 4: a variant as accurate but not shown faster than its parent is not recommended."""
    sweep = _sweep()
    int8 = sweep.cells[1]
    undecided = [
        p.model_copy(update={"vs_parent": p.vs_parent.model_copy(update={"faster": None})}) for p in int8.points
    ]
    cells = [sweep.cells[0], int8.model_copy(update={"points": undecided}), *sweep.cells[2:]]
    rec = recommend([sweep.model_copy(update={"cells": cells})], margin=0.01)
    assert rec.excluded["not shown faster than the parent"] == 2
    assert rec.cell == "m" and rec.batch_size == 32  # bf16 dominates its parent only at batch 1, slower than this
