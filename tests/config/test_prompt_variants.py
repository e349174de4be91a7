"""prompts: on an LLM model — a list of templates or seeded variations — makes it one model with a pass per prompt."""

from __future__ import annotations

import pytest

from headtohead.config import experiment_from_dict
from headtohead.config.schema import Experiment
from headtohead.errors import ConfigError

ENDPOINT = {"kind": "openai", "source": "m", "base_url": "http://127.0.0.1:1/v1"}


def _experiment(**llm) -> Experiment:
    return experiment_from_dict(
        {"data": {"path": "dev.csv"}, "models": [{"name": "llm", **ENDPOINT, **llm}, {"name": "enc", **ENDPOINT}]}
    )


def test_a_list_of_templates_is_one_model_with_a_pass_each_and_a_dumped_experiment_reads_the_same():
    exp = _experiment(prompts=["A: {text}", "B: {text} ({labels})", "C {text}"])
    assert [m.name for m in exp.models] == ["llm", "enc"]  # no pseudo-model per prompt
    specs = exp.model("llm").pass_specs()
    assert [(p.index, p.key, p.factor, p.count) for p in specs] == [
        (0, "p1", "prompt", 3),
        (1, "p2", "prompt", 3),
        (2, "p3", "prompt", 3),
    ]
    assert exp.model("enc").pass_specs() == ()
    again = Experiment.model_validate(exp.model_dump(mode="json"))
    assert again == exp and again.model("llm").pass_specs() == specs


def test_seeded_variations_are_counted_in_the_config_and_made_by_the_family():
    exp = _experiment(prompts={"count": 6, "seed": 1})
    assert [p.key for p in exp.model("llm").pass_specs()] == [f"p{k}" for k in range(1, 7)]
    assert not hasattr(exp.model("llm"), "variant")  # how a variation is made is the family's (adapters)


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ({"prompts": ["A {text}"]}, "prompts lists one template; give two or more, or write it as prompt:"),
        ({"prompts": ["A {text}", "B"]}, "prompt template has no {text}"),
        ({"prompts": ["A {text}", "B {text}"], "prompt": "C {text}"}, "both prompt and a list of prompts are given"),
        ({"prompts": {"count": 1}}, r"prompts\.count: Input should be greater than or equal to 2"),
        ({"prompts": {"count": 3, "vary": ["colour"]}}, r"prompts\.vary\.0: Input should be 'label_order'"),
    ],
)
def test_bad_prompts_are_refused_in_one_line(keys, message):
    with pytest.raises(ConfigError, match=message) as info:
        _experiment(**keys)
    assert "\n" not in str(info.value).strip()
