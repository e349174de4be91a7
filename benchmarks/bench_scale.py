"""Benchmark: the quality pass and the statistics at 10 k, 100 k and 1 M short texts.

Two tiny BERT classifiers (``headtohead.testing.text.make_tiny_bert``, hidden size 32, two
layers, seeds 1 and 2) evaluate synthetic short texts (3–12 words drawn from a 200-word
vocabulary, seeded) through the same plan ``h2h run`` makes; then
:func:`headtohead.stats.analyse` compares them (2,000 bootstrap resamples, BCa, as a run
does). Each size runs in a fresh process, so its memory figures are its own:

* ``eval s`` — wall seconds of both models' quality passes (``eval_time_s`` summed);
* ``eval +MiB`` — peak resident memory during the passes above what the process held
  before them (data and models loaded), sampled every 10 ms;
* ``kept MiB`` — what the results must keep: each model's predictions (int64) and
  probabilities (float32), the order and the true labels;
* ``stats s`` / ``stats +MiB`` — the same for ``analyse``.

Run with ``.venv/bin/python benchmarks/bench_scale.py`` (``--sizes 10000 100000`` for a
shorter run).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

_MIB = 2**20


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--n-resamples", type=int, default=2000)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (1: a tiny model's matrices are too small for a second thread to pay; 0: torch's default)",
    )
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child process: one size
    parser.add_argument("--models", type=Path, help=argparse.SUPPRESS)
    return parser.parse_args()


def synthetic_texts(n: int, seed: int = 0) -> tuple[list[str], np.ndarray]:
    """``n`` short texts of 3–12 words and a label each (seeded)."""
    rng = np.random.default_rng(seed)
    vocabulary = np.array([f"w{i}" for i in range(200)] + ["good", "bad", "fine", "dull", "great", "awful"])
    sizes = rng.integers(3, 13, n)
    words = rng.integers(0, len(vocabulary), int(sizes.sum()))
    cuts = np.concatenate([[0], np.cumsum(sizes)])
    texts = [" ".join(vocabulary[words[a:b]]) for a, b in zip(cuts[:-1], cuts[1:])]
    return texts, rng.integers(0, 2, n)


def _one_size(n: int, models: Path, batch_size: int, n_resamples: int) -> dict:
    from headtohead.adapters import LoadContext, create_adapter
    from headtohead.config.schema import model_settings
    from headtohead.data import Dataset
    from headtohead.engines.evaluate import evaluate_model
    from headtohead.engines.memory import RssSampler
    from headtohead.engines.planning import plan_evaluation
    from headtohead.results.predictions import Predictions
    from headtohead.stats import analyse

    texts, labels = synthetic_texts(n)
    dataset = Dataset("synthetic", "text", texts, labels, ("negative", "positive"))
    context = LoadContext(dataset.label_names, "text")
    configs = [
        model_settings(name=f"bert{s}", kind="transformers", source=str(models / f"bert{s}"), max_length=32)
        for s in (1, 2)
    ]
    adapters = [create_adapter(c, context) for c in configs]
    began = time.perf_counter()
    plan = plan_evaluation(dataset, batch_size, seed=0, models=configs, context=context)
    plan_s = time.perf_counter() - began
    predictions = Predictions(plan.order, dataset.labels[plan.order], dataset.label_names)
    sampler = RssSampler(interval_s=0.01)
    sampler.start()
    eval_s = 0.0
    for adapter in adapters:
        evaluation = evaluate_model(adapter, dataset, plan)
        eval_s += evaluation.seconds
        predictions.add(adapter.name, evaluation.pred, evaluation.proba)
    during_eval = sampler.stop()
    kept = (
        predictions.order.nbytes
        + predictions.y_true.nbytes
        + sum(m.pred.nbytes + m.proba.nbytes for m in predictions.models.values())
    )
    sampler = RssSampler(interval_s=0.01)
    sampler.start()
    began = time.perf_counter()
    summary = analyse(predictions, n_resamples=n_resamples)
    stats_s = time.perf_counter() - began
    during_stats = sampler.stop()
    return {
        "n": n,
        "plan_s": plan_s,
        "eval_s": eval_s,
        "eval_mib": (during_eval.peak - during_eval.baseline) / _MIB,
        "kept_mib": kept / _MIB,
        "stats_s": stats_s,
        "stats_mib": (during_stats.peak - during_stats.baseline) / _MIB,
        "accuracy": [m.accuracy.value for m in summary.models],
    }


def main() -> int:
    args = _arguments()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    if args.one is not None:
        print(json.dumps(_one_size(args.one, args.models, args.batch_size, args.n_resamples)))
        return 0
    import platform

    import torch

    from headtohead.testing.text import make_tiny_bert

    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; torch {torch.__version__} "
        f"({args.threads or torch.get_num_threads()} threads); batch {args.batch_size}; "
        f"{args.n_resamples} bootstrap resamples"
    )
    with tempfile.TemporaryDirectory(prefix="h2h-bench-scale-") as tmp:
        corpus, _ = synthetic_texts(2000, seed=1)
        for seed in (1, 2):
            make_tiny_bert(Path(tmp) / f"bert{seed}", ["negative", "positive"], texts=corpus, seed=seed)
        print(
            f"{'examples':>10s} {'plan s':>7s} {'eval s':>8s} {'eval +MiB':>10s} {'kept MiB':>9s} "
            f"{'stats s':>8s} {'stats +MiB':>11s}"
        )
        for n in args.sizes:
            command = [
                sys.executable,
                __file__,
                "--one",
                str(n),
                "--models",
                tmp,
                "--batch-size",
                str(args.batch_size),
                "--n-resamples",
                str(args.n_resamples),
                "--threads",
                str(args.threads),
            ]
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            if done.returncode:
                print(done.stderr[-3000:], file=sys.stderr)
                return done.returncode
            row = json.loads(done.stdout.strip().splitlines()[-1])
            print(
                f"{row['n']:>10,d} {row['plan_s']:7.1f} {row['eval_s']:8.1f} {row['eval_mib']:10.1f} "
                f"{row['kept_mib']:9.1f} {row['stats_s']:8.1f} {row['stats_mib']:11.1f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
