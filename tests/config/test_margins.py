"""Margins are read once, where they enter: the grammar, its one-line errors, floats checked by the same rules."""

from __future__ import annotations

import math

import pytest
import yaml

from headtohead.config import load_experiment
from headtohead.config.margins import parse_accuracy_margin, parse_slowdown_margin
from headtohead.config.sweep import SweepConfig
from headtohead.errors import ConfigError


@pytest.mark.parametrize(
    "value, share",
    [("0.5pp", 0.005), (" 2 pp ", 0.02), ("0.005", 0.005), (".5pp", 0.005), ("5e-3", 0.005), (0.005, 0.005), (0, 0.0)],
)
def test_accuracy_margins_are_points_or_shares(value, share):
    assert parse_accuracy_margin(value) == share


@pytest.mark.parametrize(
    "value, share", [("5%", 0.05), ("0.05", 0.05), ("1.05x", 0.05), ("1.05×", 0.05), ("12.5 %", 0.125), (0.05, 0.05)]
)
def test_slowdown_margins_are_percent_shares_or_time_ratios(value, share):
    assert parse_slowdown_margin(value) == share


@pytest.mark.parametrize(
    "parse, value, message",
    [
        (parse_accuracy_margin, "0.5%", "--max-accuracy-drop 0.5%: '%' is ambiguous"),
        (parse_accuracy_margin, "", "not a number"),
        (parse_accuracy_margin, "1pp5", "not a number"),
        (parse_accuracy_margin, -0.01, "--max-accuracy-drop -0.01: a margin cannot be negative"),
        (parse_accuracy_margin, 5.0, "did you mean 5pp"),  # a float is checked by the same rules
        (parse_accuracy_margin, math.inf, "not a finite number"),
        (parse_slowdown_margin, "0.5x", "a time ratio below 1"),
        (parse_slowdown_margin, 1.5, "means 2.5× the time"),
    ],
)
def test_bad_margins_are_one_line_naming_the_option(parse, value, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")) as info:
        parse(value)
    assert len(str(info.value).splitlines()) == 1


def test_the_message_names_the_option_it_came_from():
    with pytest.raises(ConfigError, match=r"^--delta 5: .*did you mean 5pp\?$"):
        parse_accuracy_margin("5", option="--delta")
    with pytest.raises(ConfigError, match=r"^'5': .*did you mean 5pp\?$"):  # a key of the file: its value only
        parse_accuracy_margin("5", option=None)


def test_the_sweep_section_reads_the_same_grammar():
    assert (
        SweepConfig(max_accuracy_drop="1pp").max_accuracy_drop == SweepConfig(max_accuracy_drop=0.01).max_accuracy_drop
    )
    assert SweepConfig().max_accuracy_drop == 0.01


def test_a_bad_margin_in_the_file_names_the_file_line_and_key(tmp_path):
    path = tmp_path / "exp.yaml"
    raw = {
        "data": {"path": "sklearn:iris"},
        "models": [{"name": "a", "kind": "python", "source": "headtohead.testing.models:tiny_mlp"}],
        "sweep": {"precision": ["fp32"], "max_accuracy_drop": "1%"},
    }
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    with pytest.raises(ConfigError) as info:
        load_experiment(path)
    message = str(info.value)
    assert "sweep.max_accuracy_drop" in message and "'%' is ambiguous" in message and "write 1pp" in message
    assert str(path) in message and len(message.splitlines()) == 1
    raw["sweep"]["max_accuracy_drop"] = "1pp"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    assert load_experiment(path).sweep.max_accuracy_drop == 0.01
