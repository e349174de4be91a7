"""A run's output folder: checked before any work starts, written after every finished model.

:class:`RunState` holds the result so far (the records of the models that finished and
their predictions) and saves both atomically each time a model is added, so an error or an
interrupt never loses a finished model; :meth:`RunState.kept` says what was kept and how
to finish the rest. File names come from :mod:`headtohead.results.files`.
"""

from __future__ import annotations

import tempfile
from datetime import datetime, timezone
from pathlib import Path

from headtohead.engines.environment import capture_environment
from headtohead.errors import ResultsError
from headtohead.pipeline.model_pass import ModelOutcome
from headtohead.pipeline.setup import RunSetup, dataset_record
from headtohead.results import Predictions, RunResult, save_result
from headtohead.results.files import PREDICTIONS_FILE, RESULTS_FILE

__all__ = ["RunState", "check_writable", "default_out_dir"]


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
        raise ResultsError(f"--out {out}: cannot write results there ({reason}); choose another folder with "
                           f"--out, or fix its permissions") from exc


class RunState:
    """The run's result as models finish: records, predictions, what is saved; the messages about it."""

    def __init__(self, setup: RunSetup, out: Path | None) -> None:
        dataset, plan = setup.dataset, setup.plan
        self.setup, self.out = setup, out
        self.predictions = Predictions(order=plan.order, y_true=dataset.labels[plan.order],
                                       label_names=dataset.label_names)
        self.result = RunResult(
            headtohead_version=setup.version, name=setup.experiment.name,
            created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            experiment=setup.experiment.model_dump(mode="json"), environment=capture_environment(setup.base_dir),
            dataset=dataset_record(setup.splits, setup.fingerprint), models=[])
        self.saved: list[str] = []

    def add(self, outcome: ModelOutcome) -> None:
        """Add a finished model and save the results so far."""
        record = outcome.record
        if outcome.predictions is not None:
            self.predictions.add(record.name, outcome.predictions.pred, outcome.predictions.proba)
        self.result = self.result.model_copy(update={"models": [*self.result.models, record]})
        if self.out is not None:
            if self.setup.quality:
                self.predictions.save(self.out / PREDICTIONS_FILE)
            save_result(self.result, self.out / RESULTS_FILE)
            self.saved.append(record.name)

    def finish(self, result: RunResult) -> None:
        """The complete result (statistics and speed added): save it."""
        self.result = result
        if self.out is not None:
            save_result(result, self.out / RESULTS_FILE)

    def kept(self) -> str:
        """Where the finished models are, and how to finish the rest."""
        if self.out is None:
            return "nothing was saved (no output folder was given)"
        if not self.saved:
            return "no model had finished, so nothing was written"
        if not self.setup.quality:  # h2h bench: speed is measured on all models at once, nothing to resume
            return f"records of {', '.join(self.saved)} are in {self.out}; measuring speed needs every model, run again"
        todo = [m.name for m in self.setup.experiment.models if m.name not in self.saved]
        rest = f"; run again with --resume to evaluate {', '.join(todo)}" if todo else \
            "; run again with --resume to finish (finished models are not evaluated again)"
        return f"results of {', '.join(self.saved)} are kept in {self.out}{rest}"
