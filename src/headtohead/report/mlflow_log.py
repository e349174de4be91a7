"""Optional MLflow logging (extra ``mlflow``): each run's settings, metrics and the report files.

One MLflow run per headtohead run. Parameters: the data set, the models, the seed and the
machine. Metrics: every number of the summary table as ``<model>/<metric>`` (with
``_ci_low`` / ``_ci_high`` where there is an interval). Artifacts: the report files given
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
from headtohead.report.merge import MergedRuns, RunEntry
from headtohead.report.rows.summary import summary_rows

__all__ = ["log_to_mlflow", "resolve_tracking_uri", "DEFAULT_EXPERIMENT", "metric_key"]

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


def _metrics(run: RunEntry) -> dict[str, float]:
    metrics: dict[str, float] = {}
    for model, cells in summary_rows(run.result).items():
        for key, cell in cells.items():
            if cell.value is None:
                continue
            metrics[metric_key(model, key)] = float(cell.value)
            if cell.low is not None and cell.high is not None:
                metrics[metric_key(model, f"{key}_ci_low")] = float(cell.low)
                metrics[metric_key(model, f"{key}_ci_high")] = float(cell.high)
    if run.result.stats is not None:
        for c in run.result.stats.comparisons:
            pair = f"{c.model_a}_vs_{c.model_b}"
            metrics[metric_key(pair, "accuracy_difference")] = c.effect
            metrics[metric_key(pair, "mcnemar_p")] = c.p_value
            metrics[metric_key(pair, "holm_p")] = c.p_adjusted
    return metrics


def _log_run(client: Any, experiment_id: str, run: RunEntry, artifacts: Sequence[Path]) -> str:
    from mlflow.entities import Metric, Param, RunTag

    tags = {"headtohead.run": run.result.name, "headtohead.label": run.label, "mlflow.runName": run.label[:250]}
    created = client.create_run(experiment_id, tags=tags)
    run_id = created.info.run_id
    params = [Param(k, v) for k, v in _params(run).items()]
    metrics = [Metric(k, v, 0, 0) for k, v in _metrics(run).items()]
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
    merged: MergedRuns, *, tracking_uri: str, artifacts: Sequence[str | Path] = (), experiment: str = DEFAULT_EXPERIMENT
) -> list[str]:
    """Log every run of ``merged`` to MLflow.

    Parameters
    ----------
    merged : MergedRuns
        The runs of the report.
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
    >>> merged = merge_runs(load_runs(["runs/a/results.json"]))                        # doctest: +SKIP
    >>> log_to_mlflow(merged, tracking_uri="sqlite:///mlflow.db", artifacts=["runs/a/report.html"])  # doctest: +SKIP
    ['3f2a…']
    """
    uri = resolve_tracking_uri(tracking_uri)
    client = _client(uri)
    from mlflow.exceptions import MlflowException

    try:
        experiment_id = _experiment_id(client, experiment, uri)
        return [_log_run(client, experiment_id, run, [Path(a) for a in artifacts]) for run in merged.runs]
    except MlflowException as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ResultsError(f"MLflow at {uri} refused the logging ({message}); check the --mlflow URI") from exc
