"""A run's output folder: claimed before any work starts, written after every finished model.

See ``docs/architecture.md``, the section of this title.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from headtohead.engines.environment import capture_environment
from headtohead.errors import ResultsError, listing
from headtohead.pipeline.answers import with_inputs, write_answers
from headtohead.pipeline.executors.jobs import run_units
from headtohead.pipeline.model_pass import ModelOutcome
from headtohead.pipeline.passes import pass_record, with_pass
from headtohead.pipeline.setup import RunSetup, dataset_record
from headtohead.results import Predictions, RunResult, save_result
from headtohead.results.files import LOCK_FILE, PREDICTIONS_FILE, REPORT_FILE, RESULTS_FILE, RESUME_DIR, SWEEP_FILE
from headtohead.results.passes import pass_label

try:  # POSIX; on Windows runs are not locked against each other
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["RunState", "OutputLock", "check_writable", "claim_output", "folder_owner", "default_out_dir"]


def default_out_dir(name: str, command: str | None = None) -> Path:
    """Where a command writes when no ``--out`` is given: ``runs/<name>`` (``runs/<name>-bench`` …)."""
    return Path("runs") / (f"{name}-{command}" if command else name)


def check_writable(out: Path) -> None:
    """Create ``out`` if needed and check a file can be written there, before any work starts.

    Raises
    ------
    ResultsError
        ``out`` is a file, or cannot be created or written (permissions, read-only disk).
    """
    if out.exists() and not out.is_dir():
        raise ResultsError(f"--out {out}: is a file, not a folder; choose a folder for the results")
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out, prefix=".h2h-write-check-"):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ResultsError(
            f"--out {out}: cannot write results there ({reason}); choose another folder with "
            f"--out, or fix its permissions"
        ) from exc


def folder_owner(out: Path) -> tuple[str, str] | None:
    """``(experiment name, command)`` of the results in ``out`` (``None``: no ``results.json`` nor ``sweep.json``).

    The command is ``h2h run`` when some model has quality numbers, else ``h2h bench``; a
    folder with only a ``sweep.json`` is ``h2h sweep``'s. A results file that cannot be read is
    owned by ``("?", "unreadable")``.
    """
    for name in (RESULTS_FILE, SWEEP_FILE):
        try:
            raw = json.loads((out / name).read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError, ValueError):
            return ("?", "unreadable")
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            return ("?", "unreadable")
        if name == SWEEP_FILE:
            return raw["name"], "h2h sweep"
        models: list[Any] = raw["models"] if isinstance(raw.get("models"), list) else []
        rated = raw.get("stats") is not None or any(isinstance(m, dict) and m.get("quality") for m in models)
        return raw["name"], "h2h run" if rated else "h2h bench"
    return None


def check_owner(out: Path, experiment: str, *, command: str, overwrite: bool) -> None:
    """Refuse to replace another experiment's (or command's) results in ``out`` unless ``overwrite``.

    With ``overwrite``, the other experiment's report and resume entries are removed at once
    (they would describe results that are being replaced); its ``results.json`` and
    ``predictions.npz`` stay until the new run's first model replaces them.

    Raises
    ------
    ResultsError
        ``out`` holds the results of another experiment or command (the message names it
        and the ways out).
    """
    owner = folder_owner(out)
    if owner is None or owner == (experiment, command):
        return
    if not overwrite:
        found = (
            "a results.json that cannot be read"
            if owner[1] == "unreadable"
            else f"the {owner[1]} results of experiment '{owner[0]}'"
        )
        raise ResultsError(
            f"--out {out}: holds {found}; refusing to replace them with {command} of experiment "
            f"'{experiment}'; pass --overwrite to replace them, or choose another --out"
        )
    with contextlib.suppress(FileNotFoundError):
        (out / REPORT_FILE).unlink()
    shutil.rmtree(out / RESUME_DIR, ignore_errors=True)


class OutputLock:
    """An exclusive lock on an output folder while a run writes into it (``<out>/.h2h-lock``, ``flock``).

    Parameters
    ----------
    out : Path
        The output folder (it must exist).
    what : str
        Who holds it, for the message another run shows (``h2h run of experiment 'x'``).
    """

    def __init__(self, out: Path, what: str) -> None:
        self.path, self.what = out / LOCK_FILE, what
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, or refuse at once.

        Raises
        ------
        ResultsError
            Another process holds it (the message names that run), or it cannot be taken.
        """
        if fcntl is None:  # pragma: no cover - Windows
            return
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                holder = _holder(fd)
                os.close(fd)
                if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise ResultsError(
                        f"--out {self.path.parent}: {holder} is writing there now; wait for it to "
                        f"finish, or choose another --out"
                    ) from None
                raise ResultsError(
                    f"--out {self.path.parent}: cannot lock the folder ({exc.strerror or exc}); choose another --out"
                ) from exc
            # The holder removes the file as it lets go: a lock on a removed file locks nothing.
            if _same_file(fd, self.path):
                break
            os.close(fd)
        started = datetime.now(timezone.utc).isoformat(timespec="seconds")
        os.ftruncate(fd, 0)
        os.write(
            fd,
            json.dumps(
                {"what": self.what, "pid": os.getpid(), "host": socket.gethostname(), "started": started}
            ).encode("utf-8"),
        )
        self._fd = fd

    def release(self) -> None:
        """Let go: remove the file while still holding it, then close (which drops the lock)."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> OutputLock:
        self.acquire()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def _same_file(fd: int, path: Path) -> bool:
    try:
        mine, now = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (mine.st_dev, mine.st_ino) == (now.st_dev, now.st_ino)


def _holder(fd: int) -> str:
    """Who holds the lock, from what it wrote into the file (``another run`` when it has not yet)."""
    try:
        info = json.loads(os.pread(fd, 4096, 0).decode("utf-8"))
        return f"another {info['what']} (pid {info['pid']} on {info['host']}, since {info['started']})"
    except (OSError, ValueError, KeyError, TypeError):
        return "another h2h run"


@contextlib.contextmanager
def claim_output(out: Path, experiment: str, *, command: str = "h2h run", overwrite: bool = False) -> Iterator[None]:
    """Check ``out`` can be written, lock it, and check whose results it holds; hold the lock while the block runs.

    Parameters
    ----------
    out : Path
    experiment : str
        The name of the experiment about to run.
    command : {"h2h run", "h2h bench", "h2h sweep"}
        What is about to write (quality, speed only, or a sweep).
    overwrite : bool
        Replace the results of another experiment or command (``--overwrite``).

    Raises
    ------
    ResultsError
        ``out`` cannot be written, another run is writing there, or it holds another
        experiment's results and ``overwrite`` is off (see the module docstring).
    """
    with _removed_if_left_empty(out):
        check_writable(out)
        with OutputLock(out, f"{command} of experiment '{experiment}'"):
            check_owner(out, experiment, command=command, overwrite=overwrite)
            _remove_stale_temporaries(out)
            yield


@contextlib.contextmanager
def _removed_if_left_empty(out: Path) -> Iterator[None]:
    """The folders the block creates for ``out`` are removed again if it fails before writing into them.

    A refused input (bad data, a model that will not load) leaves no empty ``--out`` behind;
    a folder that existed before, or holds anything, stays.
    """
    created = [folder for folder in (out, *out.parents) if not folder.exists()]  # innermost first
    try:
        yield
    except BaseException:
        for folder in created:
            try:
                folder.rmdir()  # only when empty
            except OSError:
                break
        raise


def _remove_stale_temporaries(out: Path) -> None:
    """Temporary files of a run's atomic writes cut short by a kill (``.<name>.<hex>.tmp``): with the lock held,
    nobody is writing them (files other commands write, such as ``training.json``, are left alone)."""
    patterns = [(out, f".{name}.*.tmp") for name in (RESULTS_FILE, PREDICTIONS_FILE, REPORT_FILE)]
    for folder, pattern in [*patterns, (out / RESUME_DIR, ".*.tmp")]:
        for stale in folder.glob(pattern) if folder.is_dir() else ():
            with contextlib.suppress(OSError):
                stale.unlink()


class RunState:
    """The run's result as models finish: records, predictions, what is saved; the messages about it."""

    def __init__(self, setup: RunSetup, out: Path | None) -> None:
        dataset, plan = setup.dataset, setup.plan
        self.setup, self.out = setup, out
        self.predictions = Predictions(
            order=plan.order,
            y_true=dataset.labels[plan.order],
            label_names=dataset.label_names,
            group_column=dataset.group_column,
            groups=plan.in_order(dataset.groups),
        )
        self.result = RunResult(
            headtohead_version=setup.version,
            name=setup.experiment.name,
            created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            experiment=setup.experiment.model_dump(mode="json"),
            environment=capture_environment(setup.base_dir),
            dataset=dataset_record(setup.splits, setup.fingerprint),
            models=[],
            incomplete="unfinished",  # what the file says if the run never reaches finish(): killed, interrupted
        )
        self.saved: list[str] = []  # in results.json
        self.stored: list[str] = []  # in the resume store (.h2h-resume/): re-used by --resume

    def add(self, outcome: ModelOutcome) -> None:
        """Add a finished model (or one pass of a model measured several ways) and save the results so far."""
        record = with_inputs(outcome.record, self.setup.dataset)
        if outcome.pass_index is None:
            if outcome.predictions is not None:
                self.predictions.add(
                    record.name, outcome.predictions.pred, outcome.predictions.proba, record.labels_outside_data
                )
            models, label = [*self.result.models, record], record.name
        else:  # one pass: into its model's record and along its model's passes axis
            model_cfg = self.setup.experiment.model(record.name)
            one = pass_record(
                model_cfg, outcome.pass_index, record, self.setup.dataset.label_names, self.setup.experiment.seed
            )
            if outcome.predictions is not None:
                self.predictions.add_pass(
                    record.name,
                    one.key,
                    one.factor,
                    outcome.predictions.pred,
                    outcome.predictions.proba,
                    record.labels_outside_data,
                )
            models, label = with_pass(self.result.models, record, one), pass_label(record.name, one.key)
        self.result = self.result.model_copy(update={"models": models})
        if self.out is not None:
            if self.setup.quality:
                self.predictions.save(self.out / PREDICTIONS_FILE)
            save_result(self.result, self.out / RESULTS_FILE)
            write_answers(self.out, record.model_copy(update={"name": label}), self.setup.dataset)
            self.saved.append(label)

    def finish(self, result: RunResult) -> RunResult:
        """The finished result (statistics and speed added), saved: no longer unfinished, unless answers are missing."""
        result = result.model_copy(update={"incomplete": "answers missing" if result.missing is not None else None})
        self.result = result
        if self.out is not None:
            save_result(result, self.out / RESULTS_FILE)
        return result

    def kept(self) -> str:
        """Where the finished models are, and how to finish the rest: --resume evaluates only what was not kept.

        A model is kept once it is in ``results.json`` or in the resume store (:attr:`stored`, written just
        before ``results.json``): a write that fails between the two (a full disk) leaves it to be re-used.
        """
        if self.out is None:
            return "nothing was saved (no output folder was given)"
        units = [u.label for u in run_units(self.setup.experiment)]
        finished = [label for label in units if label in {*self.saved, *self.stored}]
        if not finished:
            return "no model had finished, so nothing was written"
        if not self.setup.quality:  # h2h bench: speed is measured on all models at once, nothing to resume
            return f"records of {listing(self.saved)} are in {self.out}; measuring speed needs every model, run again"
        todo = [label for label in units if label not in finished]
        rest = (
            f"; run again with --resume to evaluate {listing(todo)}"
            if todo
            else "; run again with --resume to finish (finished models are not evaluated again)"
        )
        return f"results of {listing(finished)} are kept in {self.out}{rest}"
