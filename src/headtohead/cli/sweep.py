"""``h2h sweep``: optimisation variants × batch sizes, each checked against its parent.

Registered in :mod:`headtohead.cli.main` with ``app.command("sweep")(sweep)``. The options
replace the matching keys of the experiment's ``sweep:`` section (or make one)::

    h2h sweep experiment.yaml --batch-size 1,8,32,128 --precision fp32,bf16,int8 --backend pytorch,onnxruntime

This module parses and prints; :func:`headtohead.sweep` does the work.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from headtohead.cli import options as shared
from headtohead.errors import ConfigError

__all__ = ["sweep", "parse_list"]

_PARSERS = {"int": int, "float": float, "str": str}
_BOOLS = {"true": True, "yes": True, "1": True, "on": True, "false": False, "no": False, "0": False, "off": False}


def parse_list(text: str, kind: str, *, option: str) -> list[Any]:
    """Split ``"1,8,32"`` into typed values (``int``, ``float``, ``str`` or ``bool``).

    Raises
    ------
    ConfigError
        A value is not of the kind (one line naming the option and the value).

    Examples
    --------
    >>> parse_list("1, 8,32", "int", option="--batch-size")
    [1, 8, 32]
    >>> parse_list("false,true", "bool", option="--compile")
    [False, True]
    """
    values = [part.strip() for part in text.split(",") if part.strip()]
    if not values:
        raise ConfigError(f"{option} is empty; give comma-separated values, e.g. {option} 1,8,32")
    out = []
    for value in values:
        if kind == "bool":
            if value.lower() not in _BOOLS:
                raise ConfigError(f"{option} '{value}' is not true or false; e.g. {option} false,true")
            out.append(_BOOLS[value.lower()])
            continue
        try:
            out.append(_PARSERS[kind](value))
        except ValueError:
            example = {"int": "1,8,32", "float": "0.0,0.5"}.get(kind, "a,b")
            raise ConfigError(
                f"{option} '{value}' is not a valid {kind}; give comma-separated values, e.g. {option} {example}"
            ) from None
    return out


def sweep(
    experiment: Path = typer.Argument(..., help="The experiment YAML file."),
    batch_size: Optional[str] = typer.Option(None, "--batch-size", help="Batch sizes, e.g. 1,8,32,128."),
    precision: Optional[str] = typer.Option(None, "--precision", help="fp32,bf16,int8 (fp16 on CUDA)."),
    backend: Optional[str] = typer.Option(None, "--backend", help="pytorch,onnxruntime."),
    max_length: Optional[str] = typer.Option(None, "--max-length", help="Truncation lengths of text models."),
    compile_: Optional[str] = typer.Option(None, "--compile", help="false,true: torch.compile."),
    channels_last: Optional[str] = typer.Option(None, "--channels-last", help="false,true (image models)."),
    sparsity: Optional[str] = typer.Option(None, "--sparsity", help="Shares of weights pruned, e.g. 0.0,0.5."),
    only: Optional[list[str]] = typer.Option(
        None, "--only", help="Sweep only this model of the experiment (repeatable)."
    ),
    max_latency_ms: Optional[float] = typer.Option(None, "--max-latency-ms", help="Budget: per-batch p95 (ms)."),
    max_memory_mb: Optional[float] = typer.Option(None, "--max-memory-mb", help="Budget: memory (MiB)."),
    max_accuracy_drop: Optional[float] = typer.Option(
        None,
        "--max-accuracy-drop",
        parser=shared.margin("accuracy", "--max-accuracy-drop"),
        metavar="MARGIN",
        help="Non-inferiority margin of the recommendation: 1pp (percentage points) or 0.01.",
    ),
    out: Optional[Path] = shared.OutOption,
    set_: Optional[list[str]] = shared.SetOption,
    resume: Optional[bool] = shared.ResumeOption,
    overwrite: bool = shared.OverwriteOption,
    offline: bool = shared.OfflineOption,
    deterministic: bool = shared.DeterministicOption,
    model: Optional[list[str]] = typer.Option(None, "--model", "-m", hidden=True, help="Deprecated: --only."),
    min_accuracy_drop: Optional[float] = typer.Option(
        None,
        "--min-accuracy-drop",
        parser=shared.margin("accuracy", "--min-accuracy-drop"),
        hidden=True,
        help="Deprecated: --max-accuracy-drop.",
    ),
) -> None:
    """Sweep batch size, precision, backend … of each model; re-check quality against the parent every time."""
    from headtohead.cli.console import console, print_document, progress_bars
    from headtohead.cli.reliability import offline_scope, offline_wanted
    from headtohead.pipeline.outputs import default_out_dir
    from headtohead.pipeline.setup import resolve_experiment
    from headtohead.pipeline.sweep import run_sweep
    from headtohead.report.sections.sweep import sweep_terminal
    from headtohead.results.files import SWEEP_FILE

    lists = {
        "batch_size": (batch_size, "int"),
        "precision": (precision, "str"),
        "backend": (backend, "str"),
        "max_length": (max_length, "int"),
        "compile": (compile_, "bool"),
        "channels_last": (channels_last, "bool"),
        "sparsity": (sparsity, "float"),
    }
    options: dict[str, Any] = {
        key: parse_list(text, kind, option=f"--{key.replace('_', '-')}")
        for key, (text, kind) in lists.items()
        if text is not None
    }
    chosen = shared.renamed(only, model, was="--model (in h2h sweep)", now="--only")
    options.update(models=chosen or None, max_latency_ms=max_latency_ms, max_memory_mb=max_memory_mb)
    margin = shared.renamed(max_accuracy_drop, min_accuracy_drop, was="--min-accuracy-drop", now="--max-accuracy-drop")
    options.update(max_accuracy_drop=margin)
    offline = offline_wanted(offline)
    with offline_scope(offline), progress_bars() as progress:
        exp, base_dir = resolve_experiment(experiment, set_ or [])
        out_dir = out or default_out_dir(exp.name, "sweep")
        outcome = run_sweep(
            exp,
            sweep=options,
            base_dir=base_dir,
            out_dir=out_dir,
            progress=progress,
            resume=bool(resume),
            overwrite=overwrite,
            offline=offline,
            deterministic=deterministic,
        )
    print_document(sweep_terminal(outcome.result))
    console.print(
        f"Results: {out_dir / SWEEP_FILE} (report: {out_dir / 'sweep.md'}, curves: {out_dir / 'sweep.png'})",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
