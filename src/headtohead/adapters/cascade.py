"""``kind: cascade``: a model built from two other models' predictions, never loaded nor asked itself.

The pipeline evaluates the cascade's parts first and then builds it from their stored predictions
(``pipeline/cascade.py``); this adapter exists so that the family has a row like every other, and it
says so in one line if anything tries to load it as a model.
"""

from __future__ import annotations

from typing import ClassVar

from headtohead.adapters.base import LoadContext, LookedUpAdapter
from headtohead.config.schema import ModelConfig
from headtohead.errors import ModelError

__all__ = ["CascadeAdapter"]


class CascadeAdapter(LookedUpAdapter):
    """A cascade: its predictions are its parts', chosen example by example (``pipeline/cascade.py``)."""

    kind: ClassVar[str] = "cascade"
    no_forward_reason: ClassVar[str] = "is built from its parts' predictions after they ran, not run itself"

    @classmethod
    def load(cls, config: ModelConfig, context: LoadContext) -> CascadeAdapter:
        """Refused: a cascade is never loaded (the run builds it from its parts' predictions)."""
        raise ModelError(
            f"model '{config.name}' (kind cascade) {cls.no_forward_reason}; run it within headtohead.run with its "
            "parts, or leave it out of this command"
        )
