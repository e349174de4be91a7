"""``h2h run --until-decided`` on SST-2 dev: a strong and a clearly weaker real model, both ways.

Builds TF-IDF + logistic regression on the first 20,000 and the first 300 sentences of
``../shared/data/sst2/train.tsv`` (into a temporary folder), then runs the comparison on the
872 dev sentences once with every example and once with ``--until-decided``, alternately
(``--repeats`` times each; wall times are medians), and prints what each decided and what it cost.

Run: ``nice .venv/bin/python benchmarks/sequential_sst2.py [--repeats 3] [--chunk 64]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from sim.tfidf import save_tfidf_logreg

import headtohead

SST2 = Path(__file__).resolve().parents[2] / "shared" / "data" / "sst2"


def experiment(models: dict[str, Path], chunk: int, until_decided: bool) -> dict:
    return {
        "name": "sst2-sequential",
        "seed": 42,
        "data": {"path": str(SST2 / "dev.tsv"), "label_column": "label"},
        "models": [{"name": name, "kind": "sklearn", "source": str(path)} for name, path in models.items()],
        "eval": {"batch_size": 32, "device": "cpu", "until_decided": until_decided, "chunk_size": chunk},
        "stats": {"n_resamples": 2000},
        "speed": {"enabled": False},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--chunk", type=int, default=64)
    args = parser.parse_args()
    if not SST2.is_dir():
        raise SystemExit(f"{SST2} not found: this benchmark uses the shared public SST-2 data")
    with tempfile.TemporaryDirectory() as tmp:
        models = {
            "logreg-20k": save_tfidf_logreg(SST2 / "train.tsv", 20_000, Path(tmp) / "strong.skops"),
            "logreg-300": save_tfidf_logreg(SST2 / "train.tsv", 300, Path(tmp) / "weak.skops"),
        }
        times: dict[bool, list[float]] = {False: [], True: []}
        runs = {}
        for repeat in range(args.repeats):
            for until in (False, True):
                began = time.perf_counter()
                runs[until] = headtohead.run(
                    experiment(models, args.chunk, until), out_dir=Path(tmp) / f"out-{until}-{repeat}", report=True
                )
                times[until].append(time.perf_counter() - began)
    full, seq = runs[False].result, runs[True].result
    record = seq.stats.sequential[0]
    comparison = full.stats.comparisons[0]
    print("| run | examples used | decision | accuracy logreg-20k / logreg-300 | model passes | wall time (median) |")
    print("|---|---|---|---|---|---|")
    for name, result, used, decision in (
        (
            "every example",
            full,
            full.stats.models[0].n_examples,
            f"{comparison.winner or 'no'} better, McNemar p = {comparison.p_value:.2g}",
        ),
        (
            f"--until-decided (chunk {args.chunk})",
            seq,
            record.examples_used,
            f"{record.decision} (decided at {record.final.decided_at})",
        ),
    ):
        accuracies = " / ".join(f"{m.accuracy.value:.3f}" for m in result.stats.models)
        passes = sum(m.eval_time_s or 0.0 for m in result.models)
        print(
            f"| {name} | {used} of {result.dataset.n_examples} | {decision} | {accuracies} | {passes:.3f} s | "
            f"{statistics.median(times[name != 'every example']):.2f} s |"
        )
    print()
    print(seq.stats.comparisons[0].verdict)


if __name__ == "__main__":
    main()
