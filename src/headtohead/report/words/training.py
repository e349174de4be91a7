"""Words about a training: the plan line, a line per epoch and per finished run, the seeds.

The tables of a training are :mod:`headtohead.report.rows.training`.
"""

from __future__ import annotations

from typing import Any

from headtohead.report.words.numbers import (
    format_duration,
    format_mib,
    format_money,
    format_p,
    format_pp,
    format_rate,
    format_share,
)
from headtohead.results.training import EpochRecord, TrainingRun, TrainingSummary

__all__ = ["training_plan_line", "epoch_line", "run_line", "seed_lines"]


def training_plan_line(n_models: int, n_seeds: int, n_train: int, n_eval: int, recipe: dict[str, Any]) -> str:
    """``Training 2 models × 1 seed(s) on 67349 examples with identical order and settings (…); evaluating on 872 examples.``"""
    length = f"{recipe['max_steps']} steps" if recipe.get("max_steps") else f"{recipe['epochs']} epochs"
    world = recipe.get("world", 1)
    parts = [
        length,
        f"batch {recipe['batch_size']}" + (f"×{world} processes" if world > 1 else ""),
        f"AdamW lr {recipe['learning_rate']:g}",
        recipe["precision"],
    ]
    if recipe.get("gradient_accumulation_steps", 1) > 1:
        parts.append(f"accumulate {recipe['gradient_accumulation_steps']}")
    return (
        f"Training {n_models} models × {n_seeds} seed(s) on {n_train} examples with identical order and settings "
        f"({', '.join(parts)}); evaluating on {n_eval} examples."
    )


def epoch_line(model: str, seed: int, total: int | None, record: EpochRecord) -> str:
    """One finished epoch: loss, eval metrics, samples/s."""
    rate = record.samples / record.train_s if record.train_s > 0 else 0.0
    metrics = (
        " · eval " + ", ".join(f"{k} {v:.3f}" for k, v in record.eval.items() if k != "balanced_accuracy")
        if record.eval
        else ""
    )
    of = f"/{total}" if total else ""
    return (
        f"  {model} (seed {seed}): epoch {record.epoch}{of} loss {record.train_loss:.4f}{metrics} · "
        f"{rate:,.0f} samples/s"
    )


def run_line(run: TrainingRun) -> str:
    """One finished training: throughput, data stalls, peak memory, scaling, wall time."""
    parts = [f"{format_rate(run.samples_per_s)} samples/s" if run.samples_per_s else "samples/s not measured"]
    if run.tokens_per_s:
        parts.append(f"{format_rate(run.tokens_per_s)} tokens/s")
    if run.data_wait_fraction is not None:
        parts.append(f"waits for data {format_share(run.data_wait_fraction, 0)}")
    parts.append(
        f"peak {'CUDA' if run.cuda_max_allocated_mb is not None else 'RSS'} {format_mib(run.peak_memory_mb)} MiB"
    )
    if run.scaling is not None:
        parts.append(f"{run.world_size} processes, scaling efficiency {format_share(run.scaling.efficiency, 0)}")
    if run.cost is not None and run.cost.energy_j is not None:
        parts.append(f"{format_money(run.cost.energy_j / 1e3)} kJ ({run.cost.energy_source})")
    if run.cost is not None and run.cost.cost is not None:
        parts.append(f"cost {format_money(run.cost.cost)} at {format_money(run.cost.price_per_hour or 0.0)}/h")
    resumed = f", resumed after epoch {run.resumed_from_epoch}" if run.resumed_from_epoch else ""
    return (
        f"  {run.model} (seed {run.seed}): {' · '.join(parts)}; {format_duration(run.end_to_end_s)} end to end{resumed}"
    )


def seed_lines(summary: TrainingSummary) -> list[str]:
    """Across seeds: each model's mean ± std accuracy, then each pair's test."""
    if summary.multi_seed is None:
        return []
    lines = [f"Across seeds {', '.join(map(str, summary.seeds))}:"]
    for model in summary.multi_seed.models:
        acc = model.metric("accuracy")
        spread = f" ± {format_pp(acc.std, signed=False)} pp" if acc.std is not None else ""
        lines.append(f"  {model.model}: accuracy {format_share(acc.mean)}{spread} (n = {acc.n_seeds})")
    for comp in summary.multi_seed.comparisons:
        p = f"p {format_p(comp.p_value)}" if comp.p_value is not None else (comp.note or "no test")
        lines.append(
            f"  {comp.model_a} − {comp.model_b}: {format_pp(comp.mean_difference)} pp accuracy ({comp.test}, {p})"
        )
    return lines
