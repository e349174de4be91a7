"""A complete, reproducible sample run — for previewing report layouts, for docs, and for tests.

The predictions are simulated (each model right with a chosen probability), but every
number in the result is then computed by the real code: quality with scikit-learn
(:func:`headtohead.stats.quality.compute_quality`), statistics with :func:`headtohead.stats.analyse`,
and speed with :func:`headtohead.engines.speed.measure_speed` on simulated models timed
by a fake clock (so it takes well under a second and gives the same numbers every time).
"""

from __future__ import annotations

import platform
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone

import numpy as np

from headtohead.results.predictions import Predictions
from headtohead.results.records import DatasetRecord, Environment, ModelRecord, RunResult

__all__ = ["sample_run", "sample_environment", "sample_training"]


def sample_environment(hostname: str = "sample-host", **versions: str | None) -> Environment:
    """An environment record for a sample run; ``versions`` overrides fields (``torch="2.3.0"``)."""
    fields = dict(
        python=platform.python_version(),
        os=f"{platform.system()} {platform.release()}",
        hostname=hostname,
        cpu_model="Sample CPU (simulated)",
        cpu_cores_physical=8,
        cpu_cores_logical=16,
        ram_gb=32.0,
        torch="2.14.1",
        torch_threads=8,
        transformers="5.23.0",
        timm="1.0.31",
        torchvision="0.29.1",
        sklearn="1.9.1",
        numpy=np.__version__,
        headtohead=_version(),
    )
    fields.update(versions)
    return Environment(**fields)


def _version() -> str:
    import headtohead

    return headtohead.__version__


def _simulate(y: np.ndarray, k: int, accuracy: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    n = len(y)
    right = rng.random(n) < accuracy
    pred = np.where(right, y, (y + rng.integers(1, k, n)) % k)
    # Confident when right, less so when wrong (a realistic reliability diagram); the predicted
    # class keeps at least half the mass, so it is always the arg-max.
    top = 0.5 + 0.5 * np.where(right, rng.beta(6, 2, n), rng.beta(2, 3, n))
    rest = rng.dirichlet(np.full(k, 5.0), n)
    rest[np.arange(n), pred] = 0.0
    proba = rest / rest.sum(axis=1, keepdims=True) * (1.0 - top)[:, None]
    proba[np.arange(n), pred] = top
    return pred, proba.astype(np.float32)


def _quiet():  # noqa: ANN202 - HostLoad
    from headtohead.results.speed import HostLoad

    return HostLoad(cpu_count=16, load_average=[0.0, 0.0, 0.0], other_cpu_percent=0.0)


def _speed(names: Sequence[str], costs_ns: Sequence[float], seed: int):  # noqa: ANN202 - SpeedSummary
    from headtohead.config.speed import SpeedConfig
    from headtohead.data.base import Dataset
    from headtohead.engines.speed import measure_speed
    from headtohead.testing.fake_device import FakeClock
    from sim.simulated import SimulatedAdapter

    clock = FakeClock()
    adapters = [
        SimulatedAdapter(name, cost_ns=cost, overhead_ns=cost * 4, clock=clock, jitter=0.05, seed=seed + i)
        for i, (name, cost) in enumerate(zip(names, costs_ns, strict=True))
    ]
    data = Dataset(
        "sample",
        "features",
        np.zeros((64, 4), dtype=np.float32),
        np.zeros(64, dtype=np.int64),
        ("negative", "positive"),
    )
    config = SpeedConfig(
        warmup_iterations=2,
        warmup_seconds=0.0,
        min_iterations=30,
        min_seconds=0.0,
        rounds=10,
        pipeline_iterations=0,
        memory=False,
        telemetry=False,
        num_batches=2,
        n_resamples=500,
    )
    summary = measure_speed(adapters, data, config, batch_size=16, seed=seed, clock=clock)
    # The timings are simulated: how busy this machine is has no bearing on them.
    from headtohead.report.words.speed import with_speed_sentences

    return with_speed_sentences(
        summary.model_copy(update={"warnings": [], "host_before": _quiet(), "host_after": _quiet()})
    )


def sample_run(
    models: Mapping[str, float] | None = None,
    *,
    label_names: Sequence[str] = ("negative", "positive"),
    n_examples: int = 1000,
    name: str = "sample-comparison",
    seed: int = 0,
    latency_us: Mapping[str, float] | None = None,
    stats: bool = True,
    speed: bool = True,
    n_resamples: int = 400,
    environment: Environment | None = None,
    texts: Sequence[str] | None = None,
) -> tuple[RunResult, Predictions]:
    """Simulate a comparison and compute its results with the real code.

    Parameters
    ----------
    models : mapping of str to float, optional
        Model name → the probability it is right (default: ``bert`` 0.86, ``roberta`` 0.92).
    label_names : sequence of str
        The classes (any number, e.g. 77).
    n_examples : int
    name : str
        The run name.
    seed : int
    latency_us : mapping of str to float, optional
        Simulated forward time per example in microseconds (default: 100, 140, 180 …).
    stats, speed : bool
        Include the statistics / speed sections.
    n_resamples : int
        Bootstrap resamples of the statistics.
    environment : Environment, optional
        Default: :func:`sample_environment`.
    texts : sequence of str, optional
        The examples' texts (default: generated sentences of 3 to 40 words): slices by their
        length, and the inputs shown beside the disagreements.

    Returns
    -------
    result : RunResult
    predictions : Predictions

    Examples
    --------
    >>> result, predictions = sample_run({"a": 0.9, "b": 0.8}, n_examples=300, speed=False)
    >>> [m.name for m in result.models], result.stats.comparisons[0].winner
    (['a', 'b'], 'a')
    """
    from headtohead.stats.quality import compute_quality

    models = dict(models or {"bert": 0.86, "roberta": 0.92})
    labels = tuple(label_names)
    k = len(labels)
    if k < 2:
        raise ValueError(f"a sample run needs at least two classes, got {k}")
    rng = np.random.default_rng(seed)
    y = np.arange(n_examples) % k
    rng.shuffle(y)
    predictions = Predictions(order=np.arange(n_examples), y_true=y, label_names=labels)
    records = []
    for i, (model, accuracy) in enumerate(models.items()):
        pred, proba = _simulate(y, k, accuracy, rng)
        predictions.add(model, pred, proba)
        records.append(
            ModelRecord(
                name=model,
                kind="python",
                source=f"sample:{model}",
                num_parameters=int(1e6 * (i + 1) * 11),
                parameter_bytes=int(4e6 * (i + 1) * 11),
                label_alignment="identical",
                label_columns=list(range(k)),
                index_order_hash="sample",
                batch_size=16,
                device="cpu",
                n_batches=(n_examples + 15) // 16,
                load_time_s=0.5 + i,
                eval_time_s=1.0 + i,
                quality=compute_quality(y, pred, proba, labels),
            )
        )
    counts = np.bincount(y, minlength=k)
    result = RunResult(
        headtohead_version=_version(),
        name=name,
        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        experiment={"name": name, "seed": seed, "models": [{"name": m, "kind": "python"} for m in models]},
        environment=environment or sample_environment(),
        dataset=DatasetRecord(
            source="sample.tsv",
            modality="text",
            n_examples=n_examples,
            label_names=list(labels),
            class_counts=[int(c) for c in counts],
            fingerprint=f"sample-{seed}-{n_examples}-{k}",
        ),
        models=records,
    )
    update = {}
    if stats:
        from headtohead.report.words.quality import with_quality_sentences
        from headtohead.stats import analyse

        update["stats"] = with_quality_sentences(
            _with_texts(
                analyse(predictions, n_resamples=n_resamples, seed=seed, examples=_facts(texts, n_examples, rng)),
                texts if texts is not None else _sentences(n_examples, rng),
            )
        )
    if speed:
        names = list(models)
        costs = [1e3 * (latency_us or {}).get(m, 100.0 + 40.0 * i) for i, m in enumerate(names)]
        update["speed"] = _speed(names, costs, seed)
    return result.model_copy(update=update), predictions


def _sentences(n: int, rng: np.random.Generator) -> list[str]:
    words = ("the", "film", "is", "a", "quietly", "moving", "dull", "story", "of", "two", "friends", "and")
    return [" ".join(words[(i + j) % len(words)] for j in range(3 + (i * 7919) % 38)) for i in range(n)]


def _facts(texts: Sequence[str] | None, n: int, rng: np.random.Generator):  # noqa: ANN202 - ExampleFacts
    from headtohead.stats.where import ExampleFacts

    shown = list(texts) if texts is not None else _sentences(n, rng)
    return ExampleFacts(sizes=np.array([len(t.split()) for t in shown]), size_unit="words")


def _with_texts(summary, texts: Sequence[str]):  # noqa: ANN001, ANN202 - StatsSummary
    """The disagreements with their inputs attached, as a run attaches them."""

    def attach(rows: list) -> list:  # noqa: ANN001
        return [r.model_copy(update={"input": texts[r.index]}) for r in rows]

    kept = [
        d.model_copy(update={"only_a_right": attach(d.only_a_right), "only_b_right": attach(d.only_b_right)})
        for d in summary.disagreements
    ]
    return summary.model_copy(update={"disagreements": kept})


def sample_training(
    models: Mapping[str, float] | None = None,
    *,
    seeds: Sequence[int] = (0, 1, 2),
    epochs: int = 4,
    n_train: int = 2000,
    seed: int = 0,
):  # noqa: ANN201 - TrainingSummary
    """Simulate ``h2h train`` of each model with each seed: loss and accuracy curves, step timings.

    Parameters
    ----------
    models : mapping of str to float, optional
        Model name → the accuracy it reaches at the end (default: ``bert`` 0.86, ``roberta`` 0.92).
    seeds : sequence of int
    epochs : int
    n_train : int
    seed : int

    Returns
    -------
    TrainingSummary
        With the multi-seed statistics computed by :func:`headtohead.stats.summarise_seeds`.
    """
    from headtohead.results.comparison import SeedResult
    from headtohead.results.training import EpochRecord, StepLog, TrainingRun, TrainingSummary
    from headtohead.stats import summarise_seeds

    models = dict(models or {"bert": 0.86, "roberta": 0.92})
    rng = np.random.default_rng(seed)
    runs, results = [], []
    steps_per_epoch, batch = 20, max(1, n_train // 20)
    for i, (model, final) in enumerate(models.items()):
        for s in seeds:
            reach = final + rng.normal(0, 0.006)
            records = []
            for e in range(1, epochs + 1):
                progress = 1 - np.exp(-1.5 * e)
                records.append(
                    EpochRecord(
                        epoch=e,
                        steps=steps_per_epoch,
                        optimizer_steps=e * steps_per_epoch,
                        samples=n_train,
                        train_loss=float(0.7 * np.exp(-0.6 * e) + 0.05 * rng.random()),
                        train_s=10.0 * (i + 1),
                        elapsed_train_s=10.0 * (i + 1) * e,
                        learning_rate=1e-4 * (1 - e / (epochs + 1)),
                        order_hash=f"epoch-{s}-{e}",
                        eval={"accuracy": float(0.5 + (reach - 0.5) * progress)},
                    )
                )
            n_steps = steps_per_epoch * epochs
            steps = StepLog(
                data_wait_ns=[int(2e6)] * n_steps,
                compute_ns=[int(4.8e8 * (i + 1))] * n_steps,
                samples=[batch] * n_steps,
                loss=[r.train_loss for r in records for _ in range(20)],
            )
            runs.append(
                TrainingRun(
                    model=model,
                    kind="python",
                    source=f"sample:{model}",
                    seed=s,
                    device="cpu",
                    precision="fp32",
                    batch_size=batch,
                    n_train=n_train,
                    num_parameters=int(11e6 * (i + 1)),
                    order_hash=f"order-{s}",
                    epochs=records,
                    steps=steps,
                    optimizer_steps=n_steps,
                    samples_seen=n_train * epochs,
                    load_time_s=1.0,
                    end_to_end_s=10.0 * (i + 1) * epochs + 5,
                    final_eval=dict(records[-1].eval or {}),
                    rss_peak_mb=900.0 * (i + 1),
                )
            )
            results.append(SeedResult(model=model, seed=s, metrics=dict(records[-1].eval or {})))
    multi = summarise_seeds(results) if len(seeds) > 1 else None
    return TrainingSummary(
        settings={"epochs": epochs},
        train_source="sample-train.tsv",
        n_train=n_train,
        train_fingerprint="sample-train",
        eval_fingerprint="sample-eval",
        seeds=list(seeds),
        runs=runs,
        multi_seed=multi,
    )
