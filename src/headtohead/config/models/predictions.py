"""``kind: predictions``: a file of stored predictions (or probabilities), matched to the data by example.

Several files — one per prompt a system was asked with — may be given as one model's passes
(``source: [p1.csv, p2.csv, p3.csv]`` with ``passes: prompt``): they are pooled as a model asked
with several prompts is; one file per run of the same system (``passes: repeat``) as a model run
several times (``repeats:``) is (see ``docs/architecture.md``, "Passes").
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from headtohead.config.models.keys import OutputNames, Priced
from headtohead.config.models.passes import FACTORS, Factor, PassSpec, factor_error, pass_specs

__all__ = ["PredictionsSettings", "PREDICTION_SUFFIXES"]

#: The prediction file formats.
PREDICTION_SUFFIXES = (".csv", ".tsv", ".jsonl", ".json", ".parquet", ".pq")


class PredictionsSettings(OutputNames, Priced):
    """A prediction file: what an example without a row means.

    A row whose prediction is empty, whose ``failed`` column is true or whose probabilities
    are empty or NaN is a failure of the model (a wrong answer, counted and named), as for
    any model; the model's ``label_names`` (all its classes, the data's and more) let it
    predict classes the data does not hold (each such prediction a wrong answer).
    """

    kind: Literal["predictions"]
    reruns: ClassVar[bool] = False  # stored answers: nothing to re-run

    missing_ids: Literal["error", "failed"] = Field(
        default="error",
        description="An example of the data whose id has no row: 'error' (a file cut short is a mistake) or "
        "'failed' (the model failed on it: a wrong answer, counted and named).",
    )
    sources: list[str] | None = Field(
        default=None,
        description="One prediction file per pass (written as a list under source, with passes:); source then "
        "names them all.",
    )
    passes: Factor | None = Field(
        default=None,
        description="What differs between the files of a list under source: prompt (one file per prompt a "
        "system was asked with), pooled as a model asked with several prompts; repeat (one file per run of the "
        "same system), pooled as a model run several times (repeats:).",
    )

    @model_validator(mode="before")
    @classmethod
    def _files_as_passes(cls, data: Any) -> Any:
        """``source: [a, b, c]`` with ``passes:`` → ``sources`` (each pass's file) and ``source`` naming them all."""
        if not isinstance(data, dict):
            return data
        where, source, factor = f"model '{data.get('name')}'", data.get("source"), data.get("passes")
        if factor is not None and factor not in FACTORS:
            raise ValueError(factor_error(str(factor), where))
        if isinstance(source, (list, tuple)):
            files = [str(f) for f in source]
            if len(files) < 2:
                raise ValueError(
                    f"{where}: source lists {len(files)} file; give the file alone, or two or more with passes: prompt or repeat"
                )
            if factor is None:
                raise ValueError(
                    f"{where}: source lists {len(files)} files; say what differs between them with passes: prompt "
                    f"(one file per prompt) or passes: repeat (one file per run), pooled as one model, or give each file as a model of its own"
                )
            return {**data, "sources": files, "source": ", ".join(files)}
        if factor is not None and not data.get("sources"):
            raise ValueError(
                f"{where}: passes: {factor} needs two or more prediction files, listed under source "
                f"(source: [p1.csv, p2.csv]); one file is one pass: drop passes:"
            )
        return data

    def pass_specs(self) -> tuple[PassSpec, ...]:
        """One pass per file of a list under ``source`` (none for one file)."""
        if not self.sources or self.passes is None:
            return ()
        return pass_specs(self.passes, len(self.sources))

    def pass_source(self, index: int | None) -> str:
        """The file pass ``index`` reads (``source`` for a model of one file, or without a pass)."""
        return self.source if index is None or not self.sources else self.sources[index]
