"""Experiment configuration: typed records and the loader that validates them."""

from headtohead.config.loading import (
    apply_overrides,
    experiment_from_dict,
    load_experiment,
    load_train_experiment,
    parse_override,
)
from headtohead.config.schema import (
    MODEL_KINDS,
    DataConfig,
    EvalConfig,
    Experiment,
    ModelConfig,
    SplitConfig,
    StatsConfig,
    model_settings,
)
from headtohead.config.speed import FixedShape, SpeedConfig

__all__ = [
    "Experiment",
    "DataConfig",
    "SplitConfig",
    "ModelConfig",
    "model_settings",
    "EvalConfig",
    "StatsConfig",
    "SpeedConfig",
    "FixedShape",
    "MODEL_KINDS",
    "load_experiment",
    "load_train_experiment",
    "experiment_from_dict",
    "apply_overrides",
    "parse_override",
]
