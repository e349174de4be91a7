"""A model's own memory and cold start, measured in a process that holds only it: answers known in advance."""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest
from sim.simulated import SimulatedAdapter

from headtohead.adapters.base import LoadContext
from headtohead.config.schema import model_settings
from headtohead.config.speed import SpeedConfig
from headtohead.data.base import Dataset
from headtohead.engines import speed_passes
from headtohead.engines.isolated import FreshProcessError, ModelRecipe, imported_modules, measure_fresh
from headtohead.engines.memory import reset_peak_rss
from headtohead.engines.speed import measure_speed
from headtohead.results.speed import HostLoad
from headtohead.runtime.devices import use_backend
from headtohead.testing.fake_device import FakeClock, FakeCudaBackend

MIB = 2**20
BATCHES = {"single_stream": [[[0.0, 1.0]], [[2.0, 3.0]]], "offline": [[[0.0, 1.0]] * 8, [[2.0, 3.0]] * 8]}
#: RSS a weightless model may still show: the interpreter's own allocations while it runs.
RSS_TOLERANCE_MB = 8


@pytest.fixture
def quiet_host(monkeypatch):
    quiet = HostLoad(cpu_count=2, load_average=[0.0, 0.0, 0.0], other_cpu_percent=0.0)
    monkeypatch.setattr("headtohead.engines.speed.host_load", lambda: quiet)


def test_cuda_peak_holds_the_models_weights_and_excludes_a_resident_model():
    clock, backend = FakeClock(), FakeCudaBackend(context_bytes=4 * MIB)
    with use_backend(backend):
        other = SimulatedAdapter(
            "other", cost_ns=1, clock=clock, backend=backend, device="cuda:0", weight_bytes=256 * MIB
        )  # loaded before: a process that is not fresh
        load = lambda: SimulatedAdapter(
            "b",
            cost_ns=1,
            clock=clock,
            backend=backend,
            device="cuda:0",  # noqa: E731
            weight_bytes=64 * MIB,
            memory_bytes=MIB,
        )
        cold, memory = measure_fresh(load, BATCHES, device="cuda:0", iterations=2, clock=clock)
    assert backend.warm_ups == ["cuda:0"] and cold.device_warmup_s is not None
    assert memory.isolated and memory.weights_mb == 64
    assert memory.cuda_model_peak_mb == pytest.approx(64 + 8)  # weights + a batch of 8 × 1 MiB; not 256, not 4
    assert memory.scenario("offline").cuda_model_peak_mb == pytest.approx(72)
    assert memory.scenario("single_stream").cuda_model_peak_mb == pytest.approx(65)
    assert memory.cuda_inference_peak_mb == pytest.approx(8)
    assert memory.process_cuda_max_allocated_mb == pytest.approx(256 + 4 + 72)  # the process: everything
    other.release()


@pytest.mark.parametrize(
    ("weight_mb", "at_least", "at_most"), [(64, 64, 64 + RSS_TOLERANCE_MB), (0, 0, RSS_TOLERANCE_MB)]
)
def test_rss_peak_is_the_models_weights_or_about_nothing(weight_mb, at_least, at_most):
    if not reset_peak_rss():
        pytest.skip("sampled RSS may miss the peak; the exact peak is Linux's")
    clock = FakeClock()
    load = lambda: SimulatedAdapter("m", cost_ns=1, clock=clock, weight_bytes=weight_mb * MIB)  # noqa: E731
    _, memory = measure_fresh(load, BATCHES, device="cpu", iterations=3, clock=clock)
    assert memory.weights_mb == weight_mb and memory.peak_method == "high_water_mark"
    assert at_least <= memory.model_peak_mb <= at_most
    assert memory.cuda_model_peak_mb is None and [s.scenario for s in memory.scenarios] == list(BATCHES)


@pytest.mark.parametrize("lazy_first", [True, False])
def test_cold_first_call_is_the_models_own_whatever_the_order(lazy_first):
    clock = FakeClock()
    lazy = lambda: SimulatedAdapter("lazy", cost_ns=1_000, clock=clock, first_call_ns=200e6)  # noqa: E731
    eager = lambda: SimulatedAdapter("eager", cost_ns=1_000, clock=clock)  # noqa: E731
    order = [("lazy", lazy), ("eager", eager)] if lazy_first else [("eager", eager), ("lazy", lazy)]
    cold = {name: measure_fresh(load, BATCHES, device="cpu", iterations=1, clock=clock)[0] for name, load in order}
    assert cold["lazy"].first_call_s == pytest.approx(0.2 + 1e-6)  # the lazy init, and one example
    assert cold["eager"].first_call_s == pytest.approx(1e-6)
    assert cold["lazy"].scenario == "single_stream" and cold["lazy"].batch_size == 1
    assert cold["lazy"].first_prediction_s == pytest.approx(cold["lazy"].load_s + 0.2 + 1e-6)


def test_imported_modules_leave_test_tools_out():
    names = imported_modules()
    assert "numpy" in names and "headtohead.engines.isolated" in names
    assert not any(n.split(".")[0] in ("pytest", "_pytest", "__main__") for n in names)


def test_a_failed_fresh_process_falls_back_and_says_so(monkeypatch, quiet_host):
    def fail(*args, **kwargs):
        raise FreshProcessError("the fresh process died (exit code -9; killed for memory?)")

    monkeypatch.setattr(speed_passes, "measure_isolated", fail)
    clock = FakeClock()
    model = SimulatedAdapter("m", cost_ns=1_000, clock=clock, weight_bytes=MIB)
    recipe = ModelRecipe(model_settings(name="m", kind="python", source="x:y"), LoadContext(("a", "b"), "features"))
    summary = measure_speed([model], _features(), _quick(), batch_size=4, clock=clock, recipes={"m": recipe})
    record = summary.model("m")
    assert not record.memory.isolated and record.memory.weights_mb == 1 and record.cold_start is None
    assert "could not be measured in a fresh process (the fresh process died" in record.warnings[0]


def _features(n=64):
    x = np.random.default_rng(0).normal(size=(n, 8)).astype(np.float32)
    return Dataset("synthetic", "features", x, np.zeros(n, dtype=np.int64), ("negative", "positive"))


def _quick(**settings):
    return SpeedConfig(
        **{
            "warmup_iterations": 2,
            "warmup_seconds": 0.0,
            "min_iterations": 4,
            "min_seconds": 0.0,
            "rounds": 5,
            "precision": None,  # a fixed number of rounds
            "pipeline_iterations": 0,
            "memory_iterations": 2,
            "num_batches": 2,
            "single_stream_inputs": 8,
            "telemetry": False,
            **settings,
        }
    )


FACTORIES = '''
    import time

    import numpy as np
    import torch


    class HeavyLazy(torch.nn.Module):
        """A 64 MiB parameter, and a first call that initialises for 200 ms."""

        def __init__(self):
            super().__init__()
            self.big = torch.nn.Parameter(torch.ones(16 * 2**20))  # 16 Mi float32 = 64 MiB
            self.head = torch.nn.Linear(8, 2)
            self.ready = False

        def forward(self, x):
            if not self.ready:
                time.sleep(0.2)
                self.ready = True
            return self.head(x)


    def heavy_lazy():
        return HeavyLazy()


    def weightless():
        return lambda examples: np.zeros((len(examples), 2))
'''


@pytest.mark.slow
@pytest.mark.serial
def test_fresh_processes_measure_known_weights_and_a_known_cold_start(tmp_path, quiet_host):
    """Two spawned processes: a 64 MiB model with a 200 ms lazy init, and a weightless callable."""
    torch = pytest.importorskip("torch")
    (tmp_path / "h2h_known_models.py").write_text(textwrap.dedent(FACTORIES))
    context = LoadContext(("negative", "positive"), "features", base_dir=tmp_path)
    configs = [
        model_settings(name=name, kind="python", source=f"h2h_known_models:{name}")
        for name in ("weightless", "heavy_lazy")
    ]
    from headtohead.adapters import create_adapter

    sys.path.insert(0, str(tmp_path))
    try:
        adapters = [create_adapter(c, context) for c in configs]
    finally:
        sys.path.remove(str(tmp_path))
    adapters[1].forward(adapters[1].to_device(adapters[1].preprocess([np.zeros(8, np.float32)])))  # warm here
    recipes = {c.name: ModelRecipe(c, context) for c in configs}
    with torch.inference_mode():
        summary = measure_speed(
            adapters, _features(), _quick(scenarios=["single_stream"]), batch_size=4, recipes=recipes
        )
    heavy, weightless = summary.model("heavy_lazy"), summary.model("weightless")
    assert heavy.memory.isolated and heavy.memory.weights_mb == pytest.approx(64, abs=0.01)
    assert heavy.memory.model_peak_mb >= 64
    # a plain callable: its size is unknown (None, shown as "unknown"), never 0; its memory is measured all the same
    assert weightless.memory.weights_mb is None and weightless.num_parameters is None
    assert weightless.memory.model_peak_mb <= RSS_TOLERANCE_MB
    # Cold in its own process although this process had already called it: 200 ms of lazy init.
    assert heavy.cold_start.first_call_s >= 0.2 and heavy.first_call_s < 0.1
    assert heavy.single_stream.per_batch.p50_s < 0.02 and weightless.cold_start.first_call_s < 0.1
    assert heavy.cold_start.load_s < 5 and heavy.cold_start.first_prediction_s >= 0.2


@pytest.mark.gpu
def test_on_a_real_gpu_the_cuda_peak_holds_the_weights_and_not_a_resident_model():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    from headtohead.adapters.base import ModelAdapter

    class Big(ModelAdapter):
        kind, modalities = "python", ("features",)

        def __init__(self, name, mib):
            super().__init__(
                model_settings(name=name, kind="python", source="test"),
                LoadContext(("a", "b"), "features", device="cuda:0"),
            )
            self.module = torch.nn.Linear(2, 2, bias=False).to("cuda:0")  # 16 bytes, plus ...
            self.module.big = torch.nn.Parameter(torch.ones(mib * 2**18, device="cuda:0"))  # ... mib MiB

        @classmethod
        def load(cls, config, context):
            raise NotImplementedError

        def preprocess(self, examples):
            return torch.tensor(examples, dtype=torch.float32)

        def forward(self, inputs):
            with torch.inference_mode():
                return self.module(inputs)

    resident = Big("resident", 128)
    _, memory = measure_fresh(lambda: Big("m", 64), BATCHES, device="cuda:0", iterations=2)
    assert memory.weights_mb == pytest.approx(64, abs=0.01)
    assert 64 <= memory.cuda_model_peak_mb < 64 + 16  # its weights and inputs; not the resident 128 MiB
    del resident


UNGUARDED_SCRIPT = """
    import pathlib, sys
    from headtohead.adapters.base import LoadContext
    from headtohead.config.schema import model_settings
    from headtohead.engines.isolated import ModelRecipe, measure_isolated

    runs = pathlib.Path(sys.argv[1])
    runs.write_text(runs.read_text() + "ran\\n" if runs.exists() else "ran\\n")  # no __main__ guard
    context = LoadContext(("negative", "positive"), "features", base_dir=pathlib.Path(sys.argv[2]))
    recipe = ModelRecipe(model_settings(name="w", kind="python", source="h2h_known_models:weightless"), context)
    cold, memory = measure_isolated(recipe, {"offline": [[[0.0] * 8] * 4]}, iterations=2)
    print("measured", memory.isolated, cold.batch_size)
"""


@pytest.mark.slow
def test_a_script_without_a_main_guard_runs_once(tmp_path):
    """The fresh process never re-runs the caller's script (spawn would, as ``__mp_main__``)."""
    import os
    import subprocess

    (tmp_path / "h2h_known_models.py").write_text(textwrap.dedent(FACTORIES))
    script = tmp_path / "compare.py"
    script.write_text(textwrap.dedent(UNGUARDED_SCRIPT))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "runs.txt"), str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
    )  # no timeout: the script ends by itself, however loaded the machine is
    assert done.returncode == 0, done.stderr[-2000:]
    assert "measured True 4" in done.stdout
    assert (tmp_path / "runs.txt").read_text() == "ran\n"
