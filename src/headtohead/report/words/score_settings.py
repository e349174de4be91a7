"""The words of runs that differ in a setting known to move scores: one warning per field, one note for the rest.

The differences are found by :func:`headtohead.results.score_settings.setting_differences`; this
module only words them, the same way wherever runs are compared (``h2h report`` with several
results, ``h2h machines``, a suite over finished runs, the gate across two results files)::

    batch_size differs: a 8, b 32 — the batch size is known to move scores
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from headtohead.errors import listing
from headtohead.report.words.numbers import format_number
from headtohead.results.environment import SOFTWARE_VERSIONS
from headtohead.results.score_settings import SettingDifference, Value

__all__ = ["FIELD_WORDS", "setting_warning", "setting_warnings", "unchecked_note"]

#: Each field in words, as the reason a difference matters names it.
FIELD_WORDS: dict[str, str] = {
    "batch_size": "the batch size",
    "dtype": "the numeric precision",
    "device": "the device",
    "max_length": "the truncation length",
    "temperature": "the sampling temperature",
    "top_p": "top_p",
    "seed": "the sampling seed",
    "prompt": "the prompt",
    "llm_backend": "the LLM backend",
    "run_seed": "the experiment's seed",
    **{field: f"the {name} version" for field, name in SOFTWARE_VERSIONS.items()},
    "data": "the data",
}
#: A field's name where it is named first: what the record calls it (a library by its own name).
_SHOWN: dict[str, str] = {
    "run_seed": "seed",
    "data": "data fingerprint",
    **{field: f"{name} version" for field, name in SOFTWARE_VERSIONS.items()},
}
# characters of a prompt shown before its hash
_PROMPT_SHOWN = 32


def _prompt_text(value: str) -> str:
    """A prompt as a reader tells it apart: its first words and a short hash of all of it."""
    try:
        asked = json.loads(value)
    except ValueError:
        asked = value
    if isinstance(asked, dict):
        asked = asked.get("prompt", value)
    if isinstance(asked, list):
        asked = asked[0] if asked else ""
    text = " ".join(str(asked).split())
    short = text if len(text) <= _PROMPT_SHOWN else text[: _PROMPT_SHOWN - 1] + "…"
    digest = hashlib.sha256(value.encode()).hexdigest()[:6]
    return f"'{short}' (#{digest})"


def _value_text(field: str, value: Value) -> str:
    if field == "prompt" and isinstance(value, str):
        return _prompt_text(value)
    if field == "data" and isinstance(value, str):
        return value[:12]
    if isinstance(value, bool) or value is None or isinstance(value, str) or field in ("seed", "run_seed"):
        return str(value)
    if isinstance(value, int):
        return format_number(value, "integer")
    return format_number(value, "score")


def _values_text(difference: SettingDifference) -> str:
    """``a 8, b 32``; runs of one value named together (``a, c 8; b 32``)."""
    by_value: dict[str, list[str]] = {}
    for label, value in difference.values:
        by_value.setdefault(_value_text(difference.field, value), []).append(label)
    parts = [f"{', '.join(labels)} {text}" for text, labels in by_value.items()]
    return ("; " if any(len(labels) > 1 for labels in by_value.values()) else ", ").join(parts)


def _and(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c`` (ten named at most: :func:`headtohead.errors.listing`)."""
    if len(names) < 2 or len(names) > 10:
        return listing(list(names))
    return f"{', '.join(names[:-1])} and {names[-1]}"


def _subject(difference: SettingDifference) -> str:
    name = _SHOWN.get(difference.field, difference.field)
    return f"{name} of {_and(difference.models)}" if difference.models else name


def setting_warning(difference: SettingDifference) -> str:
    """One difference in one line.

    Examples
    --------
    >>> setting_warning(SettingDifference("batch_size", "differs", (("a", 8), ("b", 32))))
    'batch_size differs: a 8, b 32 — the batch size is known to move scores'
    >>> setting_warning(SettingDifference("torch", "differs", (("a", "2.14.1"), ("b", "2.3.0")), models=()))
    'torch version differs: a 2.14.1, b 2.3.0 — the torch version is known to move scores'
    """
    reason = FIELD_WORDS.get(difference.field, difference.field)
    if difference.field == "data":
        why = "scores on different data are not comparable"
    else:
        why = f"{reason} is known to move scores"
    return f"{_subject(difference)} differs: {_values_text(difference)} — {why}"


def setting_warnings(differences: Sequence[SettingDifference]) -> list[str]:
    """A warning per field that differs (the fields that could not be checked are :func:`unchecked_note`'s)."""
    return [setting_warning(d) for d in differences if d.kind == "differs"]


def unchecked_note(differences: Sequence[SettingDifference]) -> str | None:
    """One note naming every field some run did not record, so that it could not be checked (``None``: none).

    Examples
    --------
    >>> unchecked_note([SettingDifference("onnxruntime", "unknown", (("b", "1.20.1"),), ("a",))])
    'not recorded in every run, so not checked: onnxruntime version (unknown in a)'
    """
    unknown = [d for d in differences if d.kind == "unknown"]
    if not unknown:
        return None
    parts = [f"{_subject(d)} (unknown in {_and(d.unknown)})" for d in unknown]
    return "not recorded in every run, so not checked: " + "; ".join(parts)
