"""What a model costs when nothing here can time it: the price per million predictions it was given.

A model of stored answers (a prediction file, a harness's log) has no throughput to price, so its
settings may give ``price_per_1m``. It becomes the same cost record a measured model has — a
:class:`~headtohead.results.speed.ModelSpeed` with a :class:`~headtohead.results.cost.ModelCost`, in
scenario ``priced`` — beside the timed models and the endpoints in the run's speed summary, so the cost
table, the accuracy–cost chart and every reader of cost per million predictions see it as they see any
other (:func:`headtohead.results.cost.one_cost_per_million`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from headtohead.config.speed import SpeedConfig
from headtohead.results.cost import ModelCost, ScenarioCost
from headtohead.results.records import ModelRecord
from headtohead.results.speed import HostLoad, ModelSpeed, SpeedSummary

__all__ = ["priced_speed", "with_speed_entries", "prices"]


def priced_speed(record: ModelRecord, price_per_1m: float, *, scenario: str = "priced") -> ModelSpeed:
    """The speed-summary entry of a model given a price: no timing, a cost per million predictions.

    Examples
    --------
    >>> from headtohead.results.records import ModelRecord
    >>> record = ModelRecord(name="m", kind="predictions", source="m.csv", outputs="stored", num_parameters=None,
    ...     parameter_bytes=None, label_alignment=None, label_columns=None, index_order_hash="", batch_size=1,
    ...     device="cpu", n_batches=1, load_time_s=0.0, eval_time_s=None, quality=None)
    >>> priced_speed(record, 2.5).cost.scenario("priced").cost_per_million
    2.5
    """
    cost = ScenarioCost(scenario=scenario, throughput_per_s=None, price_per_prediction=price_per_1m / 1e6)
    return ModelSpeed(
        name=record.name,
        device=record.device,
        num_parameters=record.num_parameters,
        parameter_bytes=record.parameter_bytes,
        load_time_s=record.load_time_s,
        cost=ModelCost(scenarios=[cost]),
    )


def with_speed_entries(
    summary: SpeedSummary | None,
    entries: Sequence[ModelSpeed],
    config: SpeedConfig,
    *,
    batch_size: int,
    seed: int,
    load: HostLoad | None = None,
) -> SpeedSummary | None:
    """``summary`` with ``entries`` added (a summary of them alone when nothing was timed), replacing any of
    the same name. A summary of them alone records ``load`` as the machine's (``None``: it measured nothing,
    so it says nothing of the machine's load)."""
    if not entries:
        return summary
    if summary is None:
        load = load or HostLoad(cpu_count=None, load_average=None, other_cpu_percent=None)
        return SpeedSummary(
            settings=config.model_dump(mode="json"),
            batch_size=batch_size,
            seed=seed,
            torch_threads=None,
            torch_interop_threads=None,
            host_before=load,
            host_after=load,
            elapsed_s=0.0,
            scenarios=[],
            models=list(entries),
        )
    names = {e.name for e in entries}
    return summary.model_copy(update={"models": [*(m for m in summary.models if m.name not in names), *entries]})


def prices(models: Mapping[str, float | None]) -> dict[str, float]:
    """The models given a price (``price_per_1m``), by name."""
    return {name: price for name, price in models.items() if price is not None}
