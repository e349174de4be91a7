"""Load: a whole ``h2h run`` over 100,000 generated eval examples with two small models, in bounded memory.

Two tiny transformers classifiers (a BERT and a RoBERTa made on the fly, no network) are
compared on a generated sentiment table of ``--examples`` rows, through the ordinary run:
quality pass per model, saving after each model, statistics (bootstrap over every
example), results on disk. A sampler thread reads the process's resident memory (RSS)
every 10 ms; the benchmark prints, per model and per 10,000 examples evaluated, the RSS
then and the peak within that window, then the peak of the statistics and saving stage.

What bounded means here: predictions are kept as NumPy arrays (an ``int64`` class and a
``float32`` probability row per example — 16 bytes per example for two classes — not
Python lists), so the growth over a pass is the predictions plus the dataset itself,
flat per 10k examples after the first batches warm up the allocator. The summary shows
the growth per 10k examples and the bytes the predictions take.

Run::

    .venv/bin/python benchmarks/bench_load.py [--examples 100000] [--batch-size 256] [--resamples 1000]

Not part of the test suite: about 30 s on two idle CPU cores (minutes on a busy machine).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from pathlib import Path

import psutil

import headtohead
from headtohead.testing.data import make_text_table
from headtohead.testing.text import make_tiny_bert, make_tiny_roberta

MIB = 2**20
WINDOW = 10_000


class RSSSampler(threading.Thread):
    """Samples this process's RSS every ``interval`` seconds; :meth:`take_peak` returns and resets the peak."""

    def __init__(self, interval: float = 0.01) -> None:
        super().__init__(daemon=True)
        self.process = psutil.Process(os.getpid())
        self.interval = interval
        self.lock = threading.Lock()
        self.peak = self.overall = self.rss()
        self.stopped = threading.Event()

    def rss(self) -> int:
        return int(self.process.memory_info().rss)

    def run(self) -> None:
        while not self.stopped.wait(self.interval):
            now = self.rss()
            with self.lock:
                self.peak = max(self.peak, now)
                self.overall = max(self.overall, now)

    def take_peak(self) -> int:
        now = self.rss()
        with self.lock:
            peak, self.peak = max(self.peak, now), now
            self.overall = max(self.overall, peak)
        return peak


def build(root: Path, n_examples: int, batch_size: int, resamples: int) -> dict:
    """The generated table, the two tiny models, and the experiment comparing them."""
    table = make_text_table(root / "eval.csv", n_per_class=n_examples // 2, seed=7)
    bert = make_tiny_bert(root / "bert", ["negative", "positive"], seed=1)
    roberta = make_tiny_roberta(root / "roberta", ["negative", "positive"], seed=2)
    return {
        "name": "load",
        "data": {"path": str(table)},
        "models": [
            {"name": "bert", "kind": "transformers", "source": str(bert), "max_length": 32},
            {"name": "roberta", "kind": "transformers", "source": str(roberta), "max_length": 32},
        ],
        "eval": {"batch_size": batch_size, "device": "cpu"},
        "stats": {"n_resamples": resamples},
        "speed": {"enabled": False},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=100_000, help="Eval examples to generate.")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--resamples", type=int, default=1000, help="Bootstrap resamples of the statistics.")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        experiment = build(root, args.examples, args.batch_size, args.resamples)
        sampler = RSSSampler()
        sampler.start()
        start_rss = sampler.take_peak()
        rows: list[tuple[str, int, int, int]] = []
        marks: dict[str, int] = {}

        def progress(task: str, done: int, total: int) -> None:
            examples = min(done * args.batch_size, args.examples)
            if examples >= marks.setdefault(task, WINDOW) or done == total:
                rows.append((task, examples, sampler.rss(), sampler.take_peak()))
                marks[task] = (examples // WINDOW + 1) * WINDOW

        began = time.perf_counter()
        outcome = headtohead.run(experiment, out_dir=root / "out", progress=progress)
        elapsed = time.perf_counter() - began
        end_peak = sampler.take_peak()  # the statistics and saving stage, after the last pass
        sampler.stopped.set()
        sizes = {p.name: p.stat().st_size for p in (root / "out").iterdir() if p.is_file()}

    print(
        f"h2h run over {args.examples:,} examples, 2 models, batch {args.batch_size}: {elapsed:.1f} s; "
        f"RSS before the run {start_rss / MIB:.0f} MiB"
    )
    print(f"{'model':<10}{'examples':>10}{'RSS MiB':>10}{'peak in window MiB':>20}")
    for task, examples, rss, peak in rows:
        print(f"{task:<10}{examples:>10,}{rss / MIB:>10.1f}{peak / MIB:>20.1f}")
    for task in dict.fromkeys(row[0] for row in rows):
        mine = [row for row in rows if row[0] == task]
        if len(mine) >= 3:  # growth after the first window (allocator and model warm-up excluded)
            per_window = (mine[-1][2] - mine[0][2]) / MIB / max(1, (mine[-1][1] - mine[0][1]) / WINDOW)
            print(f"{task}: RSS grew {per_window:+.2f} MiB per 10k examples after the first 10k")
    predictions = outcome.predictions
    in_memory = sum(m.pred.nbytes + m.proba.nbytes for m in predictions.models.values())
    print(f"statistics + saving: peak {end_peak / MIB:.1f} MiB; overall peak {sampler.overall / MIB:.1f} MiB")
    per_example = in_memory / args.examples / len(predictions.models)
    print(
        f"predictions in memory: {in_memory / MIB:.2f} MiB ({per_example:.0f} bytes per example per model); "
        f"on disk: predictions.npz {sizes.get('predictions.npz', 0) / MIB:.2f} MiB, "
        f"results.json {sizes.get('results.json', 0) / 1024:.0f} KiB"
    )
    for model in outcome.result.models:
        print(f"{model.name}: accuracy {model.quality.accuracy:.3f}, eval {model.eval_time_s:.1f} s")


if __name__ == "__main__":
    main()
