"""A model's request bound (max_concurrency) over its shards: divided among shards run side by side, whole for shards run in turn."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from headtohead.config.execution import ExecutionConfig
from headtohead.config.schema import model_settings
from headtohead.engines.answers import merge_answers_records
from headtohead.pipeline.executors import EvalJob, concurrency, create_executor
from headtohead.pipeline.executors.concurrency import request_bound, shard_bounds, shard_config, shard_count
from headtohead.results.answers import AnswersRecord
from headtohead.results.endpoint import EndpointRequests, RequestTiming

LLM = {"name": "llm", "kind": "openai", "source": "m", "base_url": "http://127.0.0.1:9/v1"}


@pytest.mark.parametrize("bound", range(1, 13))
def test_shares_of_shards_side_by_side_sum_to_the_bound_and_differ_by_at_most_one(bound):
    for shards in range(1, bound + 1):
        shares = shard_bounds(bound, shards, side_by_side=True)
        assert len(shares) == shards and sum(shares) == bound
        assert min(shares) >= 1 and max(shares) - min(shares) <= 1
        assert shares == sorted(shares, reverse=True)  # the earlier shards take the extra request


def test_shares_worked_examples():
    assert shard_bounds(2, 2, side_by_side=True) == [1, 1]
    assert shard_bounds(8, 3, side_by_side=True) == [3, 3, 2]
    assert shard_bounds(5, 1, side_by_side=True) == [5]
    assert shard_bounds(4, 3, side_by_side=False) == [4, 4, 4]  # one at a time: each has all of it
    assert shard_bounds(None, 3, side_by_side=True) == [None, None, None]  # no requests, no bound
    with pytest.raises(ValueError, match="each needs one"):
        shard_bounds(2, 3, side_by_side=True)


def test_a_model_runs_on_at_most_its_bound_of_shards_side_by_side():
    assert shard_count(3, 2, side_by_side=True) == 2
    assert shard_count(3, 8, side_by_side=True) == 3
    assert shard_count(3, 2, side_by_side=False) == 3
    assert shard_count(3, None, side_by_side=True) == 3


def test_request_bound_and_the_shard_config():
    llm = model_settings(**LLM)
    assert request_bound(llm) == 8  # the default
    assert request_bound(model_settings(**LLM, max_concurrency=2)) == 2
    assert request_bound(model_settings(name="mlp", kind="python", source="a:b")) is None
    assert shard_config(llm, 3).max_concurrency == 3 and llm.max_concurrency == 8
    assert shard_config(llm, None) is llm


def test_each_family_says_where_its_share_of_the_bound_is_kept():
    llm, mlp = model_settings(**LLM), model_settings(name="mlp", kind="python", source="a:b")
    assert llm.with_request_share(2).max_concurrency == 2 and llm.with_request_share(2).request_bound == 2
    assert mlp.with_request_share(2) is mlp  # it sends no requests: the same in every shard
    # the executors share a bound without naming the key a family keeps it in
    executors = Path(concurrency.__file__).parent
    assert not [f.name for f in executors.glob("*.py") if "max_concurrency" in f.read_text(encoding="utf-8")]


def _job(n: int = 40, batch_size: int = 8) -> EvalJob:
    return EvalJob({"models": [{"name": "llm"}, {"name": "mlp"}]}, ".", np.arange(n), batch_size)


@pytest.mark.parametrize("mode", ["processes", "ray"])
def test_executors_running_shards_side_by_side_divide_the_bound(mode):
    executor = create_executor(ExecutionConfig(mode=mode, shards=3))
    tasks = executor.tasks(_job(), ["llm", "mlp"], bounds={"llm": 2, "mlp": None})
    llm = [t for t in tasks if t.model == "llm"]
    assert [t.request_share for t in llm] == [1, 1] and [t.shard.count for t in llm] == [2, 2]
    assert [(t.shard.start, t.shard.stop) for t in llm] == [(0, 24), (24, 40)]  # whole batches, in order
    assert [t.request_share for t in tasks if t.model == "mlp"] == [None, None, None]
    wide = executor.tasks(_job(), ["llm"], bounds={"llm": 8})
    assert [t.request_share for t in wide] == [3, 3, 2]


def test_the_local_executor_runs_shards_in_turn_each_with_the_whole_bound():
    tasks = create_executor(ExecutionConfig(shards=3)).tasks(_job(), ["llm"], bounds={"llm": 2})
    assert [t.request_share for t in tasks] == [2, 2, 2]


def _record(share: int, peak: int) -> AnswersRecord:
    timing = RequestTiming(
        concurrency=share, shard_concurrency=[share], peak_in_flight=[peak], latencies_s=[0.1], wall_s=1.0
    )
    return AnswersRecord(
        model="m", examples=1, endpoint=EndpointRequests(base_url="http://127.0.0.1:9/v1", timing=timing)
    )


def test_a_merged_record_keeps_the_models_bound_and_each_shards_own():
    merged = merge_answers_records([_record(2, 2), _record(1, 1)], concurrency=3)
    timing = merged.endpoint.timing
    assert timing.concurrency == 3 and merged.examples == 2
    assert timing.shard_concurrency == [2, 1] and timing.peak_in_flight == [2, 1]
