"""The suite file (``h2h suite SUITE.yaml``): the same models, or the same recipe, on several data sets (no torch).

See ``docs/statistics.md``, "Running a suite".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator, model_validator

from headtohead.config.base import Section
from headtohead.config.execution import ExecutionConfig
from headtohead.config.loading import (
    _format_validation_error,
    _read_experiment_file,
    apply_overrides,
    experiment_from_dict,
)
from headtohead.config.models import AnyModel
from headtohead.config.schema import DataConfig, EvalConfig, Experiment, StatsConfig
from headtohead.config.speed import SpeedConfig
from headtohead.errors import ConfigError
from headtohead.metrics import CATALOGUE, unknown

__all__ = [
    "SuiteConfig",
    "SuiteDatasetConfig",
    "AcrossConfig",
    "FigureConfig",
    "figure_size",
    "RUN_METRICS",
    "DATASET_PLACEHOLDER",
    "load_suite",
    "suite_from_dict",
]

#: Replaced by a data set's name in every string of the suite's models.
DATASET_PLACEHOLDER = "{dataset}"

#: The metrics a suite may rank by (the catalogue's), and whether higher is better. The ones an
#: experiment picks (``stats.metrics``) are added to every data set's run.
RUN_METRICS: dict[str, bool] = {name: entry.higher_is_better for name, entry in CATALOGUE.items()}

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class SuiteDatasetConfig(Section):
    """One data set of the suite: its name (also its folder under ``--out``) and its data."""

    name: str = Field(description="Unique; the data set's folder under --out and the value of {dataset}.")
    data: DataConfig

    @field_validator("name")
    @classmethod
    def _folder_name(cls, name: str) -> str:
        if not _NAME_RE.match(name):
            raise ValueError(
                f"data set name '{name}' must be a folder name: letters, digits, '.', '_' or '-', not "
                f"starting with '.' or '-' (e.g. sst2, snips-test)"
            )
        return name


#: The largest side of the CD diagram, in inches (a poster's width): beyond it a typo, not a figure.
MAX_FIGURE_INCHES = 50.0


class FigureConfig(Section):
    """The size of the CD diagram written for a paper (``cd.svg``, ``cd.pdf``), in inches."""

    width: float | None = Field(
        default=None,
        gt=0,
        le=MAX_FIGURE_INCHES,
        description="Inches (an IEEE column is 3.5, a page 7.16); null: 9 inches.",
    )
    height: float | None = Field(
        default=None,
        gt=0,
        le=MAX_FIGURE_INCHES,
        description="Inches; null: as many rows as the models' labels and the bars need.",
    )

    @property
    def size(self) -> tuple[float | None, float | None] | None:
        """``(width, height)``, ``None`` when neither is set (the default figure)."""
        return None if self.width is None and self.height is None else (self.width, self.height)

    @classmethod
    def read(cls, text: str, where: str = "--figure-size") -> FigureConfig:
        """``WIDTHxHEIGHT`` as people write it (:func:`figure_size`)."""
        width, height = figure_size(text, where)
        return cls(width=width, height=height)


def figure_size(text: str, where: str = "--figure-size") -> tuple[float, float]:
    """``WIDTHxHEIGHT`` in inches (``3.5x1.6``) as two numbers.

    Raises
    ------
    ConfigError
        One line: not two numbers joined by ``x``, or a side that is not a positive, finite
        number of inches up to :data:`MAX_FIGURE_INCHES`.

    Examples
    --------
    >>> figure_size("3.5x1.6"), figure_size(" 7.16 X 2 ")
    ((3.5, 1.6), (7.16, 2.0))
    """
    hint = "give WIDTHxHEIGHT in inches, e.g. 3.5x1.6 (an IEEE column is 3.5 inches wide)"
    parts = text.strip().lower().replace("×", "x").split("x")
    if len(parts) != 2:
        raise ConfigError(f"{where} {text!r}: not a width and a height joined by 'x'; {hint}")
    sides = []
    for name, part in zip(("width", "height"), parts, strict=True):
        try:
            value = float(part.strip())
        except ValueError:
            raise ConfigError(f"{where} {text!r}: the {name} '{part.strip()}' is not a number; {hint}") from None
        if not (0 < value <= MAX_FIGURE_INCHES):  # NaN fails too
            raise ConfigError(
                f"{where} {text!r}: the {name} must be more than 0 and at most {MAX_FIGURE_INCHES:g} inches; {hint}"
            )
        sides.append(value)
    return sides[0], sides[1]


class AcrossConfig(Section):
    """How the data sets' scores are compared."""

    metric: str = Field(default="accuracy", description="The per-data-set figure ranked: " + ", ".join(RUN_METRICS))
    rope: float = Field(
        default=0.01,
        ge=0.0,
        description="Region of practical equivalence of the Bayesian "
        "signed-rank test, in the metric's units (0.01 = one point of accuracy).",
    )
    bayes_samples: int = Field(default=50_000, ge=1000, description="Posterior draws of the Bayesian test.")
    baseline: str | None = Field(
        default=None,
        description="A model every other is compared with (Demšar's control: Holm over k − 1); --baseline sets it too.",
    )
    figure: FigureConfig = Field(
        default_factory=FigureConfig,
        description="The CD diagram's size for a paper (cd.svg, cd.pdf), in inches; --figure-size sets it too.",
    )

    @field_validator("metric")
    @classmethod
    def _known_metric(cls, metric: str) -> str:
        if metric not in RUN_METRICS:
            raise ValueError(unknown(metric, RUN_METRICS))
        return metric

    @property
    def higher_is_better(self) -> bool:
        return RUN_METRICS[self.metric]


class SuiteConfig(Section):
    """A suite: N data sets, the same models (or recipe) on each, how to compare them across data sets."""

    name: str = Field(default="suite", min_length=1)
    seed: int = 42
    datasets: list[SuiteDatasetConfig] = Field(min_length=2, description="At least two data sets.")
    models: list[AnyModel] = Field(  # each its family's class, by the union on kind
        min_length=2, description="At least two models; '{dataset}' in their strings becomes each data set's name."
    )
    across: AcrossConfig = Field(default_factory=AcrossConfig)
    datasets_at_once: int = Field(
        default=1, gt=0, description="Data sets run side by side (execution.mode processes or ray)."
    )
    eval: EvalConfig = Field(default_factory=EvalConfig)
    stats: StatsConfig = Field(default_factory=StatsConfig)
    speed: SpeedConfig = Field(default_factory=SpeedConfig)
    execution: ExecutionConfig = Field(default_factory=ExecutionConfig)

    @model_validator(mode="after")
    def _unique_names(self) -> SuiteConfig:
        for what, names in (("data set", [d.name for d in self.datasets]), ("model", [m.name for m in self.models])):
            repeated = sorted({n for n in names if names.count(n) > 1})
            if repeated:
                raise ValueError(f"{what} name '{repeated[0]}' is used twice; give each {what} a unique name")
        models = [m.name for m in self.models]
        if self.across.baseline is not None and self.across.baseline not in models:
            raise ValueError(
                f"across.baseline: '{self.across.baseline}' is not one of the models ({', '.join(models)})"
            )
        return self

    @model_validator(mode="after")
    def _side_by_side_fits(self) -> SuiteConfig:
        if self.datasets_at_once == 1:
            return self
        if self.execution.mode == "local":
            raise ValueError(
                f"datasets_at_once: {self.datasets_at_once} runs data sets side by side through the "
                f"executors; set execution.mode: processes or ray, or datasets_at_once: 1"
            )
        if self.speed.enabled:
            raise ValueError(
                f"datasets_at_once: {self.datasets_at_once} with speed.enabled: timings of data sets "
                f"running side by side would share the machine; set speed.enabled: false (and time "
                f"each data set with h2h bench), or datasets_at_once: 1"
            )
        return self

    def dataset(self, name: str) -> SuiteDatasetConfig:
        """The data set called ``name``."""
        for dataset in self.datasets:
            if dataset.name == name:
                return dataset
        raise KeyError(name)

    def experiment_dict(self, dataset: str) -> dict[str, Any]:
        """The experiment of data set ``dataset`` as a plain dict (models with ``{dataset}`` filled in)."""
        spec = self.dataset(dataset)
        shared = self.model_dump(
            mode="json", include={"seed", "eval", "stats", "speed", "execution"}, exclude_unset=False
        )
        models = [_fill(m.model_dump(mode="json", exclude_defaults=True), dataset) for m in self.models]
        metric = self.across.metric  # ranked by a picked metric: every run reports it
        if not CATALOGUE[metric].default and metric not in shared["stats"]["metrics"]:
            shared["stats"]["metrics"] = [*shared["stats"]["metrics"], metric]
        return {
            "name": f"{self.name}/{dataset}",
            **shared,
            "data": spec.data.model_dump(mode="json", exclude_defaults=True),
            "models": models,
        }

    def experiment(self, dataset: str) -> Experiment:
        """The validated experiment of data set ``dataset``."""
        return Experiment.model_validate(self.experiment_dict(dataset))


def _fill(value: Any, dataset: str) -> Any:
    """``value`` with ``{dataset}`` replaced in every string (nested dicts and lists too)."""
    if isinstance(value, str):
        return value.replace(DATASET_PLACEHOLDER, dataset)
    if isinstance(value, dict):
        return {k: _fill(v, dataset) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, dataset) for v in value]
    return value


def suite_from_dict(
    raw: dict[str, Any], *, overrides: Sequence[str] = (), source: str = "suite", yaml_text: str | None = None
) -> SuiteConfig:
    """Validate a suite given as a dict (after ``overrides``), and the experiment of each of its data sets.

    Raises
    ------
    ConfigError
        One line: where (file:line, key), what, how to fix — for the suite, or for the first
        data set whose experiment is invalid.
    """
    data = apply_overrides(raw, overrides)
    try:
        suite = SuiteConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(
            _format_validation_error(exc, source, yaml_text if not overrides else None, schema=SuiteConfig)
        ) from exc
    for dataset in suite.datasets:  # every run is valid before the first starts
        experiment_from_dict(suite.experiment_dict(dataset.name), source=f"{source}: data set '{dataset.name}'")
    return suite


def load_suite(path: str | Path, overrides: Sequence[str] = ()) -> SuiteConfig:
    """Load and validate a suite file.

    Parameters
    ----------
    path : str or Path
        A YAML file (see the module docstring).
    overrides : sequence of str
        ``key.path=value`` strings, as for an experiment (``across.metric=f1_macro``,
        ``datasets.sst2.data.limit=100``).

    Returns
    -------
    SuiteConfig

    Raises
    ------
    ConfigError
        The file is missing or not YAML, or does not describe a valid suite.
    """
    path = Path(path)
    raw, text = _read_experiment_file(path, what="suite")
    return suite_from_dict(raw, overrides=overrides, source=str(path), yaml_text=text)
