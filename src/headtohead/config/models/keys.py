"""The keys several model families read, each declared once and mixed into the families that read it.

A family's settings class inherits the groups its adapter reads, so a family that reads none of
them (``openai``, ``lm-eval`` …) refuses them in one line naming the families that do.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from headtohead.config.models.base import ModelConfig

__all__ = ["OutputNames", "ConstructorArgs", "Pickles", "HubModel", "Priced"]


class OutputNames(ModelConfig):
    """A model whose outputs are classes it may not name itself (its file or its factory)."""

    label_names: list[str] | None = Field(
        default=None, description="Names of the model's outputs, in output order, when its files do not carry them."
    )


class ConstructorArgs(ModelConfig):
    """A model built by a constructor or factory that takes keyword arguments."""

    model_args: dict[str, Any] = Field(
        default_factory=dict, description="Extra keyword arguments for the model constructor / factory."
    )


class Pickles(ModelConfig):
    """A model whose files may be pickles (refused unless trusted)."""

    allow_pickle: bool = Field(default=False, description="Allow loading pickled objects (can run code).")


class HubModel(ConstructorArgs):
    """A transformers model read from a folder or the Hugging Face hub (``model_args.cache_dir`` is the hub's)."""

    trust_remote_code: bool = Field(default=False, description="Run code shipped with the model (transformers).")
    revision: str | None = Field(default=None, description="Hub revision (branch, tag or commit).")


class Priced(ModelConfig):
    """A model of stored answers (a prediction file, a harness's log): nothing here times it, so its cost is given.

    Only the families that cannot be timed read ``price_per_1m``: a model run here is priced by
    ``speed.price_per_hour`` at its measured throughput and an endpoint by its price per token, so the
    key on one of those is another family's key, refused in one line naming the families that read it.
    """

    price_per_1m: float | None = Field(
        default=None,
        ge=0,
        description="What a million predictions of this model cost (in the currency of the run's other prices), "
        "for a model whose cost cannot be measured here; it joins the cost table and the accuracy–cost chart.",
    )
