"""The sweep's curves: throughput and p95 latency against batch size per variant, and each variant's accuracy
difference to its parent with its interval (truncation by ``max_length`` shows there too)."""

from __future__ import annotations

from matplotlib.figure import Figure

from headtohead.report.words.sweep import sweep_level
from headtohead.results.sweep import SweepResult

__all__ = ["sweep_figure"]


def sweep_figure(result: SweepResult) -> Figure:
    """Throughput and p95 latency against batch size per variant, and accuracy differences with their intervals."""
    fig = Figure(figsize=(16, 5), layout="constrained")
    ax_tp, ax_lat, ax_q = fig.subplots(1, 3)
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
    return fig
