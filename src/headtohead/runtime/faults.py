"""Faults a long run must survive: interrupts (SIGINT, SIGTERM, SIGHUP) and running out of memory.

See ``docs/architecture.md``, the section of this title.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

__all__ = [
    "Terminated",
    "RunInterrupted",
    "signals_as_exceptions",
    "interrupt_name",
    "interrupt_exit_code",
    "is_out_of_memory",
]


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived while :func:`signals_as_exceptions` was active.

    Parameters
    ----------
    signum : int
        The signal's number.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class RunInterrupted(Exception):
    """A run was stopped by a signal; the message says which results were kept.

    Attributes
    ----------
    exit_code : int
        ``128 + signal number``: 130 for SIGINT, 143 for SIGTERM.
    """

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def interrupt_name(exc: BaseException) -> str:
    """``"SIGINT"`` for a :class:`KeyboardInterrupt`, the signal's name for :class:`Terminated`."""
    if isinstance(exc, Terminated):
        return signal.Signals(exc.signum).name
    return "SIGINT"


def interrupt_exit_code(exc: BaseException) -> int:
    """``128 + signal number`` of the interrupt ``exc`` stands for.

    Examples
    --------
    >>> interrupt_exit_code(KeyboardInterrupt()), interrupt_exit_code(Terminated(signal.SIGTERM))
    (130, 143)
    """
    if isinstance(exc, Terminated):
        return 128 + int(exc.signum)
    return 128 + int(signal.SIGINT)


def _catchable_signals() -> list[signal.Signals]:
    wanted = ["SIGTERM", "SIGHUP"]  # SIGHUP does not exist on Windows
    return [getattr(signal, name) for name in wanted if hasattr(signal, name)]


@contextlib.contextmanager
def signals_as_exceptions() -> Iterator[None]:
    """Raise :class:`Terminated` in the main thread on SIGTERM/SIGHUP while the block runs.

    Signal handlers can only be installed from the main thread; elsewhere this does
    nothing. Signals set to be ignored (``nohup`` ignores SIGHUP) stay ignored. The previous
    handlers are restored on exit. SIGINT keeps Python's own handler, which raises
    :class:`KeyboardInterrupt`.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise Terminated(signum)

    previous: dict[signal.Signals, object] = {}
    for sig in _catchable_signals():
        current = signal.getsignal(sig)
        if current is signal.SIG_IGN:
            continue
        previous[sig] = current
        signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)  # type: ignore[arg-type]


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` means the host or an accelerator ran out of memory.

    Covers :class:`MemoryError`, ``torch.cuda.OutOfMemoryError`` (and the MPS/XPU
    equivalents, by name, so torch need not be imported) and the plain ``RuntimeError``
    older torch versions raise with "out of memory" in the message.

    Examples
    --------
    >>> is_out_of_memory(MemoryError()), is_out_of_memory(ValueError("x"))
    (True, False)
    """
    if isinstance(exc, MemoryError):
        return True
    if type(exc).__name__ == "OutOfMemoryError":
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()
