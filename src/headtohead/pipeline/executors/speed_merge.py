"""One speed summary from the per-worker speed measurements of ``execution.speed: workers``.

Each worker times its own model alone (:func:`~headtohead.engines.speed.measure_speed` with
one model). The paired A/B speed ratio needs both models timed in the same interleaved
rounds on one device, which separate workers cannot give, so the merged summary keeps every
model's own timings and memory but **no** pairwise ratios, and says so. Timings taken on a
shared device (forced past :func:`~headtohead.pipeline.executors.fairness.check_fairness`) are marked
``concurrent``; workers on different kinds of machine are named.
"""

from __future__ import annotations

from collections.abc import Sequence

from headtohead.pipeline.model_pass import ModelOutcome
from headtohead.results.environment import describe_environment, environment_fingerprint
from headtohead.results.speed import ModelSpeed, ScenarioRun, SpeedSummary, StopReason

__all__ = ["merge_worker_speed", "CONCURRENT_MARK"]

#: Put first in the warnings of a model timed while other workers shared its device.
CONCURRENT_MARK = "concurrent"


def merge_worker_speed(outcomes: Sequence[ModelOutcome]) -> SpeedSummary | None:
    """Merge the speed each worker measured for its model into one :class:`SpeedSummary`.

    Parameters
    ----------
    outcomes : sequence of ModelOutcome
        From :meth:`Executor.evaluate` with ``measure_speed``; models without a speed
        measurement are left out.

    Returns
    -------
    SpeedSummary or None
        ``None`` when no worker measured speed. Scenarios keep their batch size and the
        fewest rounds any worker ran; ``comparisons`` and ``round_orders`` are empty.
    """
    measured = [(o, SpeedSummary.model_validate(o.speed)) for o in outcomes if o.speed is not None]
    if not measured:
        return None
    models: list[ModelSpeed] = []
    for outcome, summary in measured:
        for model in summary.models:
            extra = (
                [
                    (
                        f"{CONCURRENT_MARK}: timed while other workers ran on the same device; the timing includes "
                        f"their interference"
                    )
                ]
                if outcome.concurrent_speed
                else []
            )
            models.append(model.model_copy(update={"warnings": extra + list(model.warnings)}))
    summaries = [s for _, s in measured]
    warnings = [f"{o.record.name}: {w}" for o, s in measured for w in s.warnings]
    if len(measured) > 1:
        warnings.insert(
            0,
            "speed was measured in separate workers (execution.speed: workers): there are no paired "
            "speed ratios; use execution.speed: main for ratios with confidence intervals",
        )
    kinds = {
        environment_fingerprint(w.environment): describe_environment(w.environment)
        for o, _ in measured
        for w in o.record.workers[:1]
    }
    if len(kinds) > 1:
        warnings.insert(
            0,
            f"models were timed on different kinds of machine ({'; '.join(kinds.values())}); their "
            f"speeds are not comparable",
        )
    threads = {s.torch_threads for s in summaries}
    first = summaries[0]
    return SpeedSummary(
        settings=first.settings,
        batch_size=first.batch_size,
        seed=first.seed,
        torch_threads=threads.pop() if len(threads) == 1 else None,
        torch_interop_threads=first.torch_interop_threads,
        host_before=first.host_before,
        host_after=summaries[-1].host_after,
        elapsed_s=max(s.elapsed_s for s in summaries),
        scenarios=_scenarios(summaries),
        models=models,
        warnings=warnings,
    )


def _scenarios(summaries: list[SpeedSummary]) -> list[ScenarioRun]:
    """Each scenario once: the batch size, the fewest rounds and calls any worker ran, the longest time."""
    merged: list[ScenarioRun] = []
    for run in summaries[0].scenarios:
        runs = [r for s in summaries for r in s.scenarios if r.scenario == run.scenario]
        stops = {r.stop_reason for r in runs}
        stop: StopReason = (
            "time_budget"
            if "time_budget" in stops
            else ("target_ci_reached" if stops == {"target_ci_reached"} else "minimums_met")
        )
        merged.append(
            ScenarioRun(
                scenario=run.scenario,
                batch_size=run.batch_size,
                rounds=min(r.rounds for r in runs),
                iterations_per_block=min(r.iterations_per_block for r in runs),
                stop_reason=stop,
                elapsed_s=max(r.elapsed_s for r in runs),
                round_orders=[],
                comparisons=[],
            )
        )
    return merged
