"""An Inspect evaluation log as a model (``kind: inspect``), read with Inspect's own reader (``inspect_ai.log``).

Every sample of every epoch is one item: right where its score says so (``C``, ``True``, ``1``),
wrong where it says ``I``, ``False`` or ``0``; a sample that ended in an error, was refused
(``stop_reason: content_filter``), got no answer (``N``) or an answer its scorer could not read
(``invalid_response_format``: a reply without ``ANSWER:``) is a failure, a wrong answer counted
as such, its answer listed in the report. With several epochs the items of one sample form one group (``sample``): the tests then
take the sample, not the epoch, as the independent unit. See ``docs/harnesses.md``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from headtohead.adapters.logged import LoggedAdapter
from headtohead.config.models.inspect_log import InspectSettings
from headtohead.config.schema import ModelConfig
from headtohead.data.logged import UNPARSEABLE, LoggedRun
from headtohead.errors import ModelError, did_you_mean, listing

__all__ = ["InspectAdapter"]

#: Inspect's score values (inspect_ai.scorer: CORRECT, INCORRECT, NOANSWER, PARTIAL).
_RIGHT, _WRONG, _NO_ANSWER = ("C", True), ("I", False), ("N",)
#: Inspect's score reasons (``inspect_ai.scorer.ScoreReason``) for an answer the scorer could not read.
_UNREADABLE = ("invalid_response_format",)
#: The column grouping the epochs of one sample.
SAMPLE_COLUMN = "sample"


class InspectAdapter(LoggedAdapter):
    """An Inspect log: each sample's score in every epoch; errors, refusals and no answer are failures."""

    kind: ClassVar[str] = "inspect"

    @classmethod
    def read_log(cls, config: ModelConfig, path: Path) -> LoggedRun:
        assert isinstance(config, InspectSettings)
        from inspect_ai.log import read_eval_log

        where = f"model '{config.name}' (kind inspect)"
        try:
            log = read_eval_log(str(path))
        except Exception as exc:  # noqa: BLE001 - any reader error is "not an Inspect log", said in one line
            raise ModelError(
                f"{where}: {path} is not an Inspect log Inspect can read ({type(exc).__name__}: {exc})"
            ) from None
        samples = list(log.samples or [])
        if not samples:
            raise ModelError(f"{where}: {path} holds no sample (a log written with --no-log-samples has none)")
        scorer = _scorer(config.scorer, log, samples, where)
        epochs = max(int(s.epoch) for s in samples)
        items = [_item(sample, scorer, where) for sample in samples]
        fields = _metadata_fields(samples)
        warnings = [] if log.status == "success" else [f"{where}: the log's evaluation ended '{log.status}'"]
        return LoggedRun(
            source=str(path),
            ids=tuple(str(s.id) if epochs == 1 else f"{s.id}#{s.epoch}" for s in samples),
            texts=tuple(i["text"] for i in items),
            keys=tuple(i["key"] for i in items),
            n_choices=np.array([i["n_choices"] for i in items], dtype=np.int64),
            gold=np.array([i["gold"] for i in items], dtype=np.int64),
            correct=np.array([i["correct"] for i in items], dtype=bool),
            failed=np.array([i["failed"] for i in items], dtype=bool),
            chosen=np.array([i["chosen"] for i in items], dtype=np.int64),
            choices=tuple(tuple(str(c) for c in (s.choices or [])) for s in samples),
            columns={name: tuple(s.metadata.get(name) for s in samples) for name in fields},
            groups=tuple(str(s.id) for s in samples) if epochs > 1 else None,
            group_column=SAMPLE_COLUMN if epochs > 1 else None,
            warnings=tuple(warnings),
            model=str(log.eval.model),
            answers=tuple(i["answer"] for i in items),
            failures=tuple(i["failure"] for i in items),
            files=(str(path.resolve()),),
        )


def _scorer(asked: str | None, log: Any, samples: list[Any], where: str) -> str:
    """The scorer read: the one asked for, else the log's first (its primary, as Inspect lists them)."""
    offered = list(dict.fromkeys(name for s in samples for name in (s.scores or {})))
    if log.results is not None:
        offered = list(dict.fromkeys([*(score.scorer for score in log.results.scores), *offered]))
    if not offered:
        raise ModelError(f"{where}: no sample of the log was scored; score it first (inspect score)")
    if asked is None:
        return str(offered[0])
    if asked not in offered:
        raise ModelError(
            f"{where}: no scorer '{asked}' in the log{did_you_mean(asked, offered)} (scorers: {listing(offered)})"
        )
    return asked


def _item(sample: Any, scorer: str, where: str) -> dict[str, Any]:
    """One sample in one epoch: its text, gold, right or wrong, failed, and the choice it took."""
    text = sample.input if isinstance(sample.input, str) else "\n".join(m.text for m in sample.input)
    target = sample.target if isinstance(sample.target, str) else ", ".join(sample.target)
    choices = list(sample.choices or [])
    gold = _letter(target, len(choices))
    score = (sample.scores or {}).get(scorer)
    answer = sample.output.completion if sample.output is not None and sample.output.choices else None
    item = {"text": text, "key": _key(text, target), "n_choices": len(choices) if gold >= 0 else 0, "gold": gold}
    failure = _failure(sample, score)
    if failure is not None:
        kept = answer if failure == UNPARSEABLE else None  # a refusal's or an error's text is no answer
        return {**item, "correct": False, "failed": True, "chosen": -1, "answer": kept, "failure": failure}
    assert score is not None  # an unscored sample is a failure (_failure)
    correct = _right(score.value, sample, scorer, where)
    chosen = -1 if gold < 0 else _letter(str(score.answer or ""), len(choices))
    return {**item, "correct": correct, "failed": False, "chosen": chosen, "answer": answer, "failure": None}


def _failure(sample: Any, score: Any) -> str | None:
    """Why a sample is the model's failure, ``None`` when it answered: an error, a refusal, no answer, or an answer
    the scorer could not read (Inspect's ``invalid_response_format``: a reply without ``ANSWER:``)."""
    if sample.error is not None:
        return f"error: {str(sample.error.message).splitlines()[0][:200]}" if sample.error.message else "error"
    if sample.output is not None and sample.output.choices and sample.output.stop_reason == "content_filter":
        return "refused (content_filter)"
    if score is None:
        return "not scored"
    reason = getattr(score, "reason", None) or (score.metadata or {}).get("unscored_reason")
    if reason in _UNREADABLE:
        return UNPARSEABLE
    if reason == "refusal":
        return "refused"
    if score.value in _NO_ANSWER or reason == "no_response":
        return "no answer"
    return None


def _key(text: str, target: str) -> str:
    """What identifies a sample's content across logs: its input and target."""
    return hashlib.sha256(f"{text}\x00{target}".encode()).hexdigest()


def _right(value: Any, sample: Any, scorer: str, where: str) -> bool:
    """A score value as right or wrong; any other value (partial credit, a number, a dict) is refused."""
    if value in _RIGHT or (isinstance(value, (int, float)) and not isinstance(value, bool) and value == 1):
        return True
    if value in _WRONG or (isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0):
        return False
    raise ModelError(
        f"{where}: sample {sample.id} (epoch {sample.epoch}) has {scorer} = {value!r}, not right (C, 1) or wrong "
        f"(I, 0); choose a scorer that says right or wrong (scorer: <name>)"
    )


def _letter(answer: str, n_choices: int) -> int:
    """A single choice letter (``B``, ``B.``) as its index; -1 for anything else or out of range."""
    text = answer.strip().rstrip(".").strip()
    if len(text) == 1 and text.isalpha():
        index = ord(text.upper()) - ord("A")
        return index if 0 <= index < n_choices else -1
    return -1


def _metadata_fields(samples: list[Any]) -> list[str]:
    """Metadata fields every sample holds with a plain value (text, number, yes/no): candidates to slice by."""
    fields: Mapping[str, Any] = samples[0].metadata or {}
    plain = (str, int, float, bool)
    return [
        name
        for name in fields
        if all(isinstance((s.metadata or {}).get(name), plain) for s in samples) and name != SAMPLE_COLUMN
    ]
