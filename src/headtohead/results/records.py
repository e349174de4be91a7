"""The typed, versioned records a run produces (``results.json``).

Engines create these; statistics and reports only read them. Every record is frozen and
refuses unknown keys. Numbers are stored unrounded: rounding is a display concern.

Every version of :data:`SCHEMA_VERSION` and what it added: ``CHANGELOG.md``, "Schema versions of
the files headtohead writes". The current one, 9: a cascade (``kind: cascade``) has its
``ModelRecord.cascade`` (:class:`~headtohead.results.cascade.CascadeRecord`: its parts, the threshold
Learn-then-Test chose, its figures on the evaluation examples, its cost and latency), the run the
examples its threshold was chosen on (``RunResult.calibration_examples``, which no statistic reads), and a
model given a price (``price_per_1m``) a cost record in scenario ``priced``; endpoints' capacity at their
SLOs (``SpeedSummary.capacity``); one decision across quality, speed and cost (``RunResult.decision``); the
noise floor of a model run several times (``RepeatPool.noise_floor``); the speed rounds stop on the decisions
the run reports (a ratio decided faster: ``SpeedComparison.settled`` ``faster``, ``ScenarioRun.stop_reason``
``decided``) or at a budget that scales with the quality pass (``ScenarioRun.budget_s``, ``quality_s``).
Version 8: a model run several times (``repeats:``) has a
pass per run (``PassRecord.factor`` ``repeat``) and ``StatsSummary.repeats`` (its runs' spread, its
answers' steadiness, its comparisons over runs); the environment's ``onnxruntime`` version and the LLM
backend that answered an endpoint model (``EndpointRequests.server``), so that runs compared later can be
told apart in every setting known to move scores (:mod:`headtohead.results.score_settings`); a pair's
fragility under wrong gold labels, the label suspects, DeLong's p-value of a ROC AUC difference. Version 7: every LLM family keeps its answers in one record
(``ModelRecord.answers``, an :class:`~headtohead.results.answers.AnswersRecord`; asked over HTTP, its
requests are its ``endpoint`` part), read from version 6's ``ModelRecord.endpoint``; a model measured
several ways (asked with several prompts, or stored prediction files given as its passes) is one model
with its passes (``ModelRecord.passes``: each its key, factor, what it varies, its prompt template as
rendered, its own quality, time, warnings and answers; ``ModelStats.passes``), where version 6 wrote a
model ``llm@p1`` … per prompt (read as passes, :mod:`headtohead.results.io`). Version 6: a run says
whether it is incomplete (``RunResult.incomplete``) and which examples an endpoint never answered
because of the transport (``AnswersRecord.missing``, ``RunResult.missing``); an LLM's class
probabilities are kept only where the labels held the answer's mass.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from headtohead.results.answers import AnswersRecord, answers_of_version_6
from headtohead.results.base import Record
from headtohead.results.cascade import CascadeRecord
from headtohead.results.comparison import StatsSummary
from headtohead.results.decision import DecisionSummary
from headtohead.results.passes import pass_label, passes_of_version_6
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
    "PassRecord",
    "WorkerRecord",
    "StageTimings",
    "MissingAnswers",
    "RunResult",
]

SCHEMA_VERSION = 9


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
    onnxruntime: str | None = Field(
        default=None,
        description="None: not installed (unknown in results.json before version 8, training.json before 2)",
    )
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
        "LLM's missing or unparseable answer, a timeout): each is a wrong answer above",
    )
    failed_examples: list[int] = Field(
        default_factory=list, description="dataset indices of the first FAILED_NAMED of those examples"
    )
    failed_ids: list[str] | None = Field(
        default=None, description="the ids of those examples, where the data has ids (None: it has none)"
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


class PassRecord(Record):
    """One pass of a model measured several ways: what varied, and what this pass alone measured."""

    key: str = Field(description="the pass's key (p1, p2 … a prompt; r1, r2 … a repeat), as in predictions.npz")
    factor: Literal["prompt", "repeat"] = Field(description="what varies between the model's passes")
    varies: str = Field(description="what this pass varies, in words ('the prompt as written', 'upper case' …)")
    template: str | None = Field(
        default=None,
        description="the prompt template as this pass renders it: its wording, its labels in its order and "
        "separator, the example left as {text} (a Jinja template as written); None: a pass read from a file",
    )
    source: str | None = Field(default=None, description="the prediction file this pass read (stored passes)")
    load_time_s: float
    eval_time_s: float | None = Field(description="this pass's quality pass wall time")
    quality: QualityMetrics | None = Field(description="this pass's quality (None: only speed was measured)")
    warnings: list[str] = Field(default_factory=list)
    batch_backoff: list[BatchBackoff] = Field(default_factory=list, description="this pass's out-of-memory back-offs")
    answers: AnswersRecord | None = Field(
        default=None,
        description="an LLM's answers in this pass: unparseable answers, tokens; asked over HTTP, requests, cost",
    )


class ModelRecord(Record):
    """One model's evaluation (a model measured several ways: with its passes, its own figures in each)."""

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
    answers: AnswersRecord | None = Field(
        default=None,
        description="an LLM (kind openai, causal-lm): its unparseable answers, failures, tokens, class "
        "probabilities; asked over HTTP, its requests, cache hits and cost (results.answers); with passes: theirs "
        "added up",
    )
    cascade: CascadeRecord | None = Field(
        default=None,
        description="kind cascade: its parts, the threshold Learn-then-Test chose and its figures on the evaluation "
        "examples",
    )
    passes: list[PassRecord] = Field(
        default_factory=list,
        description="a model measured several ways (prompts:, prediction files as passes:): each pass's own "
        "figures, in order; quality is then None here (each pass has its own), load and eval times are the "
        "passes' sums and answers theirs added up. Empty: the model was measured once",
    )

    @model_validator(mode="before")
    @classmethod
    def _endpoint_before_version_7(cls, data: Any) -> Any:
        """Before version 7 an LLM's answers were an ``endpoint`` record with its HTTP fields among them."""
        if isinstance(data, dict) and "endpoint" in data and "answers" not in data:
            endpoint = data["endpoint"]
            data = {k: v for k, v in data.items() if k != "endpoint"}
            data["answers"] = answers_of_version_6(endpoint) if isinstance(endpoint, dict) else endpoint
        return data

    @property
    def has_quality(self) -> bool:
        """Whether the model has quality figures: its own, or each of its passes'."""
        return self.quality is not None or (bool(self.passes) and all(p.quality is not None for p in self.passes))

    @property
    def missing_examples(self) -> list[int]:
        """Dataset indices of the examples this model (any of its passes) never answered because of the transport."""
        return sorted(set(self.answers.missing)) if self.answers is not None else []

    def pass_record(self, key: str) -> ModelRecord:
        """Pass ``key`` as a record of its own, named ``model@key``: for what reads one pass's figures alone."""
        for one in self.passes:
            if one.key == key:
                update = {f: getattr(one, f) for f in ("load_time_s", "eval_time_s", "quality", "warnings")}
                update.update(batch_backoff=one.batch_backoff, answers=one.answers, passes=[])
                return self.model_copy(update={"name": pass_label(self.name, key), **update})
        raise KeyError(f"model '{self.name}' has no pass '{key}'")


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


class MissingAnswers(Record):
    """Examples some model never answered because of the transport: missing data, not wrong answers."""

    models: dict[str, int] = Field(description="model → examples it never answered (after every retry)")
    allowed: bool = Field(
        description="--allow-missing: the statistics were computed on the examples every model answered; "
        "false: no statistic involves these models"
    )
    rows_used: int = Field(description="examples the statistics were computed on")


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
    incomplete: Literal["unfinished", "answers missing"] | None = Field(
        default=None,
        description="unfinished: saved while the run went on, and it never finished (interrupted, killed, failed); "
        "answers missing: a model has examples never answered (missing); None: complete (or written before "
        "version 6)",
    )
    missing: MissingAnswers | None = Field(
        default=None, description="the examples some model never answered, and what the statistics did about them"
    )
    calibration_examples: list[int] = Field(
        default_factory=list,
        description="dataset indices of the examples a cascade's threshold was chosen on: every statistic of the run "
        "(stats) reads the other examples only; empty: every example",
    )
    decision: DecisionSummary | None = Field(
        default=None,
        description="one decision across quality, speed and cost (decide:): dominance per pair, the front per "
        "model with P(on the front); None: fewer than two models decided, no axis beyond quality measured for "
        "every model, or files before version 9",
    )

    @model_validator(mode="before")
    @classmethod
    def _version_6_prompts(cls, data: Any) -> Any:
        """Version 6 wrote a model asked with several prompts as a model per prompt (``llm@p1`` …): its passes now."""
        if not isinstance(data, dict) or data.get("schema_version", SCHEMA_VERSION) >= 7:
            return data
        return passes_of_version_6(data)

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
