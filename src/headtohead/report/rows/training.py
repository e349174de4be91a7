"""A training as typed rows: one per model (the report's table) or one per model and seed (``h2h train``'s)."""

from __future__ import annotations

from headtohead.report.document import Cell, Column, Row, text_cell
from headtohead.report.words.numbers import format_pp
from headtohead.results.training import TrainingSummary

__all__ = ["TRAINING_COLUMNS", "training_rows", "RUN_COLUMNS", "training_run_rows"]

TRAINING_COLUMNS = (
    Column("model", "model", "text", priority=0),
    Column("seeds", "seeds", "text", priority=2),
    Column("final_accuracy", "final accuracy", "percent", priority=0),
    Column("epochs", "epochs", "integer", priority=2),
    Column("samples_per_s", "samples/s", "rate", priority=0),
    Column("s_per_epoch", "s per epoch", "seconds", priority=1),
    Column("time_to_target_s", "time to target (s)", "seconds", priority=2),
    Column("peak_memory_mb", "peak memory (MiB)", "mib", priority=1),
    Column("data_wait", "waiting for data", "percent", priority=3),
    Column("precision", "precision", "text", priority=3),
    Column("device", "device", "text", priority=2),
)


def training_rows(training: TrainingSummary) -> list[Row]:
    """One row per model trained: seeds, final accuracy over seeds, training speed, memory.

    Speed and memory are the first seed's (every seed trains the same way); accuracy is the
    mean over seeds, its standard deviation after it, when there are several.
    """
    seed_stats = {m.model: m for m in training.multi_seed.models} if training.multi_seed is not None else {}
    rows = []
    for model in training.models:
        seeds = [r.seed for r in training.runs if r.model == model]
        first = training.run(model, seeds[0])
        accuracy = Cell(first.final_eval.get("accuracy"))
        if model in seed_stats:
            try:
                agg = seed_stats[model].metric("accuracy")
                spread = f"± {format_pp(agg.std, signed=False)} pp" if agg.std is not None else None
                accuracy = Cell(agg.mean, suffix=spread)
            except KeyError:
                pass
        cells = {
            "model": text_cell(model),
            "seeds": text_cell(", ".join(str(s) for s in seeds)),
            "final_accuracy": accuracy,
            "epochs": Cell(len(first.epochs)),
            "samples_per_s": Cell(first.samples_per_s or None),
            "s_per_epoch": Cell(first.time_per_epoch_s),
            "time_to_target_s": Cell(first.time_to_target_s),
            "peak_memory_mb": Cell(first.peak_memory_mb),
            "data_wait": Cell(first.data_wait_fraction),
            "precision": text_cell(first.precision),
            "device": text_cell(first.device + (f" × {first.world_size}" if first.world_size > 1 else "")),
        }
        rows.append(Row(cells, subject=model))
    return rows


RUN_COLUMNS = (
    Column("model", "model", "text", priority=0),
    Column("seed", "seed", "integer", priority=0),
    Column("samples_per_s", "samples/s", "rate", priority=0),
    Column("tokens_per_s", "tokens/s", "rate", priority=2),
    Column("data_wait", "waits for data", "percent", priority=2),
    Column("s_per_epoch", "s/epoch", "seconds", priority=1),
    Column("end_to_end_s", "end to end (s)", "seconds", priority=1),
    Column("time_to_target_s", "to target (s)", "seconds", priority=3),
    Column("peak_memory_mb", "peak memory (MiB)", "mib", priority=1),
    Column("memory", "memory of", "text", priority=3),
    Column("eval_accuracy", "eval accuracy", "percent", priority=0),
)


def training_run_rows(training: TrainingSummary) -> list[Row]:
    """One row per model and seed: throughput, data stalls, time, memory, final eval accuracy."""
    return [
        Row(
            {
                "model": text_cell(run.model),
                "seed": Cell(run.seed),
                "samples_per_s": Cell(run.samples_per_s or None),
                "tokens_per_s": Cell(run.tokens_per_s or None),
                "data_wait": Cell(run.data_wait_fraction),
                "s_per_epoch": Cell(run.time_per_epoch_s),
                "end_to_end_s": Cell(run.end_to_end_s),
                "time_to_target_s": Cell(run.time_to_target_s),
                "peak_memory_mb": Cell(run.peak_memory_mb),
                "memory": text_cell("CUDA" if run.cuda_max_allocated_mb is not None else "RSS"),
                "eval_accuracy": Cell(run.final_eval.get("accuracy")),
            },
            subject=run.model,
        )
        for run in training.runs
    ]
