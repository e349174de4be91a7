"""How each pass of a model asked with several prompts is made (adapters.prompt_variants): its template, labels, turns."""

from __future__ import annotations

import numpy as np

from headtohead.adapters.prompt_variants import pass_prompt, restyled
from headtohead.adapters.prompting import Prompter, draw_few_shot
from headtohead.config import experiment_from_dict
from headtohead.data.base import Dataset

ENDPOINT = {"kind": "openai", "source": "m", "base_url": "http://127.0.0.1:1/v1"}


def _llm(**llm):
    exp = experiment_from_dict(
        {"data": {"path": "dev.csv"}, "models": [{"name": "llm", **ENDPOINT, **llm}, {"name": "enc", **ENDPOINT}]}
    )
    return exp.model("llm"), exp.model("enc")


def test_a_listed_template_is_its_pass_prompt_as_written():
    llm, enc = _llm(prompts=["A: {text}", "B: {text} ({labels})", "C {text}"])
    made = [pass_prompt(llm, k) for k in range(3)]
    assert [s.prompt for s, _ in made] == ["A: {text}", "B: {text} ({labels})", "C {text}"]
    assert [(v.index, v.count) for _, v in made] == [(1, 3), (2, 3), (3, 3)]
    assert all(s.name == "llm" and s.prompts is None for s, _ in made)
    assert pass_prompt(enc, None) == (enc, None)  # a model asked once: as it is
    assert pass_prompt(llm, None)[0].prompt == "A: {text}"  # loaded without a pass (the speed pass): the first


def test_seeded_variations_start_with_the_template_as_written_and_repeat_with_their_seed():
    llm, enc = _llm(prompts={"count": 6, "seed": 1})
    passes = [pass_prompt(llm, k) for k in range(6)]
    assert passes[0][0].prompt == enc.prompt and passes[0][1].label_order_seed is None
    assert len({(s.prompt, v.labels_separator, v.label_order_seed) for s, v in passes}) == 6
    assert [pass_prompt(llm, k) for k in range(6)] == passes
    other, _ = _llm(prompts={"count": 6, "seed": 2})
    assert pass_prompt(other, 1) != passes[1]
    only_order, _ = _llm(prompts={"count": 3, "vary": ["label_order"]})
    made = [pass_prompt(only_order, k) for k in range(3)]
    assert {s.prompt for s, _ in made} == {passes[0][0].prompt} and made[1][1].label_order_seed is not None


def test_restyling_changes_the_templates_words_not_its_fields():
    assert restyled("Text: {text}\n\nLabels: {labels}", "\n---\n", "lower") == "text: {text}\n---\nlabels: {labels}"
    assert restyled("{{x}} {text}", None, "upper") == "{{X}} {text}"


def test_the_prompter_shows_each_variants_labels_and_few_shot_order():
    llm, _ = _llm(prompts={"count": 4, "seed": 0}, few_shot=2, prompt="{labels}#{text}")
    names = ["negative", "neutral", "positive"]
    train = Dataset("train", "text", [f"t{i}" for i in range(12)], np.arange(12) % 3, tuple(names))
    shown = []
    for k in range(4):
        settings, variant = pass_prompt(llm, k)
        prompter = Prompter(settings, names, variant)
        labels = prompter.prompt("x").split("#")[0]
        assert sorted(labels.split(prompter.variant.labels_separator)) == names
        assert prompter.template_text() == f"{labels}#{{text}}"  # the template as this pass renders it
        turns = draw_few_shot(prompter, train, seed=0, model="llm", warn=lambda _: None)
        shown.append((labels, tuple(t["content"] for t in turns if t["role"] == "assistant")))
    assert shown[0][0] == "negative, neutral, positive"  # the first prompt: as written, the data's order
    assert len({labels for labels, _ in shown}) > 1 and len({order for _, order in shown}) > 1
    assert {tuple(sorted(order)) for _, order in shown} == {tuple(sorted(names * 2))}  # the same turns, reordered
