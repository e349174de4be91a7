"""A model measured several ways, in the records: how a pass is named, and a model's figures over its passes.

A model asked with several prompts (or stored prediction files given as its passes) is one model
with a passes axis: ``ModelRecord.passes`` and ``ModelStats.passes`` hold each pass's own figures,
``predictions.npz`` its predictions along a leading axis. Its figures as a model are the means
over its passes (its score is never its best pass, chosen after seeing the examples), without an
interval: the comparisons pooled over its passes carry one (:mod:`headtohead.stats.passes`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from headtohead.results.answers import answers_of_version_6
from headtohead.results.comparison import ModelStats
from headtohead.results.estimates import Estimate

__all__ = ["pass_label", "MEAN_OVER_PASSES", "mean_over_passes", "passes_of_version_6"]

#: The method of a figure that is the mean over a model's passes (no interval of its own).
MEAN_OVER_PASSES = "mean over passes"


def pass_label(model: str, key: str) -> str:
    """How a pass is named where it is shown on its own: ``llm@p2`` (a pass, never a model of the run).

    Examples
    --------
    >>> pass_label("llm", "p2")
    'llm@p2'
    """
    return f"{model}@{key}"


def _mean(estimates: Sequence[Estimate | None], note: str) -> Estimate | None:
    """The mean of the passes' estimates, without an interval (``None`` when a pass has none)."""
    if not estimates or any(e is None for e in estimates):
        return None
    values = [e.value for e in estimates if e is not None]
    confidence = next(e.confidence for e in estimates if e is not None)
    return Estimate(
        value=float(np.mean(values)), low=None, high=None, method=MEAN_OVER_PASSES, confidence=confidence, note=note
    )


def mean_over_passes(name: str, passes: Sequence[ModelStats]) -> ModelStats:
    """Model ``name``'s statistics as the mean of its passes', each pass's own kept in ``passes``.

    Every figure is the mean over the passes (``method`` ``"mean over passes"``, no interval); a
    figure some pass lacks (calibration without probabilities) is left out; the failures are summed
    over the passes. The reliability diagram and the answered-only accuracy are each pass's own.

    Examples
    --------
    >>> e = lambda v: Estimate(value=v, low=v - 0.1, high=v + 0.1, method="wilson")
    >>> one = [ModelStats(name=f"llm@p{k}", n_examples=10, accuracy=e(a), balanced_accuracy=e(a),
    ...                   f1_macro=e(a), f1_weighted=e(a)) for k, a in ((1, 0.5), (2, 0.7))]
    >>> pooled = mean_over_passes("llm", one)
    >>> round(pooled.accuracy.value, 3), pooled.accuracy.low, [p.name for p in pooled.passes]
    (0.6, None, ['llm@p1', 'llm@p2'])
    """
    note = f"the mean over {len(passes)} passes; the comparisons pooled over them carry an interval"

    def mean(field: str) -> Estimate | None:
        return _mean([getattr(p, field) for p in passes], note)

    classes = [dict(p.recall_per_class) for p in passes]
    recall = {c: e for c in classes[0] if (e := _mean([r.get(c) for r in classes], note)) is not None}
    picked = [dict(p.metrics) for p in passes]
    metrics = {m: e for m in picked[0] if (e := _mean([r.get(m) for r in picked], note)) is not None}
    required = {f: mean(f) for f in ("accuracy", "balanced_accuracy", "f1_macro", "f1_weighted")}
    return ModelStats(
        name=name,
        n_examples=passes[0].n_examples,
        n_failed=sum(p.n_failed for p in passes),
        **required,  # type: ignore[arg-type]  # every pass has these
        recall_per_class=recall,
        ece=mean("ece"),
        brier=mean("brier"),
        nll=mean("nll"),
        metrics=metrics,
        passes=list(passes),
    )


def passes_of_version_6(raw: dict[str, Any]) -> dict[str, Any]:
    """A ``results.json`` of schema version 6, whose model asked with several prompts was a model per prompt
    (``llm@p1`` …, each an entry of the experiment with its ``variant``), as one model with its passes.

    Each pass keeps its figures, its template as written (version 6 stored no rendered one) and the words
    ``stats.prompts`` gave it; the model's statistics are the means over its passes (:func:`mean_over_passes`);
    ``stats.prompts``, the slices (each pass's accuracy, named ``llm@p1``) and the speed entries stay as written.
    Files without such a model are returned as they are.
    """
    experiment = raw.get("experiment")
    entries = (
        [e for e in (experiment or {}).get("models", []) if isinstance(e, dict)] if isinstance(experiment, dict) else []
    )
    of = {e["name"]: (e["variant"]["of"], int(e["variant"]["index"])) for e in entries if e.get("variant")}
    if not of:
        return raw
    raw = copy.deepcopy(raw)
    stats = raw.get("stats") if isinstance(raw.get("stats"), dict) else None
    words = {
        p["model"]: p["prompt"]
        for family in ((stats or {}).get("prompts") or {}).get("families", [])
        for p in family["prompts"]
    }
    templates = {e["name"]: e.get("prompt") for e in entries}
    raw["experiment"]["models"] = _folded(entries, of, lambda name, e: e, _experiment_entry)
    raw["models"] = _folded(raw["models"], of, lambda name, m: _pass(m, of[name][1], templates, words), _record)
    if stats is not None:
        raw["stats"]["models"] = _folded(stats["models"], of, lambda name, m: m, _model_stats)
    missing = raw.get("missing")
    if isinstance(missing, dict) and isinstance(missing.get("models"), dict):
        counts: dict[str, int] = {}
        for name, n in missing["models"].items():
            model = of.get(name, (name, 0))[0]
            counts[model] = max(counts.get(model, 0), int(n))  # examples some pass missed: at least its most
        raw["missing"]["models"] = counts
    return raw


def _folded(
    items: Sequence[dict[str, Any]],
    of: dict[str, tuple[str, int]],
    each: Callable[[str, dict[str, Any]], dict[str, Any]],
    joined: Callable[[str, list[dict[str, Any]], list[dict[str, Any]]], dict[str, Any]],
) -> list[dict[str, Any]]:
    """``items`` (named ``name``) with the passes of each model joined into one, where its first pass was."""
    groups: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    out: list[Any] = []
    for item in items:
        name = item["name"]
        if name not in of:
            out.append(item)
            continue
        model = of[name][0]
        if model not in groups:
            groups[model] = []
            out.append(model)  # its place: filled once every pass is in
        groups[model].append((item, each(name, item)))
    return [joined(m, [i for i, _ in groups[m]], [p for _, p in groups[m]]) if isinstance(m, str) else m for m in out]


def _pass(record: dict[str, Any], index: int, templates: dict[str, Any], words: dict[str, str]) -> dict[str, Any]:
    name = record["name"]
    return {
        "key": f"p{index}",
        "factor": "prompt",
        "varies": words.get(name, f"prompt {index}"),
        "template": templates.get(name),
        "load_time_s": record["load_time_s"],
        "eval_time_s": record.get("eval_time_s"),
        "quality": record.get("quality"),
        "warnings": record.get("warnings", []),
        "batch_backoff": record.get("batch_backoff", []),
        "answers": answers_of_version_6(ep) if isinstance(ep := record.get("endpoint"), dict) else None,
    }


def _record(model: str, records: list[dict[str, Any]], passes: list[dict[str, Any]]) -> dict[str, Any]:
    """The model's record from its passes' (version 6 kept no requests added up: ``answers`` stay per pass)."""
    times = [p["eval_time_s"] for p in passes]
    return {
        **{k: v for k, v in records[0].items() if k != "endpoint"},  # version 6's name of the answers record
        "name": model,
        "quality": None,
        "warnings": [],
        "batch_backoff": [],
        "answers": None,
        "load_time_s": sum(p["load_time_s"] for p in passes),
        "eval_time_s": None if any(t is None for t in times) else sum(times),
        "passes": passes,
    }


def _model_stats(model: str, stats: list[dict[str, Any]], passes: list[dict[str, Any]]) -> dict[str, Any]:
    return mean_over_passes(model, [ModelStats.model_validate(s) for s in stats]).model_dump(mode="json")


def _experiment_entry(model: str, entries: list[dict[str, Any]], passes: list[dict[str, Any]]) -> dict[str, Any]:
    """The model's entry as written: its first pass's keys, its templates as a list under ``prompts``."""
    first = {k: v for k, v in entries[0].items() if k not in ("variant", "prompt")}
    return {**first, "name": model, "prompts": [e.get("prompt") for e in entries]}
