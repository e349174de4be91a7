"""Whole sweeps: a tiny BERT over batch size × precision × backend (every cell measured or failed with its
reason, verdicts against the parent, the recommendation, sweep.json and the report), and small feature
models that run out of memory, export differently from how they run, or cannot be exported."""

from __future__ import annotations

import textwrap

import markupsafe
import pytest
import torch
import yaml

from headtohead.errors import ConfigError
from headtohead.pipeline.sweep import run_sweep
from headtohead.report.formats.markdown import md_escape
from headtohead.results.sweep import load_sweep
from headtohead.testing.data import make_text_table
from headtohead.testing.text import make_tiny_bert

QUICK_SPEED = {
    "min_seconds": 0.05,
    "rounds": 5,
    "precision": None,  # a fixed number of rounds
    "min_iterations": 5,
    "warmup_iterations": 1,
    "warmup_seconds": 0.0,
    "pipeline_iterations": 0,
    "memory_iterations": 2,
    "n_resamples": 300,
    "num_threads": 1,
    "num_batches": 1,
}


@pytest.fixture(autouse=True, scope="module")
def keep_torch_threads():
    threads = torch.get_num_threads()  # eval.num_threads below changes the process-wide setting
    yield
    torch.set_num_threads(threads)


def write_experiment(folder, **sections) -> str:
    path = folder / "experiment.yaml"
    path.write_text(yaml.safe_dump(sections, sort_keys=False))
    return str(path)


@pytest.fixture(scope="module")
def bert_sweep(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweep-bert")
    make_tiny_bert(root / "bert", ["negative", "positive"])
    make_text_table(root / "data.csv", n_per_class=30)
    experiment = write_experiment(
        root,
        name="tiny-sweep",
        seed=0,
        data={"path": "data.csv"},
        models=[{"name": "bert", "kind": "transformers", "source": "bert", "max_length": 32}],
        eval={"batch_size": 16, "device": "cpu", "num_threads": 1},
        stats={"n_resamples": 300},
        speed=QUICK_SPEED,
        sweep={
            "batch_size": [4, 16],
            "precision": ["fp32", "bf16", "int8"],
            "backend": ["pytorch", "onnxruntime"],
            "max_accuracy_drop": 0.05,
        },
    )
    return run_sweep(experiment, out_dir=root / "out"), root


def test_every_cell_is_measured_or_failed_with_a_reason(bert_sweep):
    outcome, _ = bert_sweep
    model = outcome.result.model("bert")
    names = {c.name: c for c in model.cells}
    assert set(names) == {
        "bert",
        "bert[bf16]",
        "bert[int8]",
        "bert[onnxruntime]",
        "bert[onnxruntime,bf16]",
        "bert[onnxruntime,int8]",
    }
    assert model.parent.name == "bert" and model.parent.params.max_length == 32
    for cell in model.cells:
        assert cell.status in ("measured", "failed")
        if cell.status == "failed":
            assert cell.stage and cell.reason and not cell.points
        else:
            assert [p.batch_size for p in cell.points] == [4, 16]
            assert all(p.status == "measured" and p.throughput > 0 and p.p95_ms > 0 for p in cell.points)
            assert all(p.memory_mb is not None and p.memory_mb > 0 for p in cell.points)
    failed = names["bert[onnxruntime,bf16]"]
    assert failed.status == "failed" and failed.stage == "capability" and "onnxruntime backend" in failed.reason
    for name in ("bert[bf16]", "bert[int8]", "bert[onnxruntime]", "bert[onnxruntime,int8]"):
        assert names[name].status == "measured", names[name].reason


def test_variants_are_checked_against_the_parent(bert_sweep):
    outcome, _ = bert_sweep
    model = outcome.result.model("bert")
    onnx = model.cell("bert[onnxruntime]")
    assert onnx.quality.difference == 0.0 and onnx.quality.agreement == 1.0  # a faithful export
    assert any("ONNX check: max |Δlogit|" in note for note in onnx.notes)
    assert any("onnxruntime.quantization" in note for note in model.cell("bert[onnxruntime,int8]").notes)
    for cell in model.cells:
        if cell.status == "measured" and not cell.parent:
            q = cell.quality
            assert q.n_examples == 60 and q.ci_low <= q.difference <= q.ci_high and 0 <= q.p_value <= 1
            assert q.verdict.startswith(f"{cell.name}: ") and "McNemar p = " in q.verdict
            assert q.non_inferior is not None  # a margin was set
            for point in cell.points:  # timed beside the parent: a ratio with its interval
                ratio = point.vs_parent
                assert ratio.model_a == "bert" and ratio.model_b == cell.name
                assert ratio.ci_low <= ratio.ratio <= ratio.ci_high
    assert model.parent.quality is None and model.parent.accuracy is not None


def test_recommendation_and_files(bert_sweep):
    outcome, root = bert_sweep
    rec = outcome.result.recommendation
    assert rec.met and rec.cell is not None and rec.batch_size in (4, 16)
    assert rec.sentence.startswith("Recommended: ") and "throughput-optimal batch size" in rec.sentence
    out = root / "out"
    assert {p.name for p in outcome.files} == {"sweep.json", "sweep.md", "sweep.png"}
    assert load_sweep(out / "sweep.json") == outcome.result
    markdown = (out / "sweep.md").read_text()
    assert md_escape(rec.sentence) in markdown and "| bert\\[onnxruntime,bf16\\] | — | failed (capability)" in markdown
    assert (out / "onnx" / "bert.onnx").is_file() and (out / "onnx" / "bert-int8.onnx").is_file()
    assert outcome.result.settings["precision"] == ["fp32", "bf16", "int8"]
    assert outcome.result.speed_settings["scenarios"] == ["offline"]
    # in a notebook: the recommendation and the table, as sweep.md words them; a short repr
    page = outcome._repr_html_()
    assert str(markupsafe.escape(rec.sentence)) in page and "speed-up vs parent (95 % CI)" in page
    assert '<td style="text-align: left; padding: 2px 8px">bert[onnxruntime,bf16]</td>' in page
    assert repr(outcome) == (f"SweepRun 'tiny-sweep' — 1 model: bert · 5 variant(s) · saved in {out}\n  {rec.sentence}")


MODELS_PY = '''
import torch
from torch import nn


class OomAbove(nn.Module):
    """Pretends the GPU runs out of memory on batches larger than ``limit``."""

    def __init__(self, limit):
        super().__init__()
        self.limit = limit
        self.net = nn.Linear(4, 3)

    def forward(self, x):
        if x.shape[0] > self.limit:
            raise torch.cuda.OutOfMemoryError(f"CUDA out of memory. Tried to allocate {x.shape[0]} GiB")
        return self.net(x)


class ExportsDifferently(nn.Module):
    """Its exported graph doubles the logits: the ONNX check must catch it."""

    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 3)

    def forward(self, x):
        out = self.net(x)
        return out * 2 if torch.compiler.is_exporting() else out


class DataDependent(nn.Module):
    """Branches on a value of its input, which torch.export cannot trace."""

    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 3)

    def forward(self, x):
        return self.net(x) if x.sum() > 0 else -self.net(x)


def build(name, **kwargs):
    torch.manual_seed(0)
    return {"oom": OomAbove, "drift": ExportsDifferently, "branchy": DataDependent}[name](**kwargs)
'''


@pytest.fixture(scope="module")
def feature_sweep(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweep-features")
    (root / "sweep_models.py").write_text(textwrap.dedent(MODELS_PY))
    model = {"kind": "python", "source": "sweep_models:build"}
    experiment = write_experiment(
        root,
        name="features",
        seed=0,
        data={"path": "sklearn:iris"},
        models=[
            {**model, "name": "oom", "model_args": {"name": "oom", "limit": 20}},
            {**model, "name": "drift", "model_args": {"name": "drift"}},
            {**model, "name": "branchy", "model_args": {"name": "branchy"}},
        ],
        eval={"batch_size": 16, "device": "cpu"},
        stats={"n_resamples": 300},
        speed={**QUICK_SPEED, "memory": False},
        sweep={"batch_size": [8, 64], "precision": ["fp32", "int8"], "backend": ["pytorch", "onnxruntime"]},
    )
    return run_sweep(experiment).result


def test_out_of_memory_backs_off_and_reports_the_largest_batch_that_fits(feature_sweep):
    model = feature_sweep.model("oom")
    for name in ("oom", "oom[int8]"):
        cell = model.cell(name)
        assert cell.status == "measured" and cell.point(8).status == "measured"
        big = cell.point(64)
        # timm-style decay 64 → 48 → 32 → 24 → 16: the first that fits under the limit of 20
        assert big.status == "failed" and big.largest_fitting_batch == 16
        assert "out of memory" in big.reason and "the largest batch that fits is 16" in big.reason
    assert model.best_batch_size("oom") == 8


def test_export_mismatch_and_export_failure_are_results_and_the_sweep_goes_on(feature_sweep):
    drift = feature_sweep.model("drift")
    for name in ("drift[onnxruntime]", "drift[onnxruntime,int8]"):
        cell = drift.cell(name)
        assert cell.status == "failed" and cell.stage == "onnx-check" and "MISMATCH, not measured" in cell.reason
        assert not cell.points and cell.quality is None
    branchy = feature_sweep.model("branchy")
    failed = branchy.cell("branchy[onnxruntime]")
    assert failed.status == "failed" and failed.stage == "export" and "ONNX export failed" in failed.reason
    assert branchy.cell("branchy[int8]").status == "measured"
    assert branchy.cell("branchy[int8]").quality is not None
    assert feature_sweep.recommendation.met


def test_a_sweep_needs_its_section_and_known_model_names(tmp_path):
    mlp = {"name": "mlp", "kind": "python", "source": "headtohead.testing.models:tiny_mlp"}
    experiment = write_experiment(tmp_path, data={"path": "sklearn:iris"}, models=[mlp])
    with pytest.raises(ConfigError, match="the experiment has no sweep: section"):
        run_sweep(experiment)
    from headtohead.config.sweep import SweepConfig

    with pytest.raises(ConfigError, match=r"sweep.models names 'mpl'.*did you mean mlp\?"):
        run_sweep(experiment, sweep=SweepConfig(models=["mpl"]))
