"""``h2h gate``: a CI check that fails only when a candidate is worse than a baseline beyond a margin.

See ``docs/cli.md``, "Margins".
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from headtohead.cli.options import level, margin

__all__ = ["gate"]


def gate(
    results: list[Path] = typer.Argument(
        ...,
        help="A results.json written by h2h run, or its folder (predictions.npz beside it); or two: the "
        "baseline's run, then the candidate's, on the same data (accuracy only).",
    ),
    baseline: str = typer.Option(..., "--baseline", help="The reference model's name."),
    candidate: str = typer.Option(..., "--candidate", help="The model that must not be worse."),
    max_accuracy_drop: Optional[float] = typer.Option(
        None,
        "--max-accuracy-drop",
        parser=margin("accuracy", "--max-accuracy-drop"),
        metavar="MARGIN",
        help="Allowed accuracy drop: 0.5pp (percentage points) or 0.005.",
    ),
    max_slowdown: Optional[float] = typer.Option(
        None,
        "--max-slowdown",
        parser=margin("slowdown", "--max-slowdown"),
        metavar="MARGIN",
        help="Allowed slowdown: 5%, 0.05 or 1.05x.",
    ),
    max_capacity_drop: Optional[float] = typer.Option(
        None,
        "--max-capacity-drop",
        parser=margin("slowdown", "--max-capacity-drop"),
        metavar="MARGIN",
        help="Allowed capacity drop at the SLOs (scenario capacity or server): 5% or 0.05.",
    ),
    alpha: Optional[float] = typer.Option(
        None,
        "--alpha",
        parser=level(),
        metavar="ALPHA",
        help="Significance level, 0–0.5: two-sided intervals at 1 − alpha (default 0.05).",
    ),
    n_resamples: int = typer.Option(2000, "--n-resamples", help="Bootstrap resamples."),
    junit: Optional[Path] = typer.Option(None, "--junit", help="Also write the checks as JUnit XML here."),
    confidence: Optional[float] = typer.Option(None, "--confidence", hidden=True, help="Deprecated: 1 − --alpha."),
    metric: str = typer.Option(
        "accuracy", "--metric", help="The quality check's metric (mcc, roc_auc, f1_macro …); the drop is in its units."
    ),
) -> None:
    """Fail (exit 1) only if the candidate is worse than the baseline beyond a margin, with confidence.

    Exit 0 when it is not, 3 when the data cannot tell (too few examples or rounds).
    """
    from headtohead.cli.console import err_console
    from headtohead.cli.options import renamed
    from headtohead.errors import ConfigError
    from headtohead.pipeline.gate import gate as decide

    if len(results) > 2:
        raise ConfigError(
            f"h2h gate: {len(results)} results files given; give one run holding both models, or two: the "
            f"baseline's run, then the candidate's"
        )

    level = renamed(
        alpha, None if confidence is None else 1.0 - confidence, was="--confidence", now="--alpha (1 − confidence)"
    )
    outcome = decide(
        results[0],
        candidate_results=results[1] if len(results) == 2 else None,
        baseline=baseline,
        candidate=candidate,
        max_accuracy_drop=max_accuracy_drop,
        max_slowdown=max_slowdown,
        max_capacity_drop=max_capacity_drop,
        alpha=0.05 if level is None else level,
        n_resamples=n_resamples,
        junit=junit,
        metric=metric,
    )
    for warning in outcome.warnings:
        err_console.print(f"warning: {warning}", style="yellow", highlight=False, markup=False, soft_wrap=True)
    typer.echo(outcome.paragraph)
    raise typer.Exit(outcome.exit_code)
