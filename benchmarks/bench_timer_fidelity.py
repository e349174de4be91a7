"""Timer fidelity: h2h's median batch latency against torch.utils.benchmark on the same call.

A small 4-layer MLP on the CPU is timed on a real-size batch, alternately by h2h's speed
engine (per-call ``perf_counter_ns``, warm-up, rounds) and by
``torch.utils.benchmark.Timer(...).blocked_autorange()``, back to back, several times.
Both should agree: the ratio of the medians should lie within 0.95–1.05.

The default batch makes one call take well over 10 ms, so ``blocked_autorange`` times
single calls (``number_per_run`` 1, printed) and both medians are medians of per-call
times. With calls of a few milliseconds it times blocks of 10 and reports the median of
block *means*; on a shared machine those absorb every preemption inside a block while a
per-call median does not, and the two statistics part for that reason alone.

Run::

    .venv/bin/python benchmarks/bench_timer_fidelity.py [--threads 1] [--batch-size 512] [--seconds 0.5] [--pairs 16]

It prints each pair's medians and ratio, then the median ratio, and exits 1 when that
lies outside 0.95–1.05 (on a busy machine, re-run: ``uptime`` shows the load).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

import numpy as np
import torch
import torch.utils.benchmark as torch_benchmark

from headtohead.adapters.base import LoadContext, ModelAdapter
from headtohead.config.schema import ModelConfig, model_settings
from headtohead.config.speed import SpeedConfig
from headtohead.data.base import Dataset
from headtohead.engines.speed import measure_speed

WIDTH, FEATURES, CLASSES = 1024, 256, 10


class MLPAdapter(ModelAdapter):
    """A 4-layer MLP over feature rows."""

    kind = "python"
    modalities = ("features",)

    def __init__(self) -> None:
        super().__init__(
            model_settings(name="mlp", kind="python", source="benchmark"),
            LoadContext(label_names=tuple(str(i) for i in range(CLASSES)), modality="features"),
        )
        torch.manual_seed(0)
        self.module = torch.nn.Sequential(
            torch.nn.Linear(FEATURES, WIDTH),
            torch.nn.ReLU(),
            torch.nn.Linear(WIDTH, WIDTH),
            torch.nn.ReLU(),
            torch.nn.Linear(WIDTH, WIDTH),
            torch.nn.ReLU(),
            torch.nn.Linear(WIDTH, CLASSES),
        ).eval()

    @classmethod
    def load(cls, config: ModelConfig, context: LoadContext) -> MLPAdapter:
        raise NotImplementedError

    def preprocess(self, examples):  # noqa: ANN001, ANN201
        return torch.as_tensor(np.asarray(examples), dtype=torch.float32)

    def forward(self, inputs):  # noqa: ANN001, ANN201
        with torch.inference_mode():
            return self.module(inputs)


def h2h_times(
    adapter: MLPAdapter, dataset: Dataset, batch_size: int, threads: int, seconds: float
) -> tuple[float, float]:
    """Median and minimum per-batch forward latency (seconds) from h2h's speed engine."""
    config = SpeedConfig(
        scenarios=["offline"],
        num_batches=1,
        warmup_iterations=10,
        warmup_seconds=0.05,
        min_iterations=50,
        min_seconds=seconds,
        rounds=5,
        num_threads=threads,
        pipeline_iterations=0,
        memory=False,
        telemetry=False,
    )
    summary = measure_speed([adapter], dataset, config, batch_size=batch_size)
    stats = summary.model(adapter.name).offline.per_batch
    return stats.p50_s, stats.min_s


def torch_times(adapter: MLPAdapter, batch: torch.Tensor, threads: int, seconds: float) -> tuple[float, float, int]:
    """Median and minimum per-call latency (seconds) from ``torch.utils.benchmark`` on the same call,
    and its calls per block (each of its times is a block's mean per call)."""
    timer = torch_benchmark.Timer(
        stmt="adapter.forward(batch)", globals={"adapter": adapter, "batch": batch}, num_threads=threads
    )
    measurement = timer.blocked_autorange(min_run_time=seconds)
    return measurement.median, min(measurement.times), measurement.number_per_run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=512)
    parser.add_argument("--seconds", type=float, default=0.5, help="measuring time per tool and pair")
    parser.add_argument("--pairs", type=int, default=16, help="back-to-back h2h/torch pairs")
    args = parser.parse_args(argv)

    rows = np.random.default_rng(0).normal(size=(args.batch_size, FEATURES)).astype(np.float32)
    dataset = Dataset(
        "synthetic", "features", rows, np.zeros(len(rows), dtype=np.int64), tuple(str(i) for i in range(CLASSES))
    )
    adapter = MLPAdapter()
    batch = adapter.preprocess(rows)
    print(
        f"4-layer MLP ({adapter.num_parameters():,} parameters), batch {args.batch_size}, "
        f"{args.threads} thread(s), torch {torch.__version__}, load average {_load()}"
    )
    ratios, min_ratios = [], []
    for pair in range(args.pairs):
        # Who goes first alternates, so a machine getting busier or quieter favours neither tool.
        if pair % 2 == 0:
            ours, ours_min = h2h_times(adapter, dataset, args.batch_size, args.threads, args.seconds)
            theirs, theirs_min, per_block = torch_times(adapter, batch, args.threads, args.seconds)
        else:
            theirs, theirs_min, per_block = torch_times(adapter, batch, args.threads, args.seconds)
            ours, ours_min = h2h_times(adapter, dataset, args.batch_size, args.threads, args.seconds)
        ratios.append(ours / theirs)
        min_ratios.append(ours_min / theirs_min)
        print(
            f"pair {pair + 1}: h2h median {ours * 1e3:.4f} ms   torch.utils.benchmark median {theirs * 1e3:.4f} ms"
            f"   ratio {ratios[-1]:.4f}   (minimum ratio {min_ratios[-1]:.4f}, torch calls/block {per_block})"
        )
    ratio = statistics.median(ratios)
    inside = 0.95 <= ratio <= 1.05
    print(
        f"median ratio h2h / torch.utils.benchmark = {ratio:.4f} ({'within' if inside else 'OUTSIDE'} 0.95–1.05); "
        f"minimum ratio {statistics.median(min_ratios):.4f}; load average {_load()}"
    )
    return 0 if inside else 1


def _load() -> str:
    # On a busy machine the two medians part: per-call medians skip preemptions that block means include.
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


if __name__ == "__main__":
    sys.exit(main())
