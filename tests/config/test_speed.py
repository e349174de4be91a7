"""The speed: section: defaults, validation, and that it imports without torch."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pydantic import ValidationError

from headtohead.config.speed import SPEED_SCENARIOS, FixedShape, SpeedConfig


def test_defaults_are_fast_and_valid():
    config = SpeedConfig()
    assert config.enabled and config.memory and config.telemetry
    assert config.scenarios == ["offline", "single_stream"]
    assert config.rounds >= 5 and config.min_seconds <= 5 and config.confidence == 0.95
    assert config.target_ci_halfwidth is None and config.fixed_shape is None


def test_fixed_shape_and_round_trip():
    config = SpeedConfig(fixed_shape={"batch_size": 8, "sequence_length": 128}, target_ci_halfwidth=0.02)
    assert config.fixed_shape == FixedShape(batch_size=8, sequence_length=128)
    assert SpeedConfig.model_validate(config.model_dump()) == config


@pytest.mark.parametrize(
    "bad",
    [
        {"scenarios": ["offline", "batch"]},
        {"scenarios": []},
        {"scenarios": ["offline", "offline"]},
        {"rounds": 2},
        {"min_iterations": 0},
        {"confidence": 1.0},
        {"target_ci_halfwidth": 0.0},
        {"fixed_shape": {"batch_size": 0}},
        {"fixed_shape": {"batch_size": 4, "seq_len": 3}},
        {"warmup_itrations": 3},
    ],
)
def test_invalid_values_are_rejected(bad):
    with pytest.raises(ValidationError):
        SpeedConfig(**bad)


def test_unknown_scenario_message_names_the_choices():
    with pytest.raises(ValidationError, match="single_stream"):
        SpeedConfig(scenarios=["singlestream"])


def test_config_is_frozen():
    with pytest.raises(ValidationError):
        SpeedConfig().rounds = 3  # type: ignore[misc]


def test_all_scenarios_listed():
    assert set(SPEED_SCENARIOS) == set(SpeedConfig.model_fields["scenarios"].annotation.__args__[0].__args__)


def test_importing_the_config_does_not_import_torch():
    code = "import sys, headtohead.config.speed; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
