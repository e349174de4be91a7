"""``h2h gate``: a CI check that fails only when a candidate is worse than a baseline beyond a margin.

::

    h2h gate runs/x/results.json --baseline bert --candidate bert-int8 \\
        --max-accuracy-drop 0.5pp --max-slowdown 5% --junit gate.xml

Exit codes: 0 pass (non-inferior), 1 fail (worse beyond the margin, with confidence),
3 inconclusive (too little data to tell; the paragraph says how much more is needed),
2 bad input. :func:`headtohead.gate` decides; this module parses and prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

__all__ = ["gate"]


def gate(
    results: Path = typer.Argument(..., help="A results.json written by h2h run (predictions.npz beside it)."),
    baseline: str = typer.Option(..., "--baseline", help="The reference model's name."),
    candidate: str = typer.Option(..., "--candidate", help="The model that must not be worse."),
    max_accuracy_drop: Optional[str] = typer.Option(
        None, "--max-accuracy-drop", help="Allowed accuracy drop: 0.5pp (percentage points) or 0.005."
    ),
    max_slowdown: Optional[str] = typer.Option(None, "--max-slowdown", help="Allowed slowdown: 5%, 0.05 or 1.05x."),
    confidence: float = typer.Option(0.95, "--confidence", help="Level of the two-sided intervals."),
    n_resamples: int = typer.Option(2000, "--n-resamples", help="Bootstrap resamples."),
    junit: Optional[Path] = typer.Option(None, "--junit", help="Also write the checks as JUnit XML here."),
    metric: str = typer.Option(
        "accuracy", "--metric", help="The quality check's metric (mcc, roc_auc, f1_macro …); the drop is in its units."
    ),
) -> None:
    """Fail (exit 1) only if the candidate is worse than the baseline beyond a margin, with confidence.

    Exit 0 when it is not, 3 when the data cannot tell (too few examples or rounds).
    """
    from headtohead.pipeline.gate import gate as decide

    outcome = decide(
        results,
        baseline=baseline,
        candidate=candidate,
        max_accuracy_drop=max_accuracy_drop,
        max_slowdown=max_slowdown,
        confidence=confidence,
        n_resamples=n_resamples,
        junit=junit,
        metric=metric,
    )
    typer.echo(outcome.paragraph)
    raise typer.Exit(outcome.exit_code)
