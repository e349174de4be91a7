"""Run a function in a fresh process that has imported what this one imported, and nothing else.

See ``docs/speed.md``, the section of this title.
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing
import os
import signal
import sys
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, cast

__all__ = ["FreshProcessError", "run_in_fresh_process", "imported_modules", "can_fork", "import_ahead", "await_imports"]

#: Top-level packages of test and cluster tools: a run's model never needs them.
_NOT_IMPORTED = frozenset(
    {
        "__main__",
        "__mp_main__",
        "_pytest",
        "pytest",
        "pluggy",
        "py",
        "_hypothesis_pytestplugin",
        "hypothesis",
        "xdist",
        "execnet",
        "coverage",
        "IPython",
        "ray",
    }
)

#: The child never reaches for the network (the parent loaded the model, its files are local) nor talks.
_CHILD_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "TOKENIZERS_PARALLELISM": "false",
}


class FreshProcessError(RuntimeError):
    """The fresh process failed, died or ran past its time; the message says which."""


def imported_modules() -> list[str]:
    """The modules this process imported, in import order, less test and cluster tools."""
    return [
        name
        for name, module in list(sys.modules.items())
        if module is not None
        and getattr(module, "__spec__", None) is not None
        and name.split(".")[0] not in _NOT_IMPORTED
    ]


def can_fork(device: str) -> bool:
    """Whether a child forked from the template can measure a model on ``device`` (Linux, CPU only)."""
    return sys.platform.startswith("linux") and device == "cpu"


def _import_quietly(names: Sequence[str]) -> bool:
    """Import what is not imported yet of ``names``; whether anything was."""
    import importlib

    imported = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in names:
            if name in sys.modules:
                continue
            imported = True
            try:
                importlib.import_module(name)
            except (Exception, SystemExit):  # noqa: S112 - importable only where it was (a test file, a script)
                continue
    return imported


def _freeze_heap() -> None:
    """Move the template's objects out of the garbage collector's reach, once they are all imported.

    A child's measurement starts with ``gc.collect()`` (its baseline holds no garbage); without this
    the collection walks every object the imports made (0.3 s after scikit-learn and statsmodels)
    and writes to their pages, which copy-on-write then copies into the child.
    """
    import gc

    gc.collect()
    gc.freeze()


def _quiet_process() -> None:
    os.environ.update(_CHILD_ENV)
    devnull = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):
        os.dup2(devnull, fd)


def _outcome(body: Callable[..., Any], args: tuple[Any, ...]) -> tuple[str, Any]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", body(*args)
    except BaseException as exc:  # everything goes back to the parent, which decides
        lines = traceback.format_exception_only(type(exc), exc)
        return "error", (lines[-1].strip() if lines else type(exc).__name__)


def _spawned_main(conn: Any, body: Callable[..., Any], args: tuple[Any, ...], modules: list[str]) -> None:
    """A spawned child: import, run, send the outcome."""
    _quiet_process()
    _import_quietly(modules)
    try:
        conn.send(_outcome(body, args))
    finally:
        conn.close()


def _die_with_parent() -> None:
    with contextlib.suppress(Exception):  # Linux: a forked child does not outlive its template
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _fork_and_wait(body: Callable[..., Any], args: tuple[Any, ...], timeout_s: float) -> tuple[str, Any]:
    """In the template: fork a child that runs ``body``; wait for its outcome (or its death, or the timeout)."""
    receiver, sender = multiprocessing.Pipe(duplex=False)
    pid = os.fork()
    if pid == 0:  # the child
        receiver.close()
        _die_with_parent()
        try:
            sender.send(_outcome(body, args))
        finally:
            os._exit(0)
    sender.close()
    outcome: tuple[str, Any] | None = None
    try:
        if receiver.poll(timeout_s):
            outcome = receiver.recv()
        else:
            os.kill(pid, signal.SIGKILL)
            outcome = ("error", f"the fresh process ran past {timeout_s:.0f} s")
    except EOFError:
        pass
    finally:
        receiver.close()
    _, status = os.waitpid(pid, 0)
    if outcome is None:
        code = os.waitstatus_to_exitcode(status)
        outcome = ("error", f"the fresh process died (exit code {code}; killed for memory?)")
    return outcome


def _template_main(conn: Any) -> None:
    """The template: import what the parent sends, fork a child per request, send back its outcome."""
    _quiet_process()
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        if request is None:
            return
        body, args, modules, timeout_s = request
        if _import_quietly(modules):
            _freeze_heap()
        conn.send(_fork_and_wait(body, args, timeout_s) if body is not None else ("imported", None))


@contextlib.contextmanager
def _main_script_hidden() -> Iterator[None]:
    """Start processes without multiprocessing re-running the caller's ``__main__`` in them.

    *spawn* runs the parent's main script again in the child (as ``__mp_main__``): a script
    calling ``headtohead.run`` without an ``if __name__ == "__main__":`` guard would run the
    whole comparison again there. Our children need nothing from it (their functions live in
    headtohead), so the main module's file and spec are hidden while a process starts.
    """
    main = sys.modules.get("__main__")
    saved = {key: main.__dict__[key] for key in ("__file__", "__spec__") if main is not None and key in main.__dict__}
    for key in saved:
        setattr(main, key, None) if key == "__spec__" else delattr(main, key)
    try:
        yield
    finally:
        for key, value in saved.items():
            setattr(main, key, value)


def _start(process: Any) -> None:
    with _main_script_hidden():
        process.start()


class _Template:
    """The parent's handle on the template process (started on first use, stopped at exit)."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("spawn")
        self.conn, theirs = context.Pipe()
        self.process = context.Process(target=_template_main, args=(theirs,), name="h2h-fresh-template", daemon=True)
        _start(self.process)
        theirs.close()
        self.importing = 0  # import requests sent whose acknowledgement is not read yet

    def import_ahead(self, modules: list[str]) -> None:
        """Have the template import ``modules`` now, while this process does something else."""
        self.conn.send((None, (), modules, 0.0))
        self.importing += 1

    def await_imports(self, timeout_s: float) -> bool:
        """Wait until the template has imported everything asked so far; ``False`` after ``timeout_s``."""
        while self.importing:
            if not self.conn.poll(timeout_s):
                return False
            self.conn.recv()
            self.importing -= 1
        return True

    def run(
        self, body: Callable[..., Any], args: tuple[Any, ...], modules: list[str], timeout_s: float
    ) -> tuple[str, Any]:
        # The template's imports come first; its own timeout covers the child.
        if not self.await_imports(600):
            self.stop()
            raise FreshProcessError("the template process for fresh processes hung importing the run's modules")
        self.conn.send((body, args, modules, timeout_s))
        if not self.conn.poll(timeout_s + 600):
            self.stop()
            raise FreshProcessError(f"the fresh process ran past {timeout_s:.0f} s")
        return cast("tuple[str, Any]", self.conn.recv())

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.send(None)
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)
        self.conn.close()


_template: _Template | None = None


def _stop_template() -> None:
    global _template
    if _template is not None:
        _template.stop()
        _template = None


atexit.register(_stop_template)


def _live_template() -> _Template:
    global _template
    if _template is None or not _template.process.is_alive():
        _stop_template()
        _template = _Template()
    return _template


def import_ahead(modules: Sequence[str]) -> None:
    """Start the template process now and have it import ``modules`` while this process works on.

    A fork from the template (:func:`can_fork`) is milliseconds, but the template's own imports
    (torch, a model library: seconds) come first. A run that will measure models in fresh
    processes calls this before it loads them, so those imports overlap its own setup and
    loading, which keep one core busy at most; :func:`await_imports` waits for them before
    anything is timed. Calls add up; a template that dies is started again on the next use.

    Parameters
    ----------
    modules : sequence of str
        Module names to import there (:func:`imported_modules` later adds what this process
        imported since).
    """
    try:
        _live_template().import_ahead(list(modules))
    except (AssertionError, OSError):  # a daemonic worker may not start children: the first use says so
        _stop_template()


def await_imports(timeout_s: float = 600.0) -> None:
    """Wait until the template has imported what :func:`import_ahead` asked (nothing to wait for: return).

    The speed engine calls this before its timed rounds: the imports use a core, and no timed
    call may share the machine with them.
    """
    try:
        if _template is None or _template.await_imports(timeout_s):
            return
    except (EOFError, OSError):  # it died: the next use starts another (and says so if that fails)
        pass
    _stop_template()


def _forked(body: Callable[..., Any], args: tuple[Any, ...], modules: list[str], timeout_s: float) -> tuple[str, Any]:
    template = _live_template()
    try:
        return template.run(body, args, modules, timeout_s)
    except (EOFError, BrokenPipeError, ConnectionResetError, OSError) as exc:
        _stop_template()
        raise FreshProcessError(f"the template process for fresh processes died ({exc})") from None


def _spawned(body: Callable[..., Any], args: tuple[Any, ...], modules: list[str], timeout_s: float) -> tuple[str, Any]:
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_spawned_main, args=(sender, body, args, modules), name="h2h-fresh")
    _start(process)
    sender.close()
    try:
        if not receiver.poll(timeout_s):
            raise FreshProcessError(f"the fresh process ran past {timeout_s:.0f} s")
        return cast("tuple[str, Any]", receiver.recv())
    except EOFError:
        process.join(10)
        raise FreshProcessError(f"the fresh process died (exit code {process.exitcode}; killed for memory?)") from None
    finally:
        receiver.close()
        process.join(10)
        if process.is_alive():
            process.kill()
            process.join(5)


def run_in_fresh_process(
    body: Callable[..., Any], args: tuple[Any, ...], *, fork: bool, timeout_s: float = 900.0
) -> Any:
    """``body(*args)`` in a fresh process (see the module docstring); its return value.

    Parameters
    ----------
    body : callable
        A module-level function (it is pickled by name); its result must pickle.
    args : tuple
        Its arguments (pickled).
    fork : bool
        Fork the child from the template process (:func:`can_fork`) instead of spawning it.
    timeout_s : float
        The child is killed after this long.

    Raises
    ------
    FreshProcessError
        ``body`` raised (the message is its error's last line), the child died or ran past
        ``timeout_s``, or no process could be started (e.g. from a daemonic worker).
    """
    modules = imported_modules()
    try:
        status, payload = (_forked if fork else _spawned)(body, args, modules, timeout_s)
    except (AssertionError, OSError) as exc:  # AssertionError: a daemonic process may not start children
        raise FreshProcessError(f"could not start a fresh process ({exc})") from exc
    if status != "ok":
        raise FreshProcessError(str(payload))
    return payload
