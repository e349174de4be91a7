"""An LLM's answers beside its predictions: every answer's raw text, prompt, label read, input and gold label.

The adapter reads the answers (:class:`~headtohead.results.answers.AnswerRead`, carried by the
model's :class:`~headtohead.results.answers.AnswersRecord` but never written into ``results.json``),
the same for every LLM family; here, with the data at hand, they become ``answers/<model>.jsonl``
in the run folder, and the record's unparseable answers get their input and gold label for the report.
See ``docs/llm.md``, "Every answer, kept".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from headtohead.data.base import Dataset
from headtohead.data.display import input_texts
from headtohead.results.answers import RAW_ANSWER_CHARS, AnswerRead, AnswersRecord
from headtohead.results.files import answers_file
from headtohead.results.records import ModelRecord
from headtohead.runtime.files import write_text_atomic

__all__ = ["with_inputs", "write_answers", "answer_rows"]


def with_inputs(record: ModelRecord, dataset: Dataset) -> ModelRecord:
    """``record`` with its unparseable answers given their input, gold label and id (unchanged without)."""
    answers = record.answers
    if answers is None or not answers.unparseable:
        return record
    texts = input_texts(dataset)
    ids = dataset.ids
    unparseable = [
        item.model_copy(
            update={
                "input": _cut(texts[item.index]),
                "gold": _gold(dataset, item.index),
                "id": None if ids is None else str(ids[item.index]),
            }
        )
        for item in answers.unparseable
    ]
    return record.model_copy(update={"answers": answers.model_copy(update={"unparseable": unparseable})})


def answer_rows(answers: AnswersRecord, dataset: Dataset) -> list[dict[str, Any]]:
    """One row per answer: example id, input, gold label, raw answer, label read, rule, probabilities, label mass,
    why no probabilities, the prompt asked, tokens in and out, latency, from the cache, error."""
    texts = input_texts(dataset)
    names = [str(n) for n in dataset.label_names]
    return [_row(answer, dataset, texts, names) for answer in answers.answers]


def write_answers(out: Path, record: ModelRecord, dataset: Dataset) -> Path | None:
    """Write ``answers/<model>.jsonl`` under ``out`` when the model answered in words; its path (``None``: nothing)."""
    answers = record.answers
    if answers is None or not answers.answers:
        return None
    path = out / answers_file(record.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(row, ensure_ascii=False) for row in answer_rows(answers, dataset)]
    write_text_atomic(path, "\n".join(lines) + "\n")
    return path


def _row(answer: AnswerRead, dataset: Dataset, texts: list[str | None], names: list[str]) -> dict[str, Any]:
    i = answer.index
    return {
        "index": i,
        "id": None if dataset.ids is None else dataset.ids[i],
        "input": _cut(texts[i]),
        "gold": _gold(dataset, i),
        "answer": answer.answer,
        "label": None if answer.label is None else names[answer.label],
        "rule": answer.rule,
        "probabilities": None if answer.probabilities is None else dict(zip(names, answer.probabilities, strict=True)),
        "label_mass": answer.label_mass,
        "no_probabilities": answer.no_probabilities,
        "prompt": answer.prompt,
        "tokens_in": answer.tokens_in,
        "tokens_out": answer.tokens_out,
        "latency_s": answer.latency_s,
        "from_cache": answer.from_cache,
        "error": answer.error,
    }


def _gold(dataset: Dataset, index: int) -> str:
    return str(dataset.label_names[int(dataset.labels[index])])


def _cut(text: str | None) -> str | None:
    return None if text is None else text[:RAW_ANSWER_CHARS]
