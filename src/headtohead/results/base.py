"""The base class of every result record."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Record"]


class Record(BaseModel):
    """Base of all result records: frozen, no unknown keys."""

    model_config = ConfigDict(frozen=True, extra="forbid")
