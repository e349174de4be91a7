"""The keys every model entry has: its name, its family (``kind``) and its source.

``ModelConfig`` is the base of every family's settings class (:mod:`headtohead.config.models`),
each of which declares its ``kind`` as a literal and owns its keys (``extra="forbid"``). An entry
becomes its family's class through the discriminated union on ``kind``
(:data:`headtohead.config.models.AnyModel`), which ``Experiment.models`` and
:func:`headtohead.config.models.model_settings` use; the base is never built itself.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from pydantic import Field, field_validator, model_validator

from headtohead.config.base import Section
from headtohead.config.models.passes import PassSpec, pass_specs, repeat_seed

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
    repeats: int | None = Field(
        default=None,
        description="Run the model this many times over the same examples, each run with a seed of its own "
        "(Python, NumPy and torch seeded; an LLM asked over HTTP sent the seed): its run-to-run noise is "
        "measured and its comparisons use every run (eval.repeats sets it for every model that runs).",
    )

    #: The family runs (or asks) the model, so a second run is a run of its own; ``False``: it reads stored
    #: answers (a prediction file, a harness's log), which a repeat would read again unchanged.
    reruns: ClassVar[bool] = True
    #: The family serves requests over the network, so it can be probed under load at a rate (the capacity
    #: scenario); ``False``: its capacity, if any, is the Server scenario's (a local model).
    serves_requests: ClassVar[bool] = False

    @property
    def request_bound(self) -> int | None:
        """Requests the model may have in flight at once, for the whole model; ``None``: it sends none."""
        return None

    def pass_specs(self) -> tuple[PassSpec, ...]:
        """The passes of a model measured several ways (``repeats:``, ``prompts:``, prediction files as
        ``passes:``), in order.

        Empty for a model measured once (the usual case). The pipeline plans one unit of work per pass
        from this alone; how a pass is made is its family's (``adapters/prompt_variants.py``), a
        repeat's seed :meth:`pass_seed`'s.

        Examples
        --------
        >>> from headtohead.config.models import model_settings
        >>> [p.key for p in model_settings(name="m", kind="python", source="pkg.mod:make", repeats=3).pass_specs()]
        ['r1', 'r2', 'r3']
        """
        return pass_specs("repeat", self.repeats) if self.repeats is not None and self.repeats > 1 else ()

    def pass_seed(self, seed: int, index: int | None) -> int:
        """The seed pass ``index`` runs with in a run seeded ``seed``: a repeat's own, else the run's."""
        specs = self.pass_specs()
        if index is None or not specs or specs[index].factor != "repeat":
            return seed
        return repeat_seed(seed, index)

    def pass_source(self, index: int | None) -> str | None:
        """The file pass ``index`` reads, for a family whose passes are stored files (``None``: they are not)."""
        return None

    def parts(self) -> tuple[str, ...]:
        """The models of the run this model is built from after they ran (a cascade's two); empty: it runs itself.

        A model with parts is no unit of work (``pipeline/executors/jobs.py:run_units`` leaves it out): the
        pipeline builds it from its parts' predictions once they finished (``pipeline/cascade.py``).
        """
        return ()

    def with_request_share(self: _Settings, bound: int) -> _Settings:
        """The model as one of its shards loads it, allowed ``bound`` of its requests in flight.

        A family that sends requests (:attr:`request_bound` not ``None``) says where its bound
        is kept; a model that sends none is the same in every shard.
        """
        return self

    @field_validator("repeats")
    @classmethod
    def _runs(cls, repeats: int | None) -> int | None:
        if repeats is not None and repeats < 1:
            raise ValueError(
                f"repeats is {repeats}; it counts the model's runs: give 2 or more (repeats: 5), or leave it out "
                f"for one run"
            )
        return repeats

    @model_validator(mode="after")
    def _something_to_rerun(self) -> ModelConfig:
        if not self.reruns and self.repeats is not None and self.repeats > 1:
            instead = (
                "give each run's prediction file as the model's passes (source: [r1.csv, r2.csv], passes: repeat)"
                if self.kind == "predictions"
                else "give each run's log as a model of its own"
            )
            raise ValueError(
                f"repeats: {self.repeats} on kind: {self.kind}, which reads stored answers: a repeat would read "
                f"the same answers again (nothing to re-run); {instead}, or drop repeats"
            )
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
