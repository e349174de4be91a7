"""The reliability options shared by ``h2h run`` and ``h2h bench``: ``--resume``, ``--offline``,
``--deterministic``, and the context a run executes in (signals turned into exceptions,
progress bars). Kept here so that :mod:`headtohead.cli.main` stays a list of commands."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import typer

from headtohead.cli.console import progress_bars

__all__ = [
    "ResumeOption",
    "OfflineOption",
    "DeterministicOption",
    "OverwriteOption",
    "run_context",
    "offline_wanted",
    "offline_scope",
    "determinism_line",
]

ResumeOption = typer.Option(
    False,
    "--resume",
    help="Re-use the models that finished in an earlier, interrupted "
    "run into the same --out folder; evaluate only the rest.",
)
OfflineOption = typer.Option(
    False,
    "--offline",
    help="No network at all (also on with HF_HUB_OFFLINE=1): models and data must be local or cached.",
)
OverwriteOption = typer.Option(
    False,
    "--overwrite",
    help="Replace the results of another experiment found in the --out folder (without it they are refused).",
)
DeterministicOption = typer.Option(
    False, "--deterministic", help="Use torch's deterministic algorithms; ops without one are reported."
)


@contextlib.contextmanager
def run_context() -> Iterator[Any]:
    """SIGTERM/SIGHUP raised as exceptions (so finished models are kept and named), and progress bars.

    Yields the ``progress(task, done, total)`` callback of
    :func:`headtohead.cli.console.progress_bars`.
    """
    from headtohead.runtime.faults import signals_as_exceptions

    with signals_as_exceptions(), progress_bars() as update:
        yield update


def offline_wanted(flag: bool) -> bool:
    """``--offline`` given, or ``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE`` set in the environment."""
    from headtohead.runtime.offline import offline_requested

    return flag or offline_requested()


def offline_scope(offline: bool) -> contextlib.AbstractContextManager[Any]:
    """:func:`headtohead.runtime.offline.offline_mode` when ``offline``, else a context that does nothing."""
    if not offline:
        return contextlib.nullcontext()
    from headtohead.runtime.offline import offline_mode

    return offline_mode()


def determinism_line(result: Any) -> str:
    """One line for ``--deterministic``: on, and which ops (of which models) refused.

    Examples
    --------
    ``Deterministic algorithms: on; no op refused.``
    """
    from headtohead.runtime.determinism import REFUSAL_PREFIX

    refused = [
        w.removeprefix(REFUSAL_PREFIX).strip()
        for m in result.models
        for w in m.warnings
        if w.startswith(REFUSAL_PREFIX)
    ]
    if not refused:
        return "Deterministic algorithms: on; no op refused."
    return f"Deterministic algorithms: on; {len(refused)} refusal(s): " + " | ".join(refused)
