"""The typed, versioned records a run produces (``results.json``).

Engines create these; statistics and reports only read them. Every record is frozen and
refuses unknown keys. Numbers are stored unrounded: rounding is a display concern.

Changelog of :data:`SCHEMA_VERSION`:

* 1 — first version: environment, dataset, per-model quality, index-order hash, paired
  statistics (``stats``), speed and memory (``speed``).
* 2 — ``timings``: where a run's wall time went (load, evaluate, speed, statistics, report;
  ``None`` in version-1 files). Speed: memory per model measured in a fresh process (``memory.weights_mb``,
  ``model_peak_mb``, ``cuda_model_peak_mb``, per ``scenarios``); the process figures renamed
  ``process_rss_*`` / ``process_cuda_*`` (version-1 names are read into them, and
  ``inference_rss_mb`` derived); ``cold_start`` per model; ``timed_indices``/``timed_sizes``;
  ``device_warmup_s``; telemetry per scenario (``ScenarioTiming.telemetry``; version 1's
  model-level average is dropped on read); ``ScenarioTiming.inputs`` and ``repeat_noise``.
* 3 — test sets holding some of a model's classes, NaN outputs, out-of-memory back-off:
  ``ModelRecord.labels_outside_data`` (the model's classes the data does not hold; alignment
  ``subset``), ``QualityMetrics.confusion_labels`` / ``predicted_outside`` (the confusion matrix
  over the dataset's classes and the outside classes predicted), ``QualityMetrics.n_nonfinite`` /
  ``nonfinite_examples`` (examples with NaN or infinite scores, left out of the metrics),
  ``ModelRecord.batch_backoff`` (:class:`BatchBackoff`); ``ModelStats.n_excluded`` and
  ``Comparison.n_excluded`` in the statistics. Version-2 files read unchanged (every new field
  has the value a version-2 run had: empty, zero or ``None``).
  Also where models differ: ``stats.slices`` (quality per class, input-size bin and extra
  column, paired tests with Holm over slices) and ``stats.disagreements`` (per pair, the first
  examples exactly one model got right, with their inputs); models of ``kind: predictions``
  (``ModelRecord.outputs = "stored"``) without probabilities: ``quality.confidence_mean``/``confidence_std``
  may be ``None``.
  Version-2 files read with no slices and no disagreements.
  And ``stats.sequential`` (one record per pair when ``--until-decided`` stopped the run: examples
  used, decision, path of the statistic); ``None`` when every example was evaluated.
* 4 — failures count (intention to treat): an example without a prediction (NaN or infinite
  scores, an endpoint's missing or unparseable answer, a timeout) is a wrong answer in every
  quality metric, pair, slice and ranking. ``QualityMetrics.n_failed`` / ``failed_examples``
  (were ``n_nonfinite`` / ``nonfinite_examples``, read into them), ``QualityMetrics.answered``
  (the metrics on answered rows, a secondary figure), ``failures_counted`` (``False`` for a
  version-3 model with failures: its metrics there were over the answered rows);
  ``ModelStats.n_failed`` / ``accuracy_answered`` / ``calibration_examples``. Accuracy
  differences get Tango's score interval and McNemar's score test (``Comparison.test`` =
  ``mcnemar-score`` or ``mcnemar-clustered``; slices alike); an interval may be absent
  (``Estimate.low``/``high`` and ``MetricDifference.ci_low``/``ci_high`` ``None``, with a
  ``note``); the plug-in ECE has no interval. ``StatsSettings.group_column`` / ``n_groups``
  (grouped examples). Version-3 statistics read with ``settings.failures = "left out"``.
  Speed: ``SpeedComparison.p_value`` / ``p_adjusted`` / ``n_speed_tests`` and the same on
  ``ServerComparison`` ("faster" and "holds more" after Holm over every speed comparison of the
  run; ``None`` in version-3 files, whose ``faster`` came from the interval alone and is read as
  it was); ``ScenarioTiming.unstable`` is no longer written (dropped on read; repeat noise is a
  number, warnings come from what noise does to the ratios).
  ``ModelRecord.num_parameters`` / ``parameter_bytes`` and the same fields of the speed records
  (``ModelSpeed``) may be ``None``: a size headtohead cannot read (a plain callable, an estimator
  without coefficients) is unknown, where version 3 wrote 0.
  ``ModelRecord.endpoint`` (:mod:`headtohead.results.endpoint`): a ``kind: openai`` model's requests,
  cache hits, unparseable answers, tokens and cost (``None`` for every other kind);
  ``ModelSpeed.endpoint`` (its latency per request), ``ScenarioCost.price_per_prediction``
  (scenario ``endpoint``); ``ModelSpeed.first_preprocess_s`` / ``first_call_s`` may be ``None``.
* 5 — an endpoint's ``max_concurrency`` holds for the model over all its shards:
  ``RequestTiming.concurrency`` is that bound (in version 4 each shard had its own copy of it,
  so shards run side by side could exceed it); ``RequestTiming.shard_concurrency`` (each shard's
  bound: a share when they ran side by side) and ``peak_in_flight`` (each shard's most requests
  in flight, counted by its client). Metrics picked from the catalogue (:mod:`headtohead.metrics`;
  ``stats.metrics`` in the experiment, e.g. ``[mcc, roc_auc]``): ``ModelStats.metrics`` (name →
  estimate with its bootstrap interval), their pair differences among ``Comparison.differences``,
  ``StatsSettings.metrics`` (the names picked), ``SliceAccuracy.metrics`` (their values per slice);
  empty in a run that picks none. Version-4 files read with all of these empty.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from headtohead.results.base import Record
from headtohead.results.comparison import StatsSummary
from headtohead.results.endpoint import EndpointRecord
from headtohead.results.speed import SpeedSummary
from headtohead.results.training import TrainingSummary

__all__ = [
    "SCHEMA_VERSION",
    "Record",
    "GPURecord",
    "Environment",
    "ClassQuality",
    "BatchBackoff",
    "QualityMetrics",
    "AnsweredQuality",
    "FAILED_NAMED",
    "NO_PREDICTION_LABEL",
    "DatasetRecord",
    "ModelRecord",
    "WorkerRecord",
    "StageTimings",
    "RunResult",
]

SCHEMA_VERSION = 5


class GPURecord(Record):
    index: int
    name: str
    driver: str | None = None
    cuda: str | None = None
    memory_total_mb: float | None = None


class Environment(Record):
    """Where a result was measured: enough to tell two machines or two software stacks apart."""

    python: str
    os: str
    hostname: str
    cpu_model: str
    cpu_cores_physical: int | None
    cpu_cores_logical: int | None
    ram_gb: float
    torch: str | None = None
    torch_threads: int | None = None
    transformers: str | None = None
    timm: str | None = None
    torchvision: str | None = None
    sklearn: str | None = None
    numpy: str | None = None
    headtohead: str
    cuda_available: bool = False
    gpus: list[GPURecord] = Field(default_factory=list)
    git_revision: str | None = None


class ClassQuality(Record):
    """Quality on one class. ``accuracy`` is the share of the class's examples predicted
    correctly (equal to recall, kept under the name people look for)."""

    label: str
    precision: float
    recall: float
    f1: float
    accuracy: float
    support: int


class AnsweredQuality(Record):
    """A model's quality on the examples it answered only: a secondary figure, always labelled so."""

    n_examples: int = Field(description="examples answered")
    accuracy: float
    balanced_accuracy: float
    f1_macro: float
    f1_weighted: float


class QualityMetrics(Record):
    """Quality of one model's predictions, computed with scikit-learn.

    Over every evaluated example: an example without a prediction (``n_failed``) is a wrong
    answer — it counts against its class's recall and is nobody's prediction for precision.
    ``answered`` holds the same metrics over the answered examples only.
    """

    n_examples: int = Field(description="examples evaluated, failures included")
    accuracy: float
    balanced_accuracy: float
    precision_macro: float
    recall_macro: float
    f1_macro: float
    precision_weighted: float
    recall_weighted: float
    f1_weighted: float
    per_class: list[ClassQuality]
    confusion_matrix: list[list[int]] = Field(
        description="rows: true label, columns: predicted label (the last "
        "column '(no prediction)' when some examples failed)"
    )
    confidence_mean: float | None = Field(
        description="mean of the max class probability over answered examples; "
        "None for predictions stored without probabilities"
    )
    confidence_std: float | None
    confusion_labels: list[str] | None = Field(
        default=None,
        description="classes of confusion_matrix's rows and columns when they are not the dataset's "
        "label_names: the dataset's classes, then the classes outside the data the model "
        "predicted (their rows are zero), then '(no prediction)'; None: the dataset's "
        "label_names",
    )
    predicted_outside: int = Field(
        default=0,
        description="predictions of a class the data does not hold (each one "
        "an error: accuracy and recall count it, precision and F1 average over the "
        "dataset's classes only)",
    )
    n_failed: int = Field(
        default=0,
        description="examples without a prediction (NaN or infinite scores, an "
        "endpoint's missing or unparseable answer, a timeout): each is a wrong answer above",
    )
    failed_examples: list[int] = Field(
        default_factory=list, description="dataset indices of the first FAILED_NAMED of those examples"
    )
    answered: AnsweredQuality | None = Field(
        default=None, description="the metrics over the answered examples only; None when every example was answered"
    )
    failures_counted: bool = Field(
        default=True,
        description="False only in version-3 results with failures: "
        "their metrics were computed over the answered examples",
    )

    @model_validator(mode="before")
    @classmethod
    def _version_3_failures(cls, data: Any) -> Any:
        """Version 3 named failures ``n_nonfinite`` and left them out of the metrics."""
        if isinstance(data, dict) and "n_nonfinite" in data:
            data = dict(data)
            data["n_failed"] = data.pop("n_nonfinite")
            data["failed_examples"] = data.pop("nonfinite_examples", [])
            data.setdefault("failures_counted", not data["n_failed"])
        return data


#: How many of a model's failed examples its record names (all are in predictions.npz).
FAILED_NAMED = 10
#: The confusion matrix's column of examples without a prediction.
NO_PREDICTION_LABEL = "(no prediction)"


class BatchBackoff(Record):
    """The quality pass ran out of device memory on a batch and ran it, and larger later ones, in pieces.

    The batch plan (which examples, in which order, cut where) is the run's and stays as it is;
    from batch ``batch`` on, every batch larger than ``sub_batch_size`` is run as consecutive
    halves (recursively), in order, so each example's prediction is the model's own.
    """

    batch: int = Field(description="position of the batch in the plan (0-based)")
    batch_size: int = Field(description="examples in the batch (or piece) that ran out of memory")
    sub_batch_size: int = Field(description="the largest piece run from then on")
    error: str = Field(description="the error's class name (OutOfMemoryError …)")


class DatasetRecord(Record):
    """The evaluation data as the models saw it."""

    source: str
    modality: str
    n_examples: int
    label_names: list[str]
    class_counts: list[int]
    skipped: dict[str, int] = Field(default_factory=dict)
    fingerprint: str
    train_source: str | None = None
    n_train: int | None = None


class WorkerRecord(Record):
    """Where one shard of a model's quality pass ran (``execution.mode`` processes or ray), on what machine."""

    mode: str = Field(description="local | processes | ray")
    worker: str = Field(description="host:pid of the worker (on Ray also the node's GPU ids)")
    device: str
    shard: int = 0
    n_shards: int = 1
    environment_fingerprint: str = Field(
        description="hash of the hardware and software that matter "
        "(headtohead.results.environment); equal: the same kind of machine"
    )
    environment: Environment


class ModelRecord(Record):
    """One model's evaluation."""

    name: str
    kind: str
    source: str
    outputs: Literal["computed", "stored"] = Field(
        default="computed", description="stored: outputs read, not computed (kind predictions): speed not measured"
    )
    num_parameters: int | None = Field(description="None: unknown (a callable, an estimator without coefficients)")
    parameter_bytes: int | None = Field(description="None: unknown")
    label_alignment: str | None = Field(
        description="identical | remapped | subset | generic | unnamed (None: no quality pass)"
    )
    label_columns: list[int] | None = Field(description="model output column of each dataset class")
    labels_outside_data: list[str] = Field(
        default_factory=list,
        description="the model's classes the dataset does not hold, in output order; its "
        "probabilities of them follow the dataset's classes in predictions.npz",
    )
    index_order_hash: str = Field(description="SHA-256 of the example order and batch boundaries")
    batch_size: int
    device: str
    n_batches: int
    load_time_s: float
    eval_time_s: float | None = Field(description="quality pass wall time; None when only speed was measured")
    quality: QualityMetrics | None = Field(description="None when only speed was measured (h2h bench)")
    warnings: list[str] = Field(default_factory=list)
    batch_backoff: list[BatchBackoff] = Field(
        default_factory=list, description="out-of-memory back-offs of the quality pass (empty: every batch ran whole)"
    )
    execution_mode: str = Field(default="local", description="local | processes | ray")
    workers: list[WorkerRecord] = Field(default_factory=list, description="where each shard ran (processes/ray)")
    speed_concurrent: bool = Field(
        default=False, description="speed measured while other workers shared the device (--force): marked 'concurrent'"
    )
    endpoint: EndpointRecord | None = Field(
        default=None,
        description="kind openai: the requests, cache hits, unparseable answers, tokens and cost (results.endpoint)",
    )


class StageTimings(Record):
    """Where a run's wall time went, in seconds (what ``h2h run`` prints at the end).

    ``load_s`` and ``evaluate_s`` add up the models' own load and quality-pass times (in
    workers they overlap, so they can exceed the run's wall time); ``total_s`` is the wall
    time from the start of the run to its results being saved (the report included when
    the run writes one).
    """

    setup_s: float = Field(description="validating the experiment, reading the data, the batch plan")
    load_s: float = Field(description="loading the models (sum over models)")
    evaluate_s: float = Field(description="the quality passes (sum over models)")
    speed_s: float | None = Field(default=None, description="the speed and memory pass")
    statistics_s: float | None = Field(default=None, description="paired statistics (stats.analyse)")
    report_s: float | None = Field(default=None, description="writing report.html")
    total_s: float


class RunResult(Record):
    """Everything one ``h2h run`` produced, apart from the per-example predictions
    (``predictions_file``, an ``.npz`` beside the JSON)."""

    schema_version: int = SCHEMA_VERSION
    headtohead_version: str
    name: str
    created_at: str
    experiment: dict[str, Any]
    environment: Environment
    dataset: DatasetRecord
    models: list[ModelRecord]
    predictions_file: str = "predictions.npz"
    stats: StatsSummary | None = Field(default=None, description="paired statistics (headtohead.stats)")
    speed: SpeedSummary | None = Field(default=None, description="speed and memory (engines.speed)")
    training: TrainingSummary | None = Field(default=None, description="identical fine-tuning (h2h train)")
    timings: StageTimings | None = Field(default=None, description="where the run's wall time went")

    @model_validator(mode="before")
    @classmethod
    def _version_3_statistics(cls, data: Any) -> Any:
        """Statistics written before version 4 left failed examples out instead of counting them wrong."""
        if not isinstance(data, dict) or data.get("schema_version", SCHEMA_VERSION) >= 4:
            return data
        stats = data.get("stats")
        if isinstance(stats, dict) and isinstance(stats.get("settings"), dict):
            settings = {**stats["settings"]}
            settings.setdefault("failures", "left out")
            data = {**data, "stats": {**stats, "settings": settings}}
        return data

    def model(self, name: str) -> ModelRecord:
        """The record of the model called ``name``."""
        for record in self.models:
            if record.name == name:
                return record
        raise KeyError(name)
