"""Words about a training: the plan line, a line per epoch and per finished run, the table, the seeds."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from headtohead.results.training import EpochRecord, TrainingRun, TrainingSummary

__all__ = ["training_plan_line", "epoch_line", "run_line", "training_table", "seed_lines"]


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
    parts = [f"{run.samples_per_s:,.1f} samples/s" if run.samples_per_s else "samples/s n/a"]
    if run.tokens_per_s:
        parts.append(f"{run.tokens_per_s:,.0f} tokens/s")
    if run.data_wait_fraction is not None:
        parts.append(f"waits for data {run.data_wait_fraction * 100:.0f} %")
    parts.append(f"peak {'CUDA' if run.cuda_max_allocated_mb is not None else 'RSS'} {run.peak_memory_mb:,.0f} MiB")
    if run.scaling is not None:
        parts.append(f"{run.world_size} processes, scaling efficiency {run.scaling.efficiency * 100:.0f} %")
    if run.cost is not None and run.cost.energy_j is not None:
        parts.append(f"{run.cost.energy_j / 1e3:,.3g} kJ ({run.cost.energy_source})")
    if run.cost is not None and run.cost.cost is not None:
        parts.append(f"cost {run.cost.cost:.3g} at {run.cost.price_per_hour:g}/h")
    resumed = f", resumed after epoch {run.resumed_from_epoch}" if run.resumed_from_epoch else ""
    return f"  {run.model} (seed {run.seed}): {' · '.join(parts)}; {run.end_to_end_s:.1f} s end to end{resumed}"


def training_table(summary: TrainingSummary) -> Table:
    """One row per model and seed: throughput, data stalls, time, memory, final eval accuracy."""
    table = Table(title="Training (identical order and settings)", title_justify="left")
    for column in (
        "model",
        "seed",
        "samples/s",
        "tokens/s",
        "waits for data",
        "s/epoch",
        "end to end",
        "to target",
        "peak memory",
        "eval accuracy",
    ):
        table.add_column(column, justify="left" if column == "model" else "right")
    for run in summary.runs:
        memory = f"{run.peak_memory_mb:,.0f} MiB {'CUDA' if run.cuda_max_allocated_mb is not None else 'RSS'}"
        table.add_row(
            run.model,
            str(run.seed),
            _num(run.samples_per_s, "{:,.1f}"),
            _num(run.tokens_per_s, "{:,.0f}"),
            _num(run.data_wait_fraction, "{:.0%}"),
            _num(run.time_per_epoch_s, "{:.1f} s"),
            f"{run.end_to_end_s:.1f} s",
            _num(run.time_to_target_s, "{:.1f} s"),
            memory,
            _num(run.final_eval.get("accuracy"), "{:.3f}"),
        )
    return table


def _num(value: float | None, fmt: str) -> str:
    return "–" if value is None else fmt.format(value)


def seed_lines(summary: TrainingSummary) -> list[str]:
    """Across seeds: each model's mean ± std accuracy, then each pair's test."""
    if summary.multi_seed is None:
        return []
    lines = [f"Across seeds {summary.seeds}:"]
    for model in summary.multi_seed.models:
        acc = model.metric("accuracy")
        spread = f" ± {acc.std:.3f}" if acc.std is not None else ""
        lines.append(f"  {model.model}: accuracy {acc.mean:.3f}{spread} (n = {acc.n_seeds})")
    for comp in summary.multi_seed.comparisons:
        p = f"p = {comp.p_value:.3g}" if comp.p_value is not None else (comp.note or "no test")
        lines.append(f"  {comp.model_a} − {comp.model_b}: {comp.mean_difference:+.3f} accuracy ({comp.test}, {p})")
    return lines
