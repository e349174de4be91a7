"""The keys every model entry has: its name, its family (``kind``) and its source.

``ModelConfig`` is the base of every family's settings class (:mod:`headtohead.config.models`),
each of which declares its ``kind`` as a literal and owns its keys (``extra="forbid"``). An entry
becomes its family's class through the discriminated union on ``kind``
(:data:`headtohead.config.models.AnyModel`), which ``Experiment.models`` and
:func:`headtohead.config.models.model_settings` use; the base is never built itself.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import Field, model_validator

from headtohead.config.base import Section
from headtohead.config.models.passes import PassSpec

__all__ = ["ModelConfig"]

_Settings = TypeVar("_Settings", bound="ModelConfig")


class ModelConfig(Section):
    """One candidate model: the keys of every family (each family's class adds its own)."""

    name: str = Field(min_length=1, description="Unique name used in tables and results.")
    kind: str = Field(description="Model family (README.md lists the kinds).")
    source: str = Field(
        min_length=1,
        description="Hub id, local folder, checkpoint file, architecture "
        "name (timm/torchvision), 'package.module:factory' (python), a prediction file "
        "(predictions: .csv/.tsv/.jsonl/.parquet) or the model name the server expects (openai).",
    )

    @property
    def request_bound(self) -> int | None:
        """Requests the model may have in flight at once, for the whole model; ``None``: it sends none."""
        return None

    def pass_specs(self) -> tuple[PassSpec, ...]:
        """The passes of a model measured several ways (``prompts:``, prediction files as ``passes:``), in order.

        Empty for a model measured once (the usual case). The pipeline plans one unit of work per pass
        from this alone; how a pass is made is its family's (``adapters/prompt_variants.py``).
        """
        return ()

    def pass_source(self, index: int | None) -> str | None:
        """The file pass ``index`` reads, for a family whose passes are stored files (``None``: they are not)."""
        return None

    def with_request_share(self: _Settings, bound: int) -> _Settings:
        """The model as one of its shards loads it, allowed ``bound`` of its requests in flight.

        A family that sends requests (:attr:`request_bound` not ``None``) says where its bound
        is kept; a model that sends none is the same in every shard.
        """
        return self

    @model_validator(mode="before")
    @classmethod
    def _a_family(cls, data: Any) -> Any:
        if cls is ModelConfig:  # the entry's kind decides its class: only the union knows them all
            raise TypeError(
                "ModelConfig is the base of the model families; build an entry with "
                "headtohead.config.models.model_settings(name=…, kind=…, source=…)"
            )
        return data
