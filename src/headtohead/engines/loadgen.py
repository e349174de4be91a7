"""MLPerf LoadGen as the load generator: headtohead supplies the system under test and the samples.

See ``docs/performance.md``, "What runs".
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from headtohead.adapters.base import ModelAdapter
from headtohead.engines.speed_inputs import fix_sequence_length
from headtohead.errors import ConfigError
from headtohead.results.server import LoadGenRun
from headtohead.runtime.devices import get_backend

__all__ = [
    "require_loadgen",
    "loadgen_version",
    "collate",
    "ServedModel",
    "DynamicBatcher",
    "LoadGenTest",
    "run_loadgen",
    "read_detail_log",
    "SUMMARY_LOG",
    "DETAIL_LOG",
]

SUMMARY_LOG = "mlperf_log_summary.txt"
DETAIL_LOG = "mlperf_log_detail.txt"


def require_loadgen() -> Any:
    """The ``mlperf_loadgen`` module, or a one-line :class:`ConfigError` naming the extra to install."""
    try:
        import mlperf_loadgen
    except ImportError:
        raise ConfigError(
            "speed.scenarios has 'server' (or speed.loadgen_crosscheck is on) but MLPerf LoadGen is "
            "not installed; install the extra: pip install 'headtohead[loadgen]' "
            "(the mlcommons-loadgen package)"
        ) from None
    return mlperf_loadgen


def loadgen_version() -> str:
    """The installed ``mlcommons-loadgen`` version."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mlcommons-loadgen")
    except PackageNotFoundError:
        return "unknown"


def _cat(values: list[Any]) -> Any:
    first = values[0]
    if hasattr(first, "new_full"):  # a torch tensor
        import torch

        return torch.cat(values, dim=0)
    if isinstance(first, np.ndarray):
        return np.concatenate(values, axis=0)
    if isinstance(first, list):
        return [item for value in values for item in value]
    raise TypeError(f"cannot batch preprocessed inputs of type {type(first).__name__}")


def collate(items: Sequence[Any], *, pad_id: int = 0) -> Any:
    """Join single preprocessed examples into one batch, as ``adapter.preprocess`` would make it.

    Token inputs (a mapping with 2-D ``input_ids``) are padded to the longest example first
    (``input_ids`` with ``pad_id``, masks with 0); tensors and arrays are concatenated on the
    first axis, lists joined.

    Examples
    --------
    >>> a = {"input_ids": np.array([[5, 6, 7]]), "attention_mask": np.ones((1, 3), int)}
    >>> b = {"input_ids": np.array([[8]]), "attention_mask": np.ones((1, 1), int)}
    >>> batch = collate([a, b], pad_id=1)
    >>> batch["input_ids"].tolist(), batch["attention_mask"].tolist()
    ([[5, 6, 7], [8, 1, 1]], [[1, 1, 1], [1, 0, 0]])
    """
    first = items[0]
    if isinstance(first, Mapping):
        if "input_ids" in first and getattr(first["input_ids"], "ndim", 0) == 2:
            longest = max(int(item["input_ids"].shape[1]) for item in items)
            items = [fix_sequence_length(item, longest, pad_id=pad_id)[0] for item in items]
        return {key: _cat([item[key] for item in items]) for key in first}
    return _cat(list(items))


class ServedModel:
    """A model as a server runs it, on the query sample library's examples.

    Parameters
    ----------
    adapter : ModelAdapter
        The loaded model.
    examples : sequence
        The library's raw examples; LoadGen refers to them by position.
    """

    def __init__(self, adapter: ModelAdapter, examples: Sequence[Any]) -> None:
        self.adapter = adapter
        self.examples = list(examples)
        self._cache: dict[int, Any] = {}
        tokenizer = getattr(adapter, "tokenizer", None)
        pad = getattr(tokenizer, "pad_token_id", None)
        self._pad_id = int(pad) if pad is not None else 0
        self.preprocessed_ahead = self._can_collate()

    @property
    def name(self) -> str:
        return self.adapter.name

    @property
    def device(self) -> str:
        return str(self.adapter.device)

    def _can_collate(self) -> bool:
        try:
            collate([self.adapter.preprocess([e]) for e in self.examples[:2]], pad_id=self._pad_id)
        except (TypeError, ValueError, RuntimeError):
            return False  # an input type batches cannot be joined from: preprocess each batch instead
        return True

    def load(self, indices: Sequence[int]) -> None:
        """Preprocess the examples LoadGen is about to query (once; kept across tests)."""
        if self.preprocessed_ahead:
            for i in indices:
                if i not in self._cache:
                    self._cache[i] = self.adapter.preprocess([self.examples[i]])

    def infer(self, indices: Sequence[int]) -> None:
        """Serve one batch: collate (or preprocess), move to the device, forward, synchronise."""
        if self.preprocessed_ahead:
            missing = [i for i in indices if i not in self._cache]
            self.load(missing)
            inputs = collate([self._cache[i] for i in indices], pad_id=self._pad_id)
        else:
            inputs = self.adapter.preprocess([self.examples[i] for i in indices])
        self.adapter.forward(self.adapter.to_device(inputs))
        if self.device != "cpu":
            get_backend().synchronize(self.device)


class DynamicBatcher:
    """A server's queue and its one worker: serve up to ``max_batch`` requests per call.

    A batch leaves when ``max_batch`` requests wait, or when the oldest has waited
    ``max_wait_s`` since it arrived, whichever comes first (Triton's dynamic batcher rule).

    Parameters
    ----------
    serve : callable
        ``serve(items)`` runs one batch and answers its requests.
    max_batch : int
    max_wait_s : float
    clock : callable
        Seconds (monotonic).
    """

    def __init__(
        self,
        serve: Callable[[list[Any]], None],
        max_batch: int,
        max_wait_s: float,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._serve, self.max_batch, self.max_wait_s, self._clock = serve, max_batch, max_wait_s, clock
        self._queue: deque[tuple[float, Any]] = deque()
        self._ready = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._loop, name="h2h-batcher", daemon=True)
        self.batches = 0
        self.requests = 0
        self.busy_s = 0.0
        self.error: BaseException | None = None

    def start(self) -> DynamicBatcher:
        self._thread.start()
        return self

    def submit(self, items: Sequence[Any]) -> None:
        """Queue requests (called from LoadGen's issuing thread)."""
        now = self._clock()
        with self._ready:
            self._queue.extend((now, item) for item in items)
            self._ready.notify()

    def stop(self) -> None:
        """Serve what is queued, then end the worker."""
        with self._ready:
            self._stopping = True
            self._ready.notify()
        self._thread.join()

    def _next_batch(self) -> list[Any] | None:
        with self._ready:
            while not self._queue and not self._stopping:
                self._ready.wait()
            if not self._queue:
                return None
            while len(self._queue) < self.max_batch and not self._stopping:
                remaining = self._queue[0][0] + self.max_wait_s - self._clock()
                if remaining <= 0:
                    break
                self._ready.wait(remaining)
            return [self._queue.popleft()[1] for _ in range(min(self.max_batch, len(self._queue)))]

    def _loop(self) -> None:
        while (batch := self._next_batch()) is not None:
            began = self._clock()
            try:
                self._serve(batch)
            except BaseException as exc:  # keep answering, or LoadGen waits forever; raised after the test
                self.error = self.error or exc
            self.busy_s += self._clock() - began
            self.batches += 1
            self.requests += len(batch)


@dataclass(frozen=True)
class LoadGenTest:
    """The settings of one LoadGen test (its ``TestSettings``), with the seeds fixed."""

    scenario: str  # "Server", "SingleStream", "Offline"
    min_duration_s: float
    min_queries: int
    seeds: tuple[int, int, int]  # qsl_rng_seed, sample_index_rng_seed, schedule_rng_seed
    target_qps: float | None = None  # Server
    latency_bound_ms: float | None = None  # Server
    expected_latency_s: float | None = None  # SingleStream
    expected_qps: float | None = None  # Offline
    keep_trace: bool = False


def _settings(lg: Any, test: LoadGenTest, n_samples: int) -> Any:
    settings = lg.TestSettings()
    settings.scenario = getattr(lg.TestScenario, test.scenario)
    settings.mode = lg.TestMode.PerformanceOnly
    settings.min_duration_ms = int(round(test.min_duration_s * 1e3))
    settings.min_query_count = test.min_queries
    settings.qsl_rng_seed, settings.sample_index_rng_seed, settings.schedule_rng_seed = test.seeds
    settings.performance_sample_count_override = n_samples
    if test.target_qps is not None:
        if test.latency_bound_ms is None:
            raise ValueError("a Server test needs latency_bound_ms beside target_qps")
        settings.server_target_qps = float(test.target_qps)
        settings.server_target_latency_ns = int(round(test.latency_bound_ms * 1e6))
        settings.server_target_latency_percentile = 0.99
    if test.expected_latency_s is not None:
        settings.single_stream_expected_latency_ns = max(1, int(test.expected_latency_s * 1e9))
    if test.expected_qps is not None:
        settings.offline_expected_qps = float(test.expected_qps)
    return settings


def run_loadgen(
    model: ServedModel, test: LoadGenTest, *, batcher: tuple[int, float], log_dir: Path | None
) -> tuple[LoadGenRun, DynamicBatcher]:
    """Run one LoadGen test of ``model`` and read back LoadGen's judgement.

    Parameters
    ----------
    model : ServedModel
    test : LoadGenTest
    batcher : (int, float)
        ``(max_batch, max_wait_s)`` of the batcher serving the queries (SingleStream: ``(1, 0)``;
        Offline: the offline batch size and 0).
    log_dir : Path, optional
        Where LoadGen's logs are kept; ``None``: a temporary folder, removed afterwards.

    Returns
    -------
    (LoadGenRun, DynamicBatcher)
        The run as LoadGen logged it, and the batcher (its call and request counts).
    """
    lg = require_loadgen()
    with tempfile.TemporaryDirectory(prefix="h2h-loadgen-") as scratch:
        out = Path(log_dir) if log_dir is not None else Path(scratch)
        out.mkdir(parents=True, exist_ok=True)

        def serve(items: list[Any]) -> None:
            try:
                model.infer([item.index for item in items])
            finally:  # answered even when the model failed, so the test ends
                lg.QuerySamplesComplete([lg.QuerySampleResponse(item.id, 0, 0) for item in items])

        queue = DynamicBatcher(serve, *batcher).start()
        sut = lg.ConstructSUT(queue.submit, lambda: None)
        qsl = lg.ConstructQSL(len(model.examples), len(model.examples), model.load, lambda indices: None)
        log = lg.LogSettings()
        log.log_output.outdir = str(out)
        log.log_output.copy_summary_to_stdout = False
        log.enable_trace = test.keep_trace
        try:
            lg.StartTestWithLogSettings(sut, qsl, _settings(lg, test, len(model.examples)), log)
        finally:
            queue.stop()
            lg.DestroyQSL(qsl)
            lg.DestroySUT(sut)
        if queue.error is not None:
            raise queue.error
        run = read_detail_log(out / DETAIL_LOG)
        for name in ("mlperf_log_accuracy.json", "mlperf_log_trace.json"):  # empty in PerformanceOnly, no trace
            extra = out / name
            if extra.is_file() and extra.stat().st_size < 16:
                extra.unlink()
    return run.model_copy(update={"log_dir": str(log_dir) if log_dir is not None else None}), queue


def _entries(path: Path) -> dict[str, Any]:
    entries: dict[str, Any] = {}
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith(":::MLLOG "):
            entry = json.loads(line[len(":::MLLOG ") :])
            entries[entry["key"]] = entry["value"]
    return entries


def read_detail_log(path: Path) -> LoadGenRun:
    """A :class:`LoadGenRun` from LoadGen's ``mlperf_log_detail.txt`` (its ``:::MLLOG`` JSON lines)."""
    entries = _entries(path)
    percentiles = {
        key[len("result_") : -len("_percentile_latency_ns")]: float(value)
        for key, value in entries.items()
        if key.startswith("result_") and key.endswith("_percentile_latency_ns")
    }

    def number(key: str) -> float | None:
        value = entries.get(key)
        return float(value) if isinstance(value, (int, float)) else None

    scenario = str(entries.get("effective_scenario", entries.get("requested_scenario", "Server")))
    return LoadGenRun(
        scenario=cast(Any, scenario.replace(" ", "")),  # one of LoadGen's three; the record checks
        valid=entries.get("result_validity") == "VALID",
        perf_constraints_met=entries.get("result_perf_constraints_met"),
        min_duration_met=bool(entries.get("result_min_duration_met")),
        min_queries_met=bool(entries.get("result_min_queries_met")),
        early_stopping_met=entries.get("early_stopping_met"),
        invalid_reason=entries.get("result_invalid_reason") or None,
        query_count=int(entries.get("result_query_count", 0)),
        overlatency_query_count=entries.get("result_overlatency_query_count"),
        scheduled_samples_per_s=number("result_scheduled_samples_per_sec"),
        completed_samples_per_s=number("result_completed_samples_per_sec"),
        samples_per_s=number("result_samples_per_second"),
        mean_latency_ns=number("result_mean_latency_ns"),
        min_latency_ns=number("result_min_latency_ns"),
        max_latency_ns=number("result_max_latency_ns"),
        percentiles_ns=percentiles,
        log_dir=str(path.parent),
    )
