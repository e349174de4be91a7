"""prompts: on an LLM model — a list of templates or seeded variations — becomes one pass per prompt."""

from __future__ import annotations

import numpy as np
import pytest

from headtohead.adapters.prompting import Prompter, draw_few_shot
from headtohead.config import experiment_from_dict
from headtohead.config.models.prompt_variants import restyled
from headtohead.config.schema import Experiment
from headtohead.data.base import Dataset
from headtohead.errors import ConfigError

ENDPOINT = {"kind": "openai", "source": "m", "base_url": "http://127.0.0.1:1/v1"}


def _experiment(**llm) -> Experiment:
    return experiment_from_dict(
        {"data": {"path": "dev.csv"}, "models": [{"name": "llm", **ENDPOINT, **llm}, {"name": "enc", **ENDPOINT}]}
    )


def test_a_list_of_templates_is_one_pass_each_and_a_dumped_experiment_is_not_expanded_again():
    exp = _experiment(prompts=["A: {text}", "B: {text} ({labels})", "C {text}"])
    assert [m.name for m in exp.models] == ["llm@p1", "llm@p2", "llm@p3", "enc"]
    assert [m.prompt for m in exp.models[:3]] == ["A: {text}", "B: {text} ({labels})", "C {text}"]
    assert {(m.variant.of, m.variant.count) for m in exp.models[:3]} == {("llm", 3)}
    assert exp.models[3].variant is None and exp.models[3].prompts is None
    again = Experiment.model_validate(exp.model_dump(mode="json"))
    assert again == exp


def test_seeded_variations_start_with_the_template_as_written_and_repeat_with_their_seed():
    exp = _experiment(prompts={"count": 6, "seed": 1})
    passes = exp.models[:6]
    assert passes[0].prompt == exp.models[6].prompt and passes[0].variant.label_order_seed is None
    assert len({(p.prompt, p.variant.labels_separator, p.variant.label_order_seed) for p in passes}) == 6
    assert _experiment(prompts={"count": 6, "seed": 1}) == exp
    assert _experiment(prompts={"count": 6, "seed": 2}).models[1] != passes[1]
    only_order = _experiment(prompts={"count": 3, "vary": ["label_order"]}).models[:3]
    assert {p.prompt for p in only_order} == {passes[0].prompt} and only_order[1].variant.label_order_seed is not None


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


def test_restyling_changes_the_templates_words_not_its_fields():
    assert restyled("Text: {text}\n\nLabels: {labels}", "\n---\n", "lower") == "text: {text}\n---\nlabels: {labels}"
    assert restyled("{{x}} {text}", None, "upper") == "{{X}} {text}"


def test_the_prompter_shows_each_variants_labels_and_few_shot_order():
    exp = _experiment(prompts={"count": 4, "seed": 0}, few_shot=2, prompt="{labels}#{text}")
    names = ["negative", "neutral", "positive"]
    train = Dataset("train", "text", [f"t{i}" for i in range(12)], np.arange(12) % 3, tuple(names))
    shown = []
    for model in exp.models[:4]:
        prompter = Prompter(model, names)
        labels = prompter.prompt("x").split("#")[0]
        assert sorted(labels.split(model.variant.labels_separator)) == names
        turns = draw_few_shot(prompter, train, seed=0, model=model.name, warn=lambda _: None)
        shown.append((labels, tuple(t["content"] for t in turns if t["role"] == "assistant")))
    assert shown[0][0] == "negative, neutral, positive"  # the first prompt: as written, the data's order
    assert len({labels for labels, _ in shown}) > 1 and len({order for _, order in shown}) > 1
    assert {tuple(sorted(order)) for _, order in shown} == {tuple(sorted(names * 2))}  # the same turns, reordered
