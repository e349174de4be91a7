"""What the commands that run models share besides their options (:mod:`headtohead.cli.options`): the
context a run executes in (signals turned into exceptions, progress bars), ``--offline`` read
with the environment, and the line ``--deterministic`` prints. Kept here so that
:mod:`headtohead.cli.main` stays a list of commands."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from headtohead.cli.console import progress_bars

__all__ = [
    "run_context",
    "offline_wanted",
    "offline_scope",
    "determinism_line",
]


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
