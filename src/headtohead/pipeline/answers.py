"""An LLM model's answers beside its predictions: every answer's raw text, label, rule, input and gold label.

The adapter reads the answers (:class:`~headtohead.results.endpoint.AnswerRead`, carried by the
model's :class:`~headtohead.results.endpoint.EndpointRecord` but never written into
``results.json``); here, with the data at hand, they become ``answers/<model>.jsonl`` in the run
folder, and the record's unparseable answers get their input and gold label for the report.
See ``docs/llm.md``, "Every answer, kept".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from headtohead.data.base import Dataset
from headtohead.data.display import input_texts
from headtohead.results.endpoint import RAW_ANSWER_CHARS, AnswerRead, EndpointRecord
from headtohead.results.files import answers_file
from headtohead.results.records import ModelRecord
from headtohead.runtime.files import write_text_atomic

__all__ = ["with_inputs", "write_answers", "answer_rows"]


def with_inputs(record: ModelRecord, dataset: Dataset) -> ModelRecord:
    """``record`` with its endpoint's unparseable answers given their input and gold label (unchanged without)."""
    endpoint = record.endpoint
    if endpoint is None or not endpoint.unparseable:
        return record
    texts = input_texts(dataset)
    unparseable = [
        item.model_copy(update={"input": _cut(texts[item.index]), "gold": _gold(dataset, item.index)})
        for item in endpoint.unparseable
    ]
    return record.model_copy(update={"endpoint": endpoint.model_copy(update={"unparseable": unparseable})})


def answer_rows(endpoint: EndpointRecord, dataset: Dataset) -> list[dict[str, Any]]:
    """One row per answer: example id, input, gold label, raw answer, label read, rule, label mass, why no probabilities."""
    texts = input_texts(dataset)
    names = [str(n) for n in dataset.label_names]
    return [_row(answer, dataset, texts, names) for answer in endpoint.answers]


def write_answers(out: Path, record: ModelRecord, dataset: Dataset) -> Path | None:
    """Write ``answers/<model>.jsonl`` under ``out`` when the model answered in words; its path (``None``: nothing)."""
    endpoint = record.endpoint
    if endpoint is None or not endpoint.answers:
        return None
    path = out / answers_file(record.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(row, ensure_ascii=False) for row in answer_rows(endpoint, dataset)]
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
        "label_mass": answer.label_mass,
        "no_probabilities": answer.no_probabilities,
    }


def _gold(dataset: Dataset, index: int) -> str:
    return str(dataset.label_names[int(dataset.labels[index])])


def _cut(text: str | None) -> str | None:
    return None if text is None else text[:RAW_ANSWER_CHARS]
