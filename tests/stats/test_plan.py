"""``h2h plan``: the one-sentence sample-size answer and its input errors."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from headtohead.cli.plan import plan
from headtohead.errors import ConfigError
from headtohead.stats.power import mcnemar_sample_size, plan_sample_size


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("plan")(plan)  # exactly how cli/main.py registers it
    app.command("noop")(lambda: None)  # a second command keeps "plan" a subcommand
    return app


def test_plan_prints_one_sentence_with_the_number() -> None:
    result = CliRunner().invoke(_app(), ["plan", "--accuracy", "0.90", "--delta", "0.005", "--discordance", "0.06"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == (
        "To detect a 0.5 pp accuracy difference at 90 % accuracy with 80 % power (α = 0.05, two-sided McNemar; "
        "assumed discordance 6 %) you need 18,815 examples; at 18,815 the McNemar test headtohead runs has "
        "80.0 % power (exact)."
    )


def test_plan_prints_the_power_it_promises_and_holms_level_with_more_models() -> None:
    result = CliRunner().invoke(
        _app(), ["plan", "--accuracy", "0.9", "--delta", "0.05", "--discordance", "0.1", "--models", "3"]
    )
    assert result.exit_code == 0, result.output
    n = mcnemar_sample_size(0.9, 0.05, 0.1, n_comparisons=3)
    assert f"you need {n:,} examples; at {n:,} the McNemar test headtohead runs has 80.0 % power" in result.output
    assert "Holm over 3 pairs, power at its first step α/3 = 0.01667" in result.output


def test_plan_without_discordance_says_what_it_assumed() -> None:
    result = CliRunner().invoke(_app(), ["plan", "--accuracy", "0.9", "--delta", "0.005", "--power", "0.9"])
    assert result.exit_code == 0, result.output
    n = mcnemar_sample_size(0.9, 0.005, power=0.9)
    assert f"you need {n:,} examples" in result.output
    assert "assumed discordance 17.6 %, i.e. independent errors" in result.output
    assert "90 % power" in result.output


@pytest.mark.parametrize(
    "args, match",
    [
        (dict(accuracy=1.5, delta=0.01), "accuracy=1.5"),
        (dict(accuracy=0.9, delta=0.0), "delta=0.0"),
        (dict(accuracy=0.9, delta=0.02, discordance=0.01), "smaller than delta"),
        (dict(accuracy=0.9, delta=0.02, models=1), "n_models=1"),
    ],
)
def test_invalid_inputs_raise_config_error(args: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        plan_sample_size(args["accuracy"], args["delta"], args.get("discordance"), n_models=args.get("models", 2))
    cli = ["plan", "--accuracy", str(args["accuracy"]), "--delta", str(args["delta"])]
    if "discordance" in args:
        cli += ["--discordance", str(args["discordance"])]
    if "models" in args:
        cli += ["--models", str(args["models"])]
    result = CliRunner().invoke(_app(), cli)
    assert isinstance(result.exception, ConfigError)  # cli/main.py turns it into one line and exit code 2
