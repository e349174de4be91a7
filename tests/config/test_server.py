"""speed.server, latency_bound_ms, price_per_hour: defaults, validation, and one-line errors."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from headtohead.config.loading import experiment_from_dict
from headtohead.config.server import ServerConfig
from headtohead.config.speed import SpeedConfig
from headtohead.errors import ConfigError


def test_defaults_keep_a_cpu_run_short():
    config = SpeedConfig(scenarios=["server"])
    server = config.server
    assert config.latency_bound_ms == 50.0 and config.price_per_hour is None and config.energy
    assert not config.loadgen_crosscheck
    assert server.trial_seconds <= 1.0 and server.repeats == 3 and server.min_queries >= 459  # LoadGen's p99 minimum
    assert SpeedConfig.model_validate(config.model_dump()) == config


@pytest.mark.parametrize(
    "bad",
    [
        {"latency_bound_ms": 0},
        {"latency_bound_ms": -5},
        {"price_per_hour": 0},
        {"price_per_hour": -1.0},
        {"server": {"max_batch": 0}},
        {"server": {"precision": 1.5}},
        {"server": {"min_qps": 10, "max_qps": 5}},
        {"server": {"start_qps": 1, "min_qps": 5}},
        {"server": {"max_btach": 8}},
    ],
)
def test_invalid_values_are_rejected(bad):
    with pytest.raises(ValidationError):
        SpeedConfig(**bad)


@pytest.mark.parametrize(
    ("speed", "where"),
    [
        ({"price_per_hour": 0}, "speed.price_per_hour"),
        ({"latency_bound_ms": 0}, "speed.latency_bound_ms"),
    ],
)
def test_bad_values_in_an_experiment_are_one_line(speed, where):
    raw = {
        "data": {"path": "sklearn:iris"},
        "models": [{"name": "a", "kind": "sklearn", "source": "a.skops"}],
        "speed": {"scenarios": ["server"], **speed},
    }
    with pytest.raises(ConfigError) as info:
        experiment_from_dict(raw)
    assert where in str(info.value) and "greater than 0" in str(info.value) and "\n" not in str(info.value)


def test_server_section_documents_every_field():
    assert all(field.description for field in ServerConfig.model_fields.values())
