"""Renderings of a sweep: its sentences, the table (terminal and Markdown), the curves (PNG), the files
beside ``sweep.json``.

One row per variant and batch size: status, accuracy difference to the parent with its
interval and McNemar p, throughput, per-batch p95 latency, speed-up over the parent with
its interval, memory, and — for failed or skipped cells — the reason. The figure shows
throughput and p95 latency against batch size for every variant, and every variant's
accuracy difference to its parent with its interval (truncation by ``max_length`` shows
there too). Nothing here measures or prints.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from headtohead.results.sweep import ModelSweep, QualityVsParent, Recommendation, SpeedPoint, SweepCell, SweepResult
from headtohead.runtime.files import write_bytes_atomic, write_text_atomic

__all__ = [
    "sweep_rows",
    "sweep_table",
    "sweep_markdown",
    "sweep_figure",
    "write_sweep_report",
    "SWEEP_COLUMNS",
    "sweep_level",
    "pp",
    "variant_verdict",
    "recommendation_sentence",
]


def pp(fraction: float, *, sign: bool = True) -> str:
    """An accuracy difference in percentage points with a real minus sign: ``-0.003`` → ``−0.3``.

    Examples
    --------
    >>> pp(-0.003), pp(0.012), pp(0.0)
    ('−0.3', '+1.2', '+0.0')
    """
    text = f"{fraction * 100:+.1f}" if sign else f"{fraction * 100:.1f}"
    return text.replace("-", "−")


def variant_verdict(name: str, parent: str, q: QualityVsParent) -> str:
    """One sentence on a variant's quality against its parent (stored as ``QualityVsParent.verdict``).

    Examples
    --------
    ``m[int8]: −0.3 pp accuracy vs m (95 % CI −0.9 to +0.2), McNemar p = 0.31, not significant; 3 of 872
    predictions changed; non-inferior at a 1.0 pp margin``
    """
    diff, low, high, p, p_adj = q.difference, q.ci_low, q.ci_high, q.p_value, q.p_adjusted
    significant, n, margin, non_inferior = q.significant, q.n_examples, q.margin, q.non_inferior
    changed = round((1.0 - q.agreement) * n)
    level = f"{q.confidence * 100:g} %"
    adjusted = f", Holm {p_adj:.2g}" if p_adj != p else ""
    text = (
        f"{name}: {pp(diff)} pp accuracy vs {parent} ({level} CI {pp(low)} to {pp(high)}), McNemar p = {p:.2g}"
        f"{adjusted}, {'significant' if significant else 'not significant'}; {changed} of {n} predictions changed"
    )
    if margin is not None:
        if non_inferior:
            text += f"; non-inferior at a {pp(margin, sign=False)} pp margin"
        else:
            text += f"; not shown non-inferior at a {pp(margin, sign=False)} pp margin (lower bound {pp(low)} pp)"
    return text


def _budget_text(max_latency_ms: float | None, max_memory_mb: float | None, margin: float | None) -> str:
    parts = []
    if max_latency_ms is not None:
        parts.append(f"p95 ≤ {max_latency_ms:g} ms/batch")
    if max_memory_mb is not None:
        parts.append(f"memory ≤ {max_memory_mb:g} MiB")
    parts.append(
        f"non-inferior at a {pp(margin, sign=False)} pp margin"
        if margin is not None
        else "non-inferior to the parent at the sweep's margin"
    )
    return ", ".join(parts)


def _rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def recommendation_sentence(recommendation: Recommendation, models: Sequence[ModelSweep]) -> str:
    """The recommendation in one sentence (stored as ``Recommendation.sentence``): what, at which batch size,
    how fast against the parent, at what quality — or what stood in the way."""
    c = recommendation.constraints
    budget = _budget_text(c.get("max_latency_ms"), c.get("max_memory_mb"), c.get("max_accuracy_drop"))
    if not recommendation.met:
        if recommendation.candidates == 0:
            return "Nothing was measured: every cell failed or was skipped (see the reasons in the table)."
        why = ", ".join(f"{n} {reason}" for reason, n in recommendation.excluded.items())
        return f"No variant meets the budget ({budget}): of {recommendation.candidates} measured points, {why}."
    model = next(m for m in models if m.model == recommendation.model)
    cell = next(c for c in model.cells if c.name == recommendation.cell)
    point = next(p for p in cell.points if p.batch_size == recommendation.batch_size and p.status == "measured")
    return _sentence(cell, point, budget, model.best_batch_size(cell.name))


def _sentence(cell: SweepCell, point: SpeedPoint, budget: str, unconstrained: int | None) -> str:
    assert point.throughput is not None and point.p95_ms is not None
    if cell.parent:
        head = f"Recommended: {cell.name} as it is (the fp32 eager parent) at batch {point.batch_size}"
        speed = "no variant was faster within the budget"
    else:
        head = f"Recommended: {cell.name} at batch {point.batch_size}"
        ratio = point.vs_parent
        speed = (
            f"{ratio.ratio:.2f}× the parent's speed at that batch ({ratio.confidence * 100:g} % CI "
            f"{ratio.ci_low:.2f}–{ratio.ci_high:.2f})"
            if ratio is not None
            else "no paired speed-up (the parent did not run at that batch size)"
        )
    memory = f", {_rate(point.memory_mb)} MiB" if point.memory_mb is not None else ""
    quality = ""
    if cell.quality is not None:
        q = cell.quality
        quality = (
            f", accuracy {pp(q.difference)} pp vs the parent ({q.confidence * 100:g} % CI {pp(q.ci_low)} to "
            f"{pp(q.ci_high)}, McNemar p = {q.p_value:.2g})"
        )
    peak = ""
    if unconstrained is not None and unconstrained != point.batch_size:
        peak = f"; without the budget its throughput would peak at batch {unconstrained}"
    return (
        f"{head} — {_rate(point.throughput)} samples/s, {speed}, p95 {point.p95_ms:.3g} ms/batch{memory}"
        f"{quality}; throughput-optimal batch size within the budget ({budget}): {point.batch_size}{peak}."
    )


SWEEP_COLUMNS = (
    "variant",
    "batch",
    "status",
    "Δ accuracy vs parent (CI)",
    "McNemar p",
    "samples/s",
    "p95 ms/batch",
    "speed-up vs parent (CI)",
    "memory MiB",
    "notes",
)


def sweep_level(result: SweepResult) -> str:
    """The intervals' level, from the records (``1 − stats.alpha``), e.g. ``95 %``."""
    found = [c.quality.confidence for c in result.cells() if c.quality is not None]
    return f"{100 * (found[0] if found else 1 - result.experiment.get('stats', {}).get('alpha', 0.05)):g} %"


def _quality_text(cell: SweepCell) -> tuple[str, str]:
    if cell.parent:
        return (f"parent ({cell.accuracy:.1%})" if cell.accuracy is not None else "parent"), "—"
    q = cell.quality
    if q is None:
        return "—", "—"
    mark = "" if q.non_inferior is None else (" ✓" if q.non_inferior else " ✗")
    return f"{pp(q.difference)} pp ({pp(q.ci_low)} to {pp(q.ci_high)}){mark}", f"{q.p_value:.2g}"


def _mib(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def sweep_rows(result: SweepResult) -> list[dict[str, str]]:
    """The table's rows as strings, keyed by :data:`SWEEP_COLUMNS` (shared by every rendering)."""
    rows: list[dict[str, str]] = []
    for model in result.models:
        for cell in model.cells:
            quality, p_value = _quality_text(cell)
            if cell.status != "measured" or not cell.points:
                status = f"{cell.status} ({cell.stage})"
                values = (cell.name, "—", status, quality, p_value, "—", "—", "—", "—", cell.reason or "")
                rows.append(dict(zip(SWEEP_COLUMNS, values, strict=True)))
                continue
            for i, point in enumerate(cell.points):
                first = i == 0
                if point.status != "measured":
                    values = (
                        cell.name,
                        str(point.batch_size),
                        "failed",
                        quality if first else "",
                        p_value if first else "",
                        "—",
                        "—",
                        "—",
                        "—",
                        point.reason or "",
                    )
                else:
                    ratio = point.vs_parent
                    speedup = (
                        "—"
                        if cell.parent or ratio is None
                        else f"{ratio.ratio:.2f}× ({ratio.ci_low:.2f}–{ratio.ci_high:.2f})"
                    )
                    values = (
                        cell.name,
                        str(point.batch_size),
                        "measured",
                        quality if first else "",
                        p_value if first else "",
                        f"{point.throughput:,.1f}",
                        f"{point.p95_ms:.3g}",
                        speedup,
                        _mib(point.memory_mb),
                        "; ".join(cell.notes) if first and not cell.parent else "",
                    )
                rows.append(dict(zip(SWEEP_COLUMNS, values, strict=True)))
    return rows


def sweep_table(result: SweepResult, *, notes: bool = False) -> Any:
    """A ``rich`` table of the sweep (the notes column only when ``notes``)."""
    from rich.markup import escape
    from rich.table import Table

    columns = SWEEP_COLUMNS if notes else SWEEP_COLUMNS[:-1] + ("reason",)
    table = Table(
        title=f"Sweep {result.name} — {result.dataset.n_examples} examples, device "
        f"{', '.join(sorted({m.device for m in result.models}))}"
    )
    for column in columns:
        table.add_column(
            column, justify="left" if column in ("variant", "status", "notes", "reason") else "right", overflow="fold"
        )
    for row in sweep_rows(result):
        last = row["notes"] if notes or row["status"] != "measured" else ""
        table.add_row(*[escape(row[c]) for c in SWEEP_COLUMNS[:-1]], escape(last))
    return table


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def sweep_markdown(result: SweepResult, *, image: str | None = None) -> str:
    """The sweep as Markdown: recommendation, table, quality verdicts, notes and (optionally) the figure."""
    lines = [
        f"# Sweep: {_md(result.name)}",
        "",
        (
            f"{result.dataset.n_examples} examples of {_md(result.dataset.source)}; "
            f"{result.environment.cpu_model}, torch threads {result.environment.torch_threads}; "
            f"headtohead {result.headtohead_version}, {result.created_at}."
        ),
        "",
        f"**{_md(result.recommendation.sentence)}**",
        "",
        f"Intervals (CI) at {sweep_level(result)}.",
        "",
        "| " + " | ".join(SWEEP_COLUMNS) + " |",
        "|" + "|".join("---" for _ in SWEEP_COLUMNS) + "|",
    ]
    lines += ["| " + " | ".join(_md(row[c]) for c in SWEEP_COLUMNS) + " |" for row in sweep_rows(result)]
    verdicts = [c.quality.verdict for c in result.cells() if c.quality is not None]
    if verdicts:
        lines += ["", "## Quality against the parent", ""] + [f"- {_md(v)}" for v in verdicts]
    speed = [
        f"- {_md(p.vs_parent.verdict)} (batch {p.batch_size})"
        for c in result.cells()
        if not c.parent
        for p in c.points
        if p.vs_parent is not None
    ]
    if speed:
        lines += ["", "## Speed against the parent", ""] + speed
    if result.warnings:
        lines += ["", "## Notes", ""] + [f"- {_md(w)}" for w in result.warnings]
    if image:
        lines += ["", f"![sweep curves]({image})"]
    return "\n".join(lines) + "\n"


def sweep_figure(result: SweepResult) -> bytes:
    """PNG: throughput and p95 latency against batch size per variant, and accuracy differences with CIs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_tp, ax_lat, ax_q) = plt.subplots(1, 3, figsize=(16, 5), constrained_layout=True)
    measured = [c for c in result.cells() if c.status == "measured"]
    for cell in measured:
        pts = [p for p in cell.points if p.status == "measured"]
        if not pts:
            continue
        style = {"linewidth": 2.5, "color": "black"} if cell.parent else {"linewidth": 1.3}
        sizes = [p.batch_size for p in pts]
        ax_tp.plot(sizes, [p.throughput for p in pts], marker="o", label=cell.name, **style)
        ax_lat.plot(sizes, [p.p95_ms for p in pts], marker="o", label=cell.name, **style)
    for ax, label in ((ax_tp, "samples/s"), (ax_lat, "p95 latency per batch (ms)")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("batch size")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    ax_lat.set_yscale("log")
    ax_tp.set_title("throughput")
    ax_lat.set_title("latency")
    ax_tp.legend(fontsize=7, loc="best")
    judged = [c for c in measured if c.quality is not None]
    for i, cell in enumerate(judged):
        q = cell.quality
        assert q is not None
        ax_q.errorbar(
            [q.difference * 100],
            [i],
            xerr=[[(q.difference - q.ci_low) * 100], [(q.ci_high - q.difference) * 100]],
            fmt="o",
            color="tab:red" if q.significant and q.difference < 0 else "tab:blue",
            capsize=3,
        )
    ax_q.axvline(0.0, color="black", linewidth=1)
    margin = result.settings.get("max_accuracy_drop")
    if margin:
        ax_q.axvline(-margin * 100, color="gray", linestyle="--", linewidth=1, label="non-inferiority margin")
        ax_q.legend(fontsize=7)
    ax_q.set_yticks(range(len(judged)), [c.name for c in judged], fontsize=7)
    ax_q.set_xlabel(f"accuracy − parent's (pp, {sweep_level(result)} CI)")
    ax_q.set_title("quality vs parent")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    return buffer.getvalue()


def write_sweep_report(result: SweepResult, out_dir: str | Path) -> list[Path]:
    """Write ``sweep.md`` and ``sweep.png`` into ``out_dir``; return their paths."""
    out = Path(out_dir)
    figure, markdown = out / "sweep.png", out / "sweep.md"
    write_bytes_atomic(figure, sweep_figure(result))
    write_text_atomic(markdown, sweep_markdown(result, image=figure.name))
    return [markdown, figure]
