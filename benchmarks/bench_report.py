"""Benchmark: what the report of a small run costs, and why (issue 33: "report 24.5 s" for 40 examples).

A sample run of three models on 40 examples with slices (``sim.sample.sample_run``, the real
statistics) is written to a folder; then a fresh process — as ``h2h run`` and ``--resume`` do —
imports the report and writes ``report.html``. Printed: the machine's load, the seconds of the
import and of the report (wall and this process's CPU), each chart's CPU seconds (drawing and SVG),
and the report's share of the whole process. Run::

    PYTHONPATH=src .venv/bin/python benchmarks/bench_report.py [--rounds 3]

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
    draw = figures.FigureSpec.svg

    def timed(self):
        start = time.process_time()
        out = draw(self)
        charts[self.key] = time.process_time() - start
        return out

    figures.FigureSpec.svg = timed
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    env = {**os.environ, "MPLBACKEND": "Agg"}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _sample(folder)
        runs = []
        for _ in range(args.rounds):
            done = subprocess.run(
                [sys.executable, "-c", CHILD, str(folder)], env=env, capture_output=True, text=True, check=True
            )
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    load = os.getloadavg()[0]

    def median(key: str, which: int) -> float:
        return statistics.median(r[key][which] for r in runs)

    print(f"load average {load:.1f} on {os.cpu_count()} cores; {args.rounds} fresh processes, medians")
    for key in ("import", "report", "total"):
        print(f"  {key:7s} {median(key, 0):6.2f} s wall  {median(key, 1):6.2f} s CPU")
    print(f"  report's share of the process: {median('report', 1) / median('total', 1):.0%} of its CPU seconds")
    for chart in runs[0]["charts"]:
        print(f"    {chart:22s} {statistics.median(r['charts'][chart] for r in runs):.3f} s CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
