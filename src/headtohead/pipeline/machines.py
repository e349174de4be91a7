"""``h2h machines``: training speed of the same models measured on different machines.

Each input is what ``h2h train`` wrote on one machine — a ``results.json`` (its training
record is in it, or in the ``training.json`` beside it), a ``training.json``, or the run
folder. :func:`compare_machines` builds a models × machines table of samples/s, time per
epoch, time to the target metric and peak memory, each normalised to a baseline machine,
and says when the comparison is not like with like: a setting known to move scores that differs
(a warning each: the batch size, the precision, a library's version, the training data —
:func:`headtohead.results.score_settings.setting_differences`), other CUDA or driver versions, other
training settings, a model that waited for its data.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

from headtohead.errors import ConfigError, ResultsError, did_you_mean
from headtohead.report.words.score_settings import setting_warnings, unchecked_note
from headtohead.results.environment import software_versions
from headtohead.results.files import TRAINING_FILE
from headtohead.results.records import SCHEMA_VERSION, Environment
from headtohead.results.score_settings import SCORE_FIELDS, setting_differences, training_settings
from headtohead.results.training import MachineCell, MachineComparison, MachineInfo, TrainingRun, TrainingSummary
from headtohead.results.training_file import load_training_result

__all__ = ["compare_machines", "load_training", "machine_label", "parse_prices", "SETTING_KEYS"]

#: Training settings that change what a samples/s figure means.
SETTING_KEYS: tuple[str, ...] = (
    "batch_size",
    "precision",
    "gradient_accumulation_steps",
    "gradient_checkpointing",
    "compile",
    "num_workers",
    "epochs",
    "max_steps",
    "nproc",
)
_GPU_ONLY = ("cuda", "driver")
# the training settings :func:`training_settings` reads: each is a score warning of its own
_SCORE_SETTINGS = ("batch_size", "precision")


def load_training(path: str | Path) -> tuple[Environment, TrainingSummary, str]:
    """Read the environment and training summary of one ``h2h train`` output.

    Parameters
    ----------
    path : str or Path
        ``results.json``, ``training.json`` or the run folder.

    Returns
    -------
    (Environment, TrainingSummary, str)
        And the file actually read.

    Raises
    ------
    ResultsError
        Missing or invalid file, or a results file without a training record.
    """
    environment, training, file, _ = _load_training(path)
    return environment, training, file


def _load_training(path: str | Path) -> tuple[Environment, TrainingSummary, str, int]:
    """:func:`load_training`, and the ``results.json`` schema version its environment record matches."""
    path = Path(path)
    if path.is_dir():
        path = path / TRAINING_FILE
    if path.name != TRAINING_FILE:
        from headtohead.results.io import load_result

        result = load_result(path)
        training = getattr(result, "training", None)
        if training is not None:
            return result.environment, training, str(path), result.schema_version
        sibling = path.with_name(TRAINING_FILE)
        if not sibling.is_file():
            raise ResultsError(
                f"{path}: no training record (neither in the file nor a training.json beside it); "
                f"compare the outputs of h2h train"
            )
        path = sibling
    record = load_training_result(path)
    # training.json 2 records what results.json 8 does of the environment; version 1 what 7 did
    version = SCHEMA_VERSION if record.schema_version >= 2 else 7
    return record.environment, record.training, str(path), version


def machine_label(env: Environment) -> str:
    """What tells machines apart in the table: the GPUs (``NVIDIA A100 ×4``) or, without one, the CPU model."""
    if env.gpus:
        names = [g.name for g in env.gpus]
        first = names[0]
        return f"{first} ×{len(names)}" if names.count(first) == len(names) and len(names) > 1 else " + ".join(names)
    return env.cpu_model


def _unique_labels(envs: Sequence[Environment], paths: Sequence[str], labels: Sequence[str] | None) -> list[str]:
    if labels is not None:
        if len(labels) != len(paths) or len(set(labels)) != len(labels):
            raise ConfigError(f"give one distinct label per results file ({len(paths)} files, labels {list(labels)})")
        return list(labels)
    chosen = [machine_label(env) for env in envs]
    # The same hardware twice: tell the runs apart by host name, then by their folder.
    for suffixes in ([f" @ {env.hostname}" for env in envs], [f" ({Path(path).parent.name})" for path in paths]):
        twins = {label for label in chosen if chosen.count(label) > 1}
        chosen = [label + suffixes[i] if label in twins else label for i, label in enumerate(chosen)]
    return chosen


def _cell(model: str, machine: str, runs: Sequence[TrainingRun]) -> MachineCell:
    """One model on one machine; several seeds are averaged (peak memory: the largest)."""

    def mean(values: list[float | None]) -> float | None:
        present = [v for v in values if v is not None]
        return fmean(present) if present else None

    gpu = any(r.cuda_max_allocated_mb is not None for r in runs)
    scaling = [r.scaling.efficiency for r in runs if r.scaling is not None]
    energy = [
        r.cost.energy_j / len(r.epochs) if r.cost is not None and r.cost.energy_j is not None and r.epochs else None
        for r in runs
    ]
    return MachineCell(
        model=model,
        machine=machine,
        samples_per_s=mean([r.samples_per_s for r in runs]),
        tokens_per_s=mean([r.tokens_per_s for r in runs]),
        time_per_epoch_s=mean([r.time_per_epoch_s for r in runs]),
        time_to_target_s=mean([r.time_to_target_s for r in runs]),
        peak_memory_mb=max(r.peak_memory_mb for r in runs),
        memory_kind="cuda" if gpu else "rss",
        data_wait_fraction=mean([r.data_wait_fraction for r in runs]),
        world_size=runs[0].world_size,
        scaling_efficiency=fmean(scaling) if scaling else None,
        end_to_end_s=mean([r.end_to_end_s for r in runs]),
        energy_per_epoch_j=mean(energy),
    )


def parse_prices(items: Sequence[str]) -> dict[str, float]:
    """``["A100=3.67", "2=1.10"]`` → ``{"A100": 3.67, "2": 1.1}`` (a machine's label or 1-based position).

    Raises
    ------
    ConfigError
        An item without ``=``, a price that is not a number, or one ≤ 0.
    """
    prices: dict[str, float] = {}
    for item in items:
        label, sep, value = item.rpartition("=")
        try:
            price = float(value)
        except ValueError:
            price = float("nan")
        if not sep or not label or not price > 0:
            raise ConfigError(
                f"--price '{item}': give LABEL=PRICE_PER_HOUR with a price above 0, e.g. "
                f"--price 'NVIDIA A100=3.67' (LABEL: a machine's label or its position 1, 2 …)"
            )
        prices[label] = price
    return prices


def _priced(cell: MachineCell, price: float | None) -> dict[str, Any]:
    def cost(seconds: float | None) -> float | None:
        return price * seconds / 3600.0 if price is not None and seconds is not None else None

    return {
        "price_per_hour": price,
        "cost_per_epoch": cost(cell.time_per_epoch_s),
        "cost_to_target": cost(cell.time_to_target_s),
        "cost_end_to_end": cost(cell.end_to_end_s),
    }


def _machine_prices(prices: Mapping[str, float], names: list[str]) -> dict[str, float]:
    out = {}
    for key, price in prices.items():
        if key in names:
            out[key] = price
        elif key.isdigit() and 1 <= int(key) <= len(names):
            out[names[int(key) - 1]] = price
        else:
            raise ConfigError(
                f"--price '{key}={price:g}': '{key}' is not one of the machines"
                f"{did_you_mean(key, names)} (machines: {'; '.join(names)}; or a position "
                f"1..{len(names)}; name them with --label)"
            )
    return out


def _ratio(value: float | None, base: float | None) -> float | None:
    return value / base if value is not None and base else None


def _differences(values: Mapping[str, Mapping[str, Any]], keys: Sequence[str]) -> list[str]:
    """``key: a (m1) vs b (m2)`` for each key whose value is not the same on every machine."""
    out = []
    for key in keys:
        seen = {machine: entry.get(key) for machine, entry in values.items()}
        if key in _GPU_ONLY:  # a CPU-only machine has no CUDA or driver version to differ in
            seen = {m: v for m, v in seen.items() if v is not None}
        if len({json.dumps(v, sort_keys=True) for v in seen.values()}) > 1:
            out.append(f"{key} " + " vs ".join(f"{v} ({m})" for m, v in seen.items()))
    return out


def compare_machines(
    paths: Sequence[str | Path],
    *,
    baseline: str | None = None,
    labels: Sequence[str] | None = None,
    prices: Mapping[str, float] | None = None,
) -> MachineComparison:
    """Build the models × machines table from ``h2h train`` outputs made on different machines.

    Parameters
    ----------
    paths : sequence of str or Path
        One output per machine (``results.json``, ``training.json`` or the run folder).
    baseline : str, optional
        The machine every ratio is relative to: its label, its 1-based position, or its
        path. Default: the first.
    labels : sequence of str, optional
        Names for the machines, in ``paths`` order (default: GPU or CPU model).
    prices : mapping of str to float, optional
        Price per hour of each machine (by label or 1-based position): cost per epoch, to the
        target and of the whole fine-tune (:func:`parse_prices` reads ``--price`` options).

    Returns
    -------
    MachineComparison
        ``speedup_vs_baseline`` is samples/s ÷ the baseline's (above 1: faster);
        ``epoch_time_vs_baseline`` is time per epoch ÷ the baseline's (below 1: faster).

    Raises
    ------
    H2HError
        Fewer than two files, unreadable files, or an unknown baseline.
    """
    if len(paths) < 2:
        raise ConfigError(f"h2h machines needs results from at least two machines, got {len(paths)} file(s)")
    read = [_load_training(p) for p in paths]
    loaded = [(env, summary, file) for env, summary, file, _ in read]
    names = _unique_labels([env for env, _, _ in loaded], [f for _, _, f in loaded], labels)
    base = _pick_baseline(baseline, names, [str(p) for p in paths])
    priced = _machine_prices(prices or {}, names)
    machines = [
        MachineInfo(
            label=name, path=file, hostname=env.hostname, hardware=machine_label(env), software=software_versions(env)
        )
        for name, (env, _, file) in zip(names, loaded, strict=True)
    ]
    models = list(dict.fromkeys(m for _, summary, _ in loaded for m in summary.models))
    raw_cells = {
        (model, name): _cell(model, name, [r for r in summary.runs if r.model == model])
        for name, (_, summary, _) in zip(names, loaded, strict=True)
        for model in summary.models
    }
    raw_cells = {key: cell.model_copy(update=_priced(cell, priced.get(key[1]))) for key, cell in raw_cells.items()}
    cells = []
    for (model, _), cell in raw_cells.items():
        ref = raw_cells.get((model, base))
        cells.append(
            cell.model_copy(
                update={
                    "speedup_vs_baseline": _ratio(cell.samples_per_s, ref.samples_per_s if ref else None),
                    "epoch_time_vs_baseline": _ratio(cell.time_per_epoch_s, ref.time_per_epoch_s if ref else None),
                    "cost_vs_baseline": _ratio(cell.cost_per_epoch, ref.cost_per_epoch if ref else None),
                }
            )
        )
    score = setting_differences(
        [
            training_settings(name, env, summary.settings, summary.train_fingerprint, schema_version=version)
            for name, (env, summary, _, version) in zip(names, read, strict=True)
        ],
        ignore=("device",),  # the machines are what is compared
    )
    note = unchecked_note(score)
    warnings = setting_warnings(score) + _warnings(names, loaded, models, cells) + ([note] if note else [])
    return MachineComparison(baseline=base, machines=machines, models=models, cells=cells, warnings=warnings)


def _pick_baseline(baseline: str | None, names: list[str], paths: list[str]) -> str:
    if baseline is None:
        return names[0]
    if baseline in names:
        return baseline
    if baseline.isdigit() and 1 <= int(baseline) <= len(names):
        return names[int(baseline) - 1]
    for name, path in zip(names, paths, strict=True):
        if Path(baseline).resolve() == Path(path).resolve():
            return name
    raise ConfigError(
        f"--baseline '{baseline}' is not one of the machines{did_you_mean(baseline, names)} "
        f"(machines: {'; '.join(names)}; or give a position 1..{len(names)})"
    )


def _warnings(
    names: list[str],
    loaded: list[tuple[Environment, TrainingSummary, str]],
    models: list[str],
    cells: list[MachineCell],
) -> list[str]:
    """The warnings of what differs beyond the settings known to move scores (those are each a warning of their own)."""
    warnings = []
    versions = {n: software_versions(env) for n, (env, _, _) in zip(names, loaded, strict=True)}
    software = _differences(versions, [k for k in next(iter(versions.values())) if k not in SCORE_FIELDS])
    if software:
        warnings.append(
            "software versions differ between machines: "
            + "; ".join(software)
            + " — part of a speed difference may come from the software, not the hardware"
        )
    settings = _differences(
        {n: s.settings for n, (_, s, _) in zip(names, loaded, strict=True)},
        [k for k in SETTING_KEYS if k not in _SCORE_SETTINGS],
    )
    if settings:
        warnings.append(
            "training settings differ between machines: "
            + "; ".join(settings)
            + " — samples/s are only comparable with the same settings"
        )
    for model in models:
        missing = [n for n, (_, s, _) in zip(names, loaded, strict=True) if model not in s.models]
        if missing:
            warnings.append(f"model '{model}' was not trained on {', '.join(missing)}")
    threshold = {n: float(s.settings.get("stall_warning", 0.2)) for n, (_, s, _) in zip(names, loaded, strict=True)}
    for cell in cells:
        if cell.data_wait_fraction is not None and cell.data_wait_fraction > threshold[cell.machine]:
            warnings.append(
                f"on {cell.machine}, model '{cell.model}' waits for data "
                f"{cell.data_wait_fraction * 100:.0f} % of the time: its samples/s measure the input "
                f"pipeline more than the hardware (raise train.num_workers there)"
            )
    return warnings
