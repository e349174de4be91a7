"""Running a suite's data sets: one ordinary run each, side by side if asked, skipped when finished (``--resume``).

See ``docs/statistics.md`` §13, "Running a suite".
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from headtohead.config.schema import Experiment
from headtohead.config.suite import SuiteConfig
from headtohead.errors import H2HError, ResultsError, listing
from headtohead.pipeline.run import Run, run
from headtohead.pipeline.setup import absolute_data_paths
from headtohead.pipeline.suite_inputs import DatasetScores, dataset_from_result
from headtohead.results import load_result
from headtohead.results.files import REPORT_FILE, RESULTS_FILE
from headtohead.results.suite import SuiteDataset
from headtohead.runtime.faults import RunInterrupted, Terminated, interrupt_exit_code, interrupt_name

__all__ = ["run_datasets", "Progress"]

log = logging.getLogger("headtohead")

#: ``progress(task, done, total)`` as :func:`headtohead.run` takes it; the task is prefixed with the data set.
Progress = Callable[[str, int, int], None]


def run_datasets(
    config: SuiteConfig,
    base: Path,
    out: Path | None,
    *,
    resume: bool,
    overwrite: bool,
    offline: bool,
    deterministic: bool,
    progress: Progress | None,
    say: Callable[[str], None],
) -> tuple[list[DatasetScores], dict[str, Run]]:
    """Every data set's run (or its finished one), in the suite's order; failures recorded, not raised.

    Returns
    -------
    (list of DatasetScores, dict of str to Run)
        One entry per data set (``status`` finished or failed), and the runs made now.

    Raises
    ------
    RunInterrupted
        SIGINT/SIGTERM arrived; the message names the finished data sets (kept on disk).
    """
    models = [m.name for m in config.models]
    done: dict[str, DatasetScores] = {}
    if resume and out is not None:
        for dataset in config.datasets:
            found = _finished(config, dataset.name, base, out, say)
            if found is not None:
                done[dataset.name] = found
                say(f"{dataset.name}: finished in an earlier run; skipped (--resume)")
    todo = [d.name for d in config.datasets if d.name not in done]
    runs: dict[str, Run] = {}
    total = len(config.datasets)

    def one(name: str) -> DatasetScores:
        index = [d.name for d in config.datasets].index(name) + 1
        say(f"{name}: running ({index} of {total})")
        began = time.perf_counter()
        folder = out / name if out is not None else None
        labelled = (lambda task, n, of: progress(f"{name}: {task}", n, of)) if progress is not None else None
        try:
            outcome = run(
                config.experiment_dict(name),
                base_dir=base,
                out_dir=folder,
                progress=labelled,
                resume="reuse" if resume else False,
                report=folder is not None,
                overwrite=overwrite,
                offline=offline,
                deterministic=deterministic,
            )
        except (KeyboardInterrupt, Terminated, RunInterrupted):
            raise
        except Exception as exc:  # one data set fails; the others go on
            message = str(exc) if isinstance(exc, H2HError) else f"internal error: {type(exc).__name__}: {exc}"
            if not isinstance(exc, H2HError):
                log.debug("data set %s failed", name, exc_info=True)
            say(f"{name}: failed — {message}")
            return DatasetScores(
                entry=SuiteDataset(
                    name=name, status="failed", error=message.splitlines()[0] if message else type(exc).__name__
                )
            )
        runs[name] = outcome
        results = (folder / RESULTS_FILE) if folder is not None else Path(name) / RESULTS_FILE
        scores = dataset_from_result(
            name, outcome.result, models=models, metric=config.across.metric, results_path=results, relative_to=out
        )
        if folder is None:
            scores.entry = scores.entry.model_copy(update={"results": None, "report": None})
        shown = ", ".join(f"{m} {v:.4g}" for m, v in scores.entry.scores.items())
        say(f"{name}: finished in {time.perf_counter() - began:.1f} s — {config.across.metric}: {shown}")
        return scores

    ray = _ray_connection(config) if config.datasets_at_once > 1 and todo else contextlib.nullcontext()
    try:
        with ray:
            for name, scores in _each(todo, config.datasets_at_once, one):
                done[name] = scores
    except (KeyboardInterrupt, Terminated, RunInterrupted) as exc:
        finished = [d.name for d in config.datasets if d.name in done and done[d.name].entry.status == "finished"]
        kept = f"finished data sets kept: {listing(finished)}" if finished else "no data set had finished"
        code = exc.exit_code if isinstance(exc, RunInterrupted) else interrupt_exit_code(exc)
        what = str(exc) if isinstance(exc, RunInterrupted) else interrupt_name(exc)
        raise RunInterrupted(f"{what}; {kept}; run the suite again with --resume to skip them", code) from None
    return [done[d.name] for d in config.datasets], runs


def _each(
    names: Sequence[str],
    at_once: int,
    one: Callable[[str], DatasetScores],
) -> Iterator[tuple[str, DatasetScores]]:
    """``(name, one(name))`` for every name, ``at_once`` at a time (daemon threads: an interrupt ends the wait)."""
    if at_once == 1 or len(names) <= 1:
        for name in names:
            yield name, one(name)
        return
    todo: queue.Queue[str] = queue.Queue()
    for name in names:
        todo.put(name)
    finished: queue.Queue[tuple[str, DatasetScores | BaseException]] = queue.Queue()
    stop = threading.Event()

    def work() -> None:
        while not stop.is_set():
            try:
                name = todo.get_nowait()
            except queue.Empty:
                return
            try:
                finished.put((name, one(name)))
            except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which raises it
                finished.put((name, exc))

    threads = [
        threading.Thread(target=work, name=f"h2h-suite-{i}", daemon=True) for i in range(min(at_once, len(names)))
    ]
    for thread in threads:
        thread.start()
    try:
        for _ in names:
            while True:
                try:
                    name, value = finished.get(timeout=0.2)  # a timeout, so signals reach this thread
                    break
                except queue.Empty:
                    continue
            if isinstance(value, BaseException):
                raise value
            yield name, value
    finally:
        stop.set()


@contextlib.contextmanager
def _ray_connection(config: SuiteConfig) -> Iterator[None]:
    """With Ray and data sets side by side: join (or start) Ray once, so every run shares it and none shuts it down."""
    if config.execution.mode != "ray":
        yield
        return
    from headtohead.pipeline.executors.ray_executor import RayExecutor

    executor = RayExecutor(config.execution, eval_device=config.eval.device)
    executor.connect()
    try:
        yield
    finally:
        executor.close()


def _finished(
    config: SuiteConfig,
    name: str,
    base: Path,
    out: Path,
    say: Callable[[str], None],
) -> DatasetScores | None:
    """The data set's run, when it finished with this experiment on this data; else ``None`` (it runs again)."""
    path = out / name / RESULTS_FILE
    if not path.is_file():
        return None
    try:
        result = load_result(path)
    except ResultsError:
        return None
    experiment = Experiment.model_validate(config.experiment_dict(name))
    models = [m.name for m in config.models]
    if (
        result.stats is None
        or [m.name for m in result.models] != models
        or result.experiment != experiment.model_dump(mode="json")
    ):
        return None
    from headtohead.pipeline.logged_data import run_splits

    try:
        fingerprint = run_splits(experiment, absolute_data_paths(experiment.data, base), base).eval.fingerprint()
    except H2HError:
        return None  # its data cannot be read now: run it, and let the run say why
    if fingerprint != result.dataset.fingerprint:
        say(
            f"{name}: its data changed since it finished (fingerprint {result.dataset.fingerprint[:12]} then, "
            f"{fingerprint[:12]} now); running it again"
        )
        return None
    if not (out / name / REPORT_FILE).is_file():  # killed between its results and its report
        from headtohead.report.write import write_reports

        write_reports(result, out / name)
    return dataset_from_result(
        name, result, models=models, metric=config.across.metric, results_path=path, relative_to=out, reused=True
    )
