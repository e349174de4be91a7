"""``kind: inspect``: an Inspect evaluation log (``.eval`` or ``.json``), its samples' scores as one model's answers."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from headtohead.config.models.keys import Priced

__all__ = ["InspectSettings", "INSPECT_SUFFIXES"]

#: The files an Inspect log is recognised by (a ``.json`` log needs ``inspect:`` written: it is also a prediction file).
INSPECT_SUFFIXES = (".eval",)


class InspectSettings(Priced):
    """An Inspect log: each sample's score (every epoch), its errors and refusals failures."""

    kind: Literal["inspect"]
    reruns: ClassVar[bool] = False  # stored answers: nothing to re-run

    scorer: str | None = Field(
        default=None, description="The scorer whose value says right or wrong (default: the log's first scorer)."
    )
