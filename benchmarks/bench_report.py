"""Benchmark: what the report of a small run costs, and why (issue 33: "report 24.5 s" for 40 examples).

A sample run of three models on 40 examples with slices (``sim.sample.sample_run``, the real
statistics) is written to a folder; then a fresh process — as ``h2h run`` and ``--resume`` do —
imports the report and writes ``report.html``. Printed: the machine's load, the seconds of the
import and of the report (wall and this process's CPU), each chart's CPU seconds (drawing and SVG),
and the report's share of the whole process. Run::

    PYTHONPATH=src .venv/bin/python benchmarks/bench_report.py [--rounds 3] [--against ../old/src]

``--against`` measures another version of the code (its ``src/``) in the same run, alternating which
goes first, and prints the ratio of CPU seconds.

On a loaded machine the wall seconds grow with the load while the CPU seconds do not: the CPU
seconds are the report's cost; the ratio is the machine's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

CHILD = textwrap.dedent("""
    import json, sys, time
    wall, cpu = time.perf_counter(), time.process_time()
    import headtohead
    from headtohead.report import plots
    import headtohead.report.figures as figures
    from headtohead.report.write import write_reports
    imported = (time.perf_counter() - wall, time.process_time() - cpu)
    charts = {}
    try:  # the report document (issue 39): a chart is drawn when a format renders its Figure
        import headtohead.report.document as document
        owner, name = document.Figure, "render"
    except ImportError:  # the code before it drew each FigureSpec as SVG
        owner, name = figures.FigureSpec, "svg"
    draw = getattr(owner, name)

    def timed(self, *args):
        start = time.process_time()
        out = draw(self, *args)
        charts[self.key] = time.process_time() - start
        return out

    setattr(owner, name, timed)
    folder = sys.argv[1]
    result, predictions = headtohead.load_result(folder + "/results.json"), headtohead.load_predictions(folder)
    wall2, cpu2 = time.perf_counter(), time.process_time()
    write_reports(result, folder, predictions=predictions)
    report = (time.perf_counter() - wall2, time.process_time() - cpu2)
    total = (time.perf_counter() - wall, time.process_time() - cpu)
    print(json.dumps({"import": imported, "report": report, "total": total, "charts": charts}))
""")


def _sample(folder: Path) -> None:
    from sim.sample import sample_run

    from headtohead.results.files import PREDICTIONS_FILE, RESULTS_FILE

    result, predictions = sample_run({"a": 0.7, "b": 0.8, "c": 0.9}, n_examples=40, speed=False, n_resamples=500)
    (folder / RESULTS_FILE).write_text(result.model_dump_json(), encoding="utf-8")
    predictions.save(folder / PREDICTIONS_FILE)


def _rounds(folder: Path, rounds: int, sources: dict[str, str | None]) -> dict[str, list[dict]]:
    """Each round, a fresh process per code (alternating which goes first), on the same sample run."""
    runs: dict[str, list[dict]] = {label: [] for label in sources}
    labels = list(sources)
    for i in range(rounds):
        for label in labels if i % 2 == 0 else labels[::-1]:
            env = {**os.environ, "MPLBACKEND": "Agg"}
            if sources[label] is not None:
                env["PYTHONPATH"] = str(sources[label])
            done = subprocess.run(
                [sys.executable, "-c", CHILD, str(folder)], env=env, capture_output=True, text=True, check=True
            )
            runs[label].append(json.loads(done.stdout.strip().splitlines()[-1]))
    return runs


def _print(label: str, runs: list[dict]) -> None:
    def median(key: str, which: int) -> float:
        return statistics.median(r[key][which] for r in runs)

    print(f"{label}:")
    for key in ("import", "report", "total"):
        print(f"  {key:7s} {median(key, 0):6.2f} s wall  {median(key, 1):6.2f} s CPU")
    print(f"  report's share of the process: {median('report', 1) / median('total', 1):.0%} of its CPU seconds")
    for chart in runs[0]["charts"]:
        print(f"    {chart:22s} {statistics.median(r['charts'][chart] for r in runs):.3f} s CPU")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--against", type=Path, default=None, help="another clone's src/: both codes measured side by side, alternating"
    )
    args = parser.parse_args()
    sources: dict[str, str | None] = {"this code": os.environ.get("PYTHONPATH")}
    if args.against is not None:
        sources["against"] = str(args.against.resolve())
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if args.against is None:
            _sample(folder)
        else:  # written by the older code, whose schema both read
            env = {**os.environ, "PYTHONPATH": f"{args.against.resolve()}:{Path(__file__).resolve().parent}"}
            code = f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r}); "
            code += f"from bench_report import _sample; from pathlib import Path; _sample(Path({tmp!r}))"
            subprocess.run([sys.executable, "-c", code], env=env, check=True)
        runs = _rounds(folder, args.rounds, sources)
    print(
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {args.rounds} fresh processes each, medians"
    )
    for label, measured in runs.items():
        _print(label, measured)
    if args.against is not None:
        ratio = [
            statistics.median(r["report"][1] for r in runs["this code"])
            / statistics.median(r["report"][1] for r in runs["against"]),
            statistics.median(r["total"][1] for r in runs["this code"])
            / statistics.median(r["total"][1] for r in runs["against"]),
        ]
        print(f"this code / against: report CPU {ratio[0]:.2f}×, whole process CPU {ratio[1]:.2f}×")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
