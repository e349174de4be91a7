"""The experiment file as typed, validated records (pydantic; no torch import here).

See ``docs/api/config.md``, the section of this title.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from headtohead.config.base import DEVICE_RE as _DEVICE_RE
from headtohead.config.base import Section as _Section
from headtohead.config.decide import DecideConfig
from headtohead.config.execution import ExecutionConfig
from headtohead.config.models import MODEL_KINDS, AnyModel, ModelConfig, family, model_settings
from headtohead.config.speed import SpeedConfig
from headtohead.config.sweep import SweepConfig
from headtohead.config.train import TrainConfig
from headtohead.errors import did_you_mean, listing
from headtohead.metrics import check_names, names

__all__ = [
    "Experiment",
    "DataConfig",
    "SplitConfig",
    "ModelConfig",
    "model_settings",
    "EvalConfig",
    "StatsConfig",
    "MODEL_KINDS",
    "NOISE_FLOOR_RUNS",
]

#: Fewest examples per look of ``eval.until_decided`` by default (rounded up to whole batches).
_DEFAULT_CHUNK = 64
#: Runs of each model that runs under ``eval.noise_floor`` when ``eval.repeats`` is not given: the floor is a
#: t prediction bound, ``t_{0.975, k−1}·√2·s``, whose t falls from 12.7 at 2 runs to 4.3 at 3 and 2.8 at 5.
NOISE_FLOOR_RUNS = 5


class SplitConfig(_Section):
    """A seeded, stratified split of one labelled file into train and eval parts."""

    eval_fraction: float = Field(gt=0.0, lt=1.0, description="Share of examples held out for evaluation.")


class DataConfig(_Section):
    """Where the labelled examples come from and how to read them."""

    path: str = Field(
        description="A .csv/.tsv/.jsonl/.parquet table, an image folder, "
        "'sklearn:<name>', 'hf:<saved folder or hub name>[:<split>]', or 'logs:' (the items of the models' "
        "own logs: kind lm-eval, inspect)."
    )
    text_column: str | None = Field(default=None, description="Text column of a table (default: 'text').")
    text_pair_column: str | None = Field(default=None, description="Second text of sentence-pair tasks.")
    label_column: str = "label"
    label_names: list[str] | None = Field(
        default=None, description="Names for integer labels 0..K-1 (e.g. [negative, positive])."
    )
    train: str | None = Field(default=None, description="Optional separate training file (same format).")
    split: SplitConfig | None = None
    hf_split: str | None = Field(default=None, description="Split of a Hugging Face dataset to evaluate on.")
    limit: int | None = Field(default=None, gt=0, description="Use only the first N eval examples (quick runs).")
    id_column: str | None = Field(
        default=None,
        min_length=1,
        description="Column of unique example ids; rows of prediction files are "
        "matched to the data by the same column (image folders: ids are the file paths inside the folder).",
    )
    slice_columns: list[str] = Field(
        default_factory=list, description="Extra columns kept for quality per slice (e.g. [source, language])."
    )
    group_column: str | None = Field(
        default=None,
        min_length=1,
        description="Column naming groups of related examples (a user, a document, a "
        "conversation): every paired test, interval, slice, the gate and --until-decided then treat a group, not "
        "an example, as the independent unit. An example without a value is a group of its own.",
    )
    label_ok: str | None = Field(
        default=None,
        min_length=1,
        description="Column saying whether each row's gold label is right: a row marked false (false/no/0, any "
        "case) is left out at load, before any split or statistic, and counted in the report; true/yes/1 keep it. "
        "Any other value, an empty one included, is refused.",
    )

    @model_validator(mode="after")
    def _train_or_split(self) -> DataConfig:
        if self.train is not None and self.split is not None:
            raise ValueError("give either 'train' (a separate file) or 'split' (hold out part of 'path'), not both")
        return self

    @model_validator(mode="after")
    def _slice_columns_distinct(self) -> DataConfig:
        repeated = sorted({c for c in self.slice_columns if self.slice_columns.count(c) > 1})
        if repeated:
            raise ValueError(f"slice_columns names {repeated} more than once; list each column once")
        if self.id_column is not None and self.id_column in self.slice_columns:
            raise ValueError(
                f"'{self.id_column}' is the id_column: every id is its own slice of one example; "
                f"remove it from slice_columns"
            )
        if self.label_ok is not None and self.label_ok in (self.id_column, self.label_column):
            raise ValueError(
                f"label_ok '{self.label_ok}' is the {'id' if self.label_ok == self.id_column else 'label'} column; "
                f"name the column of true/false flags saying whether each row's label is right"
            )
        if self.group_column is not None and self.group_column == self.id_column:
            raise ValueError(
                f"group_column '{self.group_column}' is the id_column: every example would be a group of "
                f"its own, which is what no group_column means; name the column of users, documents "
                f"or conversations"
            )
        return self

    @property
    def kept_columns(self) -> list[str]:
        """Extra columns a loader keeps beside the examples: the slice columns, then the group column."""
        extra = [self.group_column] if self.group_column and self.group_column not in self.slice_columns else []
        return list(self.slice_columns) + extra


class EvalConfig(_Section):
    """How the quality pass runs."""

    batch_size: int = Field(default=32, gt=0)
    device: str = Field(default="auto", description="auto | cpu | cuda | cuda:N | mps")
    num_threads: int | None = Field(default=None, gt=0, description="torch intra-op threads (default: torch's).")
    until_decided: bool = Field(
        default=False,
        description="Evaluate in a seeded random order, chunk by chunk, and "
        "stop once an anytime-valid test has decided every pair (h2h run --until-decided).",
    )
    chunk_size: int | None = Field(
        default=None,
        gt=0,
        description="until_decided: examples per look, a multiple "
        "of batch_size (default: the smallest multiple of batch_size from 64).",
    )
    equivalence_margin: float | None = Field(
        default=None,
        gt=0.0,
        lt=1.0,
        description="until_decided: also stop when a pair's accuracy gap is shown "
        "to lie within ± this fraction (0.02 = 2 points); default: never declare equivalence.",
    )
    repeats: int | None = Field(
        default=None,
        description="Run every model that runs (not stored answers) this many times, each run with a seed of "
        "its own; a model's own repeats: wins.",
    )

    noise_floor: bool = Field(
        default=False,
        description="Measure each model's noise floor, how far two means of its runs differ (h2h run --noise-floor): "
        f"every model that runs and says no repeats: of its own is run eval.repeats times ({NOISE_FLOOR_RUNS} when "
        "not given). A gap within a pair's larger floor is never called better, with or without it.",
    )

    @field_validator("repeats")
    @classmethod
    def _runs(cls, repeats: int | None) -> int | None:
        if repeats is not None and repeats < 1:
            raise ValueError(
                f"eval.repeats is {repeats}; it counts each model's runs: give 2 or more (repeats: 5), or leave "
                f"it out for one run"
            )
        return repeats

    @model_validator(mode="after")
    def _floor_needs_two_runs(self) -> EvalConfig:
        if self.noise_floor and self.repeats == 1:
            raise ValueError(
                "eval.noise_floor (--noise-floor) measures how far two runs of a model differ, but eval.repeats is 1; "
                f"give eval.repeats 2 or more, or leave it out ({NOISE_FLOOR_RUNS} runs)"
            )
        return self

    @field_validator("device")
    @classmethod
    def _device_syntax(cls, device: str) -> str:
        if not _DEVICE_RE.match(device):
            raise ValueError(f"unknown device '{device}' (use auto, cpu, cuda, cuda:N or mps)")
        return device

    @model_validator(mode="after")
    def _chunks_of_whole_batches(self) -> EvalConfig:
        if self.chunk_size is not None and self.chunk_size % self.batch_size:
            whole = max(self.batch_size, self.chunk_size // self.batch_size * self.batch_size)
            raise ValueError(
                f"eval.chunk_size={self.chunk_size} is not a multiple of eval.batch_size="
                f"{self.batch_size}: every chunk would end in a part-filled batch; use {whole} or "
                f"{whole + self.batch_size}"
            )
        return self

    @property
    def sequential_chunk_size(self) -> int:
        """Examples per look of ``until_decided``: ``chunk_size``, or the smallest multiple of the batch size ≥ 64."""
        return self.chunk_size or self.batch_size * -(-_DEFAULT_CHUNK // self.batch_size)


class StatsConfig(_Section):
    """How the paired statistics are computed (see :func:`headtohead.stats.analyse`)."""

    alpha: float = Field(default=0.05, gt=0.0, lt=0.5, description="Significance level (after Holm).")
    n_resamples: int = Field(default=2000, ge=100, description="Bootstrap resamples per interval.")
    ci_method: Literal["bca", "percentile"] = "bca"
    ece_bins: int = Field(default=15, ge=2, description="Bins of the expected calibration error.")
    metrics: list[str] = Field(
        default_factory=list,
        description="Metrics of the catalogue (headtohead.metrics) reported beside the default ones, "
        "with intervals and pair differences: " + ", ".join(names(default=False)) + ".",
    )

    @field_validator("metrics")
    @classmethod
    def _catalogue_metrics(cls, picked: list[str]) -> list[str]:
        return check_names(picked)


class Experiment(_Section):
    """A whole comparison: one dataset, N models, how to evaluate them."""

    name: str = Field(default="experiment", min_length=1)
    seed: int = 42
    data: DataConfig
    # each entry its family's class, by the discriminated union on kind (it dumps its family's keys)
    models: list[AnyModel] = Field(min_length=1)
    eval: EvalConfig = Field(default_factory=EvalConfig)
    stats: StatsConfig = Field(default_factory=StatsConfig)
    speed: SpeedConfig = Field(default_factory=SpeedConfig)
    decide: DecideConfig = Field(
        default_factory=DecideConfig,
        description="One decision across quality, speed and cost: dominance and the front (docs/statistics.md §17).",
    )
    execution: ExecutionConfig = Field(default_factory=ExecutionConfig)
    sweep: SweepConfig | None = Field(default=None, description="Optimisation variants for h2h sweep.")
    train: TrainConfig | None = Field(default=None, description="Identical fine-tuning of every model (h2h train).")

    @model_validator(mode="before")
    @classmethod
    def _repeats_for_all(cls, data: Any) -> Any:
        """``eval.repeats`` written into every model that runs and says no ``repeats`` of its own.

        A model of stored answers (``kind: predictions``, a harness's log) is read once: there is nothing to
        re-run; a model asked with several prompts keeps its prompts (one factor per model).
        """
        if not isinstance(data, Mapping) or not isinstance(data.get("eval"), Mapping):
            return data
        repeats = data["eval"].get("repeats")
        if repeats is None and data["eval"].get("noise_floor") in (True, "true", "True"):
            repeats = NOISE_FLOOR_RUNS  # --noise-floor: every model that runs, run several times
        if not isinstance(repeats, int) or isinstance(repeats, bool) or repeats < 2:
            return data
        models = data.get("models")
        if not isinstance(models, list):
            return data

        def runs(entry: Any) -> bool:
            if not isinstance(entry, Mapping) or entry.get("repeats") is not None or entry.get("prompts"):
                return False
            kind = entry.get("kind")
            return kind in MODEL_KINDS and family(str(kind)).settings.reruns

        return {**data, "models": [{**m, "repeats": repeats} if runs(m) else m for m in models]}

    @model_validator(mode="after")
    def _unique_model_names(self) -> Experiment:
        seen: set[str] = set()
        for model in self.models:
            if model.name in seen:
                raise ValueError(f"model name '{model.name}' is used twice; give each model a unique name")
            seen.add(model.name)
        return self

    @model_validator(mode="after")
    def _floor_has_a_model_to_rerun(self) -> Experiment:
        if self.eval.noise_floor and not any(
            m.pass_specs() and m.pass_specs()[0].factor == "repeat" for m in self.models
        ):
            raise ValueError(
                f"--noise-floor (eval.noise_floor) runs each model several times to see how far its runs differ, but "
                f"no model here runs again ({listing([m.name for m in self.models])}: stored answers, several "
                f"prompts or repeats: 1 — nothing to re-run); give predictions of several runs as passes: repeat, "
                f"or drop --noise-floor"
            )
        return self

    @model_validator(mode="after")
    def _parts_of_the_run(self) -> Experiment:
        """A model built from others (a cascade) names two other models of the run, each measured once."""
        names = {m.name for m in self.models}
        for model in self.models:
            for part in model.parts():
                where = f"model '{model.name}' (kind {model.kind})"
                if part == model.name:
                    raise ValueError(f"{where} names itself as a part; name two other models of the run")
                if part not in names:
                    raise ValueError(
                        f"{where} names '{part}', which is not a model of the run{did_you_mean(part, sorted(names))}; "
                        f"name one of: {', '.join(sorted(names - {model.name}))}"
                    )
                other = self.model(part)
                if other.parts() or other.pass_specs():
                    raise ValueError(
                        f"{where} names '{part}', which is {'built from other models' if other.parts() else 'measured several ways (passes)'}; "
                        f"a cascade's parts are models measured once"
                    )
            if len(set(model.parts())) < len(model.parts()):
                raise ValueError(
                    f"model '{model.name}' (kind {model.kind}) names '{model.parts()[0]}' twice; name two different models"
                )
        built = [m.name for m in self.models if m.parts()]
        if built and self.eval.until_decided:
            raise ValueError(
                f"--until-decided (eval.until_decided) decides pairs as examples arrive, but {', '.join(built)} is "
                f"built from other models once every example is in; drop --until-decided or the cascade"
            )
        return self

    @model_validator(mode="after")
    def _capacity_has_endpoints(self) -> Experiment:
        """Scenario capacity probes endpoints; a local model's capacity is the Server scenario's."""
        if "capacity" not in self.speed.scenarios or "server" in self.speed.scenarios:
            return self
        local = [m.name for m in self.models if not m.serves_requests]
        if local:
            raise ValueError(
                f"speed scenario capacity probes endpoint models (kind: openai), but {', '.join(local)} "
                f"is not one; add scenario server for local models' capacity, or drop it from the run"
            )
        return self

    @model_validator(mode="after")
    def _until_decided_fits(self) -> Experiment:
        if not self.eval.until_decided:
            return self
        if len(self.models) < 2:
            raise ValueError(
                f"--until-decided (eval.until_decided) stops when a comparison is decided, but the "
                f"experiment has {len(self.models)} model; add a second model or drop --until-decided"
            )
        prompted = [m.name for m in self.models if m.pass_specs() and m.pass_specs()[0].factor == "prompt"]
        if prompted:
            raise ValueError(
                f"--until-decided (eval.until_decided) decides pairs of models as examples arrive, but "
                f"{', '.join(prompted)} is asked with several prompts (prompts:, or files as passes:), compared "
                f"pooled over its prompts once every example is in, which has no sequential test; drop "
                f"--until-decided or prompts:"
            )
        repeated = [m.name for m in self.models if m.pass_specs()]
        if repeated:
            raise ValueError(
                f"--until-decided (eval.until_decided) decides pairs of models as examples arrive, but "
                f"{', '.join(repeated)} is run several times (repeats:, or files as passes: repeat), compared over "
                f"its runs once every example is in, which has no sequential test yet; drop --until-decided or repeats"
            )
        if self.execution.mode != "local" or self.execution.shards > 1:
            what = (
                f"mode: {self.execution.mode}" if self.execution.mode != "local" else f"shards: {self.execution.shards}"
            )
            raise ValueError(
                f"--until-decided (eval.until_decided) cannot be combined with execution.{what}: every "
                f"model evaluates each chunk in turn in this process; use execution.mode: local "
                f"with one shard, or drop --until-decided"
            )
        return self

    @model_validator(mode="after")
    def _decide_scenario_timed(self) -> Experiment:
        scenario = self.decide.scenario
        if scenario is not None and scenario not in self.speed.scenarios:
            raise ValueError(
                f"decide.scenario is {scenario}, which speed.scenarios {self.speed.scenarios} does not time; "
                f"add {scenario} to speed.scenarios or name one of them"
            )
        return self

    @property
    def decide_scenario(self) -> str | None:
        """The timed scenario "faster" is read on: ``decide.scenario``, else the first of ``speed.scenarios`` timed in rounds."""
        if self.decide.scenario is not None:
            return self.decide.scenario
        return next((s for s in self.speed.scenarios if s in ("offline", "single_stream")), None)

    def model(self, name: str) -> ModelConfig:
        """Return the model called ``name``."""
        for model in self.models:
            if model.name == name:
                return model
        raise KeyError(name)
