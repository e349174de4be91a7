"""The statistical audit: simulate every interval and decision a report and the gate show, over a grid.

Each row is one interval's coverage or one decision's error rate at one grid point, measured
by seeded simulation, under the method used before the statistics issue ("before", where
there was one) and under the method now ("after"), with the Monte-Carlo standard error of
"after". Targets: a 95 % interval covers ≥ 93 % wherever n ≥ 50 (≥ 90 % below); a test, the
gate and a stop rule err at most their nominal rate + 1 pp (both within two Monte-Carlo
standard errors). The grid: n from 20 to 10,000; accuracy 0.5–0.99; discordance 0–40 %;
2–20 classes; with and without groups of related examples; early stops; speed.

Sections (``benchmarks/audit/``): ``accuracy`` (the gap's interval and test, the gate, sweeps,
failures), ``metrics`` (calibration, Brier/NLL, class-averaged metrics, per-class recall),
``dependence`` (groups, early stops), ``speed`` (speed verdicts and warnings), ``prompts`` (an LLM's
comparison pooled over several prompts), ``labels`` (a pair's fragility under wrong gold labels),
``repeats`` (models run several times compared over every run), ``cascade`` (a cascade's Learn-then-Test
guarantee).

Run (seeded: the same command prints the same table)::

    PYTHONPATH=src .venv/bin/python benchmarks/audit_statistics.py            # the full grid, ~15 min
    PYTHONPATH=src .venv/bin/python benchmarks/audit_statistics.py --quick    # the reduced grid of make test
    PYTHONPATH=src .venv/bin/python benchmarks/audit_statistics.py --out audit.md --section accuracy

Exit code 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from audit.common import GRID_NOTE, Row, as_rows, markdown_table, summary_table  # noqa: E402

#: section → (module, function) in benchmarks/audit/
SECTIONS = {
    "accuracy": ("audit.accuracy", "accuracy_rows"),
    "metrics": ("audit.metrics", "metric_rows"),
    "dependence": ("audit.dependence", "dependence_rows"),
    "speed": ("audit.speed", "speed_rows"),
    "prompts": ("audit.prompts", "prompt_rows"),
    "speed_stopping": ("audit.speed_stopping", "stopping_rows"),
    "labels": ("audit.labels", "label_rows"),
    "repeats": ("audit.repeats", "repeat_rows"),
    "cascade": ("audit.cascade", "cascade_rows"),
    "capacity": ("audit.capacity", "capacity_rows"),
    "dominance": ("audit.dominance", "dominance_rows"),
}


def run_audit(sections: list[str] | None = None, *, quick: bool = False, seed: int = 0) -> list[Row]:
    """Every row of the chosen sections (all by default)."""
    rows: list[Row] = []
    for name in sections or list(SECTIONS):
        module, function = SECTIONS[name]
        try:
            found = importlib.import_module(module)
        except ModuleNotFoundError:
            continue  # a section not present in this checkout
        rows.extend(as_rows(getattr(found, function)(quick=quick, seed=seed)))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the reduced grid (what make test runs)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--section", action="append", choices=list(SECTIONS), help="repeatable; default: all")
    parser.add_argument("--out", type=Path, help="also write the full table (Markdown) here")
    parser.add_argument("--summary", type=Path, help="also write the summary table (one line per quantity) here")
    args = parser.parse_args(argv)
    began = time.perf_counter()
    rows = run_audit(args.section, quick=args.quick, seed=args.seed)
    table = markdown_table(rows)
    missed = [r for r in rows if not r.met]
    summary = (
        f"{len(rows)} rows, {len(rows) - len(missed)} meet their target, {len(missed)} miss it "
        f"({time.perf_counter() - began:.0f} s, seed {args.seed}{', quick grid' if args.quick else ''}). "
        f"{GRID_NOTE}."
    )
    print(table)
    print()
    print(summary_table(rows))
    print()
    print(summary)
    command = (
        "PYTHONPATH=src .venv/bin/python benchmarks/audit_statistics.py"
        + (" --quick" if args.quick else "")
        + "".join(f" --section {s}" for s in args.section or [])
        + (f" --seed {args.seed}" if args.seed else "")
    )
    if args.out is not None:
        args.out.write_text(
            f"# The statistical audit, every grid point\n\nMade by `{command}` (see "
            f"`docs/statistics.md`, section 12).\n\n{table}\n\n{summary}\n",
            encoding="utf-8",
        )
    if args.summary is not None:
        args.summary.write_text(summary_table(rows) + "\n\n" + summary + "\n", encoding="utf-8")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
