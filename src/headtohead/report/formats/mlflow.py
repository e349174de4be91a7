"""A report document in MLflow (extra ``mlflow``): each run's settings, every number of its tables, the report files.

One MLflow run per headtohead run. Parameters: the data set, the models, the seed and the
machine (from the run's records). Metrics: every number of the document's tables named in
``tables`` (the summary: ``<model>/<metric>``; the pairs: ``<a>_vs_<b>/<column>``), unrounded,
with ``_ci_low`` / ``_ci_high`` where there is an interval. Artifacts: the report files given
(HTML, Markdown and its images, CSV) and the ``results.json`` the run was read from.

The client is used directly (``MlflowClient(tracking_uri)``), so nothing global in the
caller's MLflow set-up changes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from headtohead.errors import ConfigError, ResultsError
from headtohead.report.document import Document
from headtohead.report.merge import RunEntry

__all__ = ["log_to_mlflow", "resolve_tracking_uri", "DEFAULT_EXPERIMENT", "metric_key", "document_metrics"]

DEFAULT_EXPERIMENT = "headtohead"
_KEY_CHARS = re.compile(r"[^A-Za-z0-9_\-. /:]")
_PARAM_LIMIT = 6000  # MLflow's maximum parameter value length
_BATCH = 100  # MLflow accepts at most 100 params (1,000 metrics) per log_batch call


def resolve_tracking_uri(uri: str) -> str:
    """``default`` → ``$MLFLOW_TRACKING_URI`` or ``sqlite:///<cwd>/mlflow.db``; anything else unchanged.

    Examples
    --------
    >>> resolve_tracking_uri("http://mlflow.example:5000")
    'http://mlflow.example:5000'
    """
    if uri != "default":
        return uri
    return os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{Path.cwd() / 'mlflow.db'}"


def metric_key(model: str, metric: str) -> str:
    """An MLflow-safe metric name: ``<model>/<metric>``, other characters replaced by ``_``.

    Examples
    --------
    >>> metric_key("bert<base>", "accuracy")
    'bert_base_/accuracy'
    """
    return _KEY_CHARS.sub("_", f"{model}/{metric}")


def _client(uri: str) -> Any:  # mlflow.tracking.MlflowClient
    try:
        from mlflow.tracking import MlflowClient
    except ImportError:
        raise ConfigError("--mlflow needs MLflow, which is not installed: pip install 'headtohead[mlflow]'") from None
    return MlflowClient(tracking_uri=uri)


def _experiment_id(client: Any, name: str, uri: str) -> str:
    experiment = client.get_experiment_by_name(name)
    if experiment is not None:
        return cast(str, experiment.experiment_id)
    location = None
    if uri.startswith("sqlite:///"):
        # MLflow would put artifacts in ./mlruns of whatever folder this runs from; keep them beside the database.
        location = (Path(uri[len("sqlite:///") :]).resolve().parent / "mlartifacts").as_uri()
    return cast(str, client.create_experiment(name, artifact_location=location))


def _params(run: RunEntry) -> dict[str, str]:
    result = run.result
    params = {
        "run_name": result.name,
        "dataset": result.dataset.source,
        "n_examples": str(result.dataset.n_examples),
        "n_classes": str(len(result.dataset.label_names)),
        "dataset_fingerprint": result.dataset.fingerprint,
        "seed": str(result.experiment.get("seed", "")),
        "host": result.environment.hostname,
        "cpu": result.environment.cpu_model,
        "gpus": ", ".join(g.name for g in result.environment.gpus) or "none",
        "torch": str(result.environment.torch),
        "headtohead": result.headtohead_version,
    }
    for model in result.models:
        params[metric_key(model.name, "kind")] = model.kind
        params[metric_key(model.name, "source")] = model.source
        params[metric_key(model.name, "batch_size")] = str(model.batch_size)
        params[metric_key(model.name, "device")] = model.device
    return {k: v[:_PARAM_LIMIT] for k, v in params.items()}


def document_metrics(document: Document, tables: Sequence[str] = ("summary", "pairs")) -> dict[str, float]:
    """Every number of the document's tables whose key ends with one of ``tables``: ``<row>/<column>`` (and its
    interval's ends), unrounded.

    A row is named by :attr:`~headtohead.report.document.Row.name`, else its subject (a model).
    """
    metrics: dict[str, float] = {}
    for table in document.tables():
        if not table.key.endswith(tuple(tables)):
            continue
        for row in table.rows:
            name = row.name or row.subject
            if name is None:
                continue
            for column in table.columns:
                cell = row.get(column.key)
                number = (
                    cell.number
                    if cell.raw is None
                    else (float(cell.raw) if isinstance(cell.raw, int | float) else None)
                )
                if column.kind == "text" and cell.raw is None:
                    continue
                if number is not None:
                    metrics[metric_key(name, column.key)] = number
                if cell.low is not None and cell.high is not None and (number is not None or cell.upper_only):
                    metrics[metric_key(name, f"{column.key}_ci_low")] = float(cell.low)
                    metrics[metric_key(name, f"{column.key}_ci_high")] = float(cell.high)
    return metrics


def _log_run(client: Any, experiment_id: str, run: RunEntry, document: Document, artifacts: Sequence[Path]) -> str:
    from mlflow.entities import Metric, Param, RunTag

    tags = {"headtohead.run": run.result.name, "headtohead.label": run.label, "mlflow.runName": run.label[:250]}
    created = client.create_run(experiment_id, tags=tags)
    run_id = created.info.run_id
    params = [Param(k, v) for k, v in _params(run).items()]
    metrics = [Metric(k, v, 0, 0) for k, v in document_metrics(document).items()]
    for start in range(0, max(len(params), len(metrics), 1), _BATCH):
        client.log_batch(
            run_id,
            metrics=metrics[start : start + _BATCH],
            params=params[start : start + _BATCH],
            tags=[RunTag("headtohead.version", run.result.headtohead_version)] if start == 0 else [],
        )
    files = list(artifacts) + ([run.source] if run.source is not None else [])
    for path in files:
        if path.is_dir():
            client.log_artifacts(run_id, str(path), artifact_path=f"report/{path.name}")
        elif path.is_file():
            client.log_artifact(run_id, str(path), artifact_path="report")
    client.set_terminated(run_id)
    return cast(str, run_id)


def log_to_mlflow(
    runs: Sequence[tuple[RunEntry, Document]],
    *,
    tracking_uri: str,
    artifacts: Sequence[str | Path] = (),
    experiment: str = DEFAULT_EXPERIMENT,
) -> list[str]:
    """Log every run to MLflow: its records' settings and its document's numbers.

    Parameters
    ----------
    runs : sequence of (RunEntry, Document)
        Each run of the report and its own document (:func:`headtohead.report.sections.run.run_document`).
    tracking_uri : str
        A server (``http://host:5000``), a local store (``sqlite:///mlflow.db``), or ``default``
        (see :func:`resolve_tracking_uri`).
    artifacts : sequence of path
        Report files (and folders, e.g. the Markdown images) attached to every run.
    experiment : str
        MLflow experiment name (created when missing).

    Returns
    -------
    list of str
        The MLflow run ids, one per headtohead run.

    Raises
    ------
    ConfigError
        MLflow is not installed.
    ResultsError
        The tracking server or store refused the request.

    Examples
    --------
    >>> run = load_runs(["runs/a/results.json"])[0]                                   # doctest: +SKIP
    >>> log_to_mlflow([(run, run_document(run.result))], tracking_uri="sqlite:///mlflow.db")  # doctest: +SKIP
    ['3f2a…']
    """
    uri = resolve_tracking_uri(tracking_uri)
    client = _client(uri)
    from mlflow.exceptions import MlflowException

    try:
        experiment_id = _experiment_id(client, experiment, uri)
        return [_log_run(client, experiment_id, run, document, [Path(a) for a in artifacts]) for run, document in runs]
    except MlflowException as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ResultsError(f"MLflow at {uri} refused the logging ({message}); check the --mlflow URI") from exc
