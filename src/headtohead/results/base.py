"""The base class of every result record."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

__all__ = ["Record", "DerivedRecord"]


class Record(BaseModel):
    """Base of all result records: frozen, no unknown keys."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class DerivedRecord(Record):
    """A record whose ``computed_field`` values are recomputed on read, never taken from input."""

    @model_validator(mode="before")
    @classmethod
    def _drop_derived(cls, data: Any) -> Any:
        if isinstance(data, dict):
            derived = set(cls.model_computed_fields)
            data = {k: v for k, v in data.items() if k not in derived}
        return data
