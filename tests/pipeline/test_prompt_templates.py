"""What an LLM is asked: labels shown under display names with descriptions, and Jinja templates that read the
example's other columns; checked against the prompt text the scripted server received."""

from __future__ import annotations

import json
import threading

import pytest

import headtohead
from headtohead.adapters.prompt_variants import pass_prompt
from headtohead.adapters.prompting import Prompter
from headtohead.config.schema import model_settings
from headtohead.errors import ConfigError
from headtohead.testing.chat_server import Reply, ScriptedChatServer, last_prompt_text
from headtohead.testing.data import make_text_rows, write_text_table

LABELS = ("negative", "positive")
SHOWN = {"negative": "thumbs down", "positive": "thumbs up"}
TOPICS = ("film", "book", "play")


@pytest.fixture()
def rows(tmp_path, monkeypatch):
    monkeypatch.setenv("H2H_CACHE_DIR", str(tmp_path / "cache"))
    rows = make_text_rows(6, classes=LABELS, seed=3)
    for i, row in enumerate(rows):
        row["topic"] = TOPICS[i % 3] if i % 4 else None  # some rows without a topic
    write_text_table(tmp_path / "dev.csv", rows)
    return rows


class Recorder:
    """Answers each prompt with the display name of its true label (then junk), and keeps what was sent."""

    def __init__(self, rows, names) -> None:
        self.truth = {r["text"]: r["label"] for r in rows}
        self.names = names
        self.prompts: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, number, payload) -> Reply:
        prompt = last_prompt_text(payload)
        with self.lock:
            self.prompts.append(prompt)
        text = max((t for t in self.truth if t in prompt), key=len)
        return Reply(text=self.names[self.truth[text]] + "!! and more")


def _experiment(tmp_path, server, **model) -> dict:
    entry = {"name": "llm", "kind": "openai", "source": "m", "base_url": server.base_url, "logprobs": False}
    return {
        "name": "prompts",
        "data": {"path": str(tmp_path / "dev.csv"), "slice_columns": ["topic"]},
        "eval": {"device": "cpu"},
        "stats": {"n_resamples": 200},
        "models": [entry | model],
    }


def test_labels_are_shown_by_their_display_names_and_answers_mapped_back_to_the_datas_labels(tmp_path, rows):
    script = Recorder(rows, SHOWN)
    display = {
        "negative": {"name": "thumbs down", "description": "the reviewer dislikes it"},
        1: {"name": "thumbs up", "description": "the reviewer likes it"},
    }
    template = "Review: {text}\nChoose one of: {labels}\nThey mean:\n{label_descriptions}"
    with ScriptedChatServer(script) as server:
        outcome = headtohead.run(
            _experiment(tmp_path, server, prompt=template, label_display=display), out_dir=tmp_path / "out"
        )
    assert len(script.prompts) == len(rows)
    for prompt in script.prompts:
        assert "Choose one of: thumbs down, thumbs up\n" in prompt
        assert prompt.endswith("They mean:\nthumbs down: the reviewer dislikes it\nthumbs up: the reviewer likes it")
        assert "negative" not in prompt.split("Choose", 1)[1] and "positive" not in prompt.split("Choose", 1)[1]
    assert outcome.result.model("llm").quality.accuracy == 1.0  # "thumbs up!! …" read as positive
    answers = [json.loads(line) for line in (tmp_path / "out" / "answers" / "llm.jsonl").read_text().splitlines()]
    assert {(a["answer"].split("!!")[0], a["label"]) for a in answers} == {
        ("thumbs down", "negative"),
        ("thumbs up", "positive"),
    }
    assert all(a["label"] == a["gold"] and a["rule"] == "label first" for a in answers)


def test_a_jinja_template_reads_the_examples_other_columns(tmp_path, rows):
    script = Recorder(rows, {label: label for label in LABELS})
    template = "{% if topic %}A {{ topic }} review.\n{% endif %}{{ text }}\nAnswer {{ labels | upper }}."
    with ScriptedChatServer(script) as server:
        outcome = headtohead.run(_experiment(tmp_path, server, prompt=template), out_dir=tmp_path / "out")
    expected = {
        (f"A {r['topic']} review.\n" if r["topic"] else "") + f"{r['text']}\nAnswer NEGATIVE, POSITIVE." for r in rows
    }
    assert set(script.prompts) == expected and len(script.prompts) == len(rows)
    assert outcome.result.model("llm").quality.accuracy == 1.0


def test_a_column_the_data_does_not_keep_is_one_line_before_any_request(tmp_path, rows):
    script = Recorder(rows, {label: label for label in LABELS})
    with ScriptedChatServer(script) as server:
        with pytest.raises(ConfigError) as error:
            headtohead.run(_experiment(tmp_path, server, prompt="{{ title }}: {{ text }}"), out_dir=tmp_path / "out")
    message = str(error.value)
    assert "\n" not in message and "'title'" in message and "keeps 'topic'" in message
    assert "data.slice_columns" in message
    assert script.prompts == []


def test_label_display_against_the_data_is_one_line_before_any_request(tmp_path, rows):
    script = Recorder(rows, SHOWN)
    with ScriptedChatServer(script) as server:
        with pytest.raises(ConfigError, match=r"label_display names a label the data does not have \('neutral'\)"):
            headtohead.run(_experiment(tmp_path, server, label_display={"neutral": "meh"}), out_dir=tmp_path / "o")
        with pytest.raises(ConfigError, match="label_display names it twice"):
            headtohead.run(
                _experiment(tmp_path, server, label_display={"negative": "bad", 0: "awful"}), out_dir=tmp_path / "o"
            )
        with pytest.raises(ConfigError, match="shows 'positive' for two labels"):  # a display name is another label
            headtohead.run(_experiment(tmp_path, server, label_display={0: "positive"}), out_dir=tmp_path / "o")
    assert script.prompts == []


def _entry(**keys) -> dict:
    return {"name": "llm", "kind": "openai", "source": "m", "base_url": "http://127.0.0.1:1/v1"} | keys


@pytest.mark.parametrize(
    ("keys", "said"),
    [
        ({"label_display": {0: "good", 1: " Good"}}, "label_display shows 'good' for more than one label"),
        ({"prompt": "{{ text }", "few_shot": 0}, "not valid Jinja"),
        ({"prompt": "{% for x in labels %}{{ x }}{% endfor %}"}, r"has no \{\{ text \}\}"),
        ({"prompt": "{{ text }}", "prompts": {"count": 3}}, "write the variations out as a list"),
        ({"prompt": "{title}: {text}"}, r"the example's other columns: a Jinja template"),
        ({"kind": "causal-lm", "prompt": "{{ title }} {{ text }}"}, "reach kind: openai's prompts"),
    ],
)
def test_bad_prompt_keys_are_refused_where_they_are_written(keys, said):
    entry = _entry(**keys)
    if entry["kind"] == "causal-lm":
        del entry["base_url"]
    with pytest.raises(ValueError, match=said):
        model_settings(**entry)


def test_a_list_of_jinja_templates_is_one_pass_each_and_variants_keep_display_names():
    model = model_settings(
        **_entry(prompts=["{{ text }} ({{ labels }})", "Say {{ labels }}: {{ text }}"], label_display={0: "no"})
    )
    passes = [pass_prompt(model, k) for k in range(2)]
    assert [Prompter(p, LABELS, v).prompt("hi") for p, v in passes] == ["hi (no, positive)", "Say no, positive: hi"]
    varied = model_settings(**_entry(prompts={"count": 6, "seed": 1}, label_display={0: "no"}))
    shown = [Prompter(p, LABELS, v).prompt("hi") for p, v in (pass_prompt(varied, k) for k in range(6))]
    assert all(("no" in s.lower()) and ("negative" not in s.lower()) for s in shown)


def test_a_text_template_with_literal_braces_is_still_str_format():
    model = model_settings(**_entry(prompt="Answer {{one}} of {labels}: {text}"))
    assert Prompter(model, LABELS).prompt("hi") == "Answer {one} of negative, positive: hi"


def test_few_shot_answers_are_the_display_names(tmp_path, rows):
    from headtohead.adapters.prompting import draw_few_shot
    from headtohead.data.base import Dataset

    train = Dataset("t", "text", ["bad film", "good film", "dull", "great"], [0, 1, 0, 1], LABELS)
    prompter = Prompter(model_settings(**_entry(few_shot=1, label_display=SHOWN)), LABELS)
    turns = draw_few_shot(prompter, train, 0, "llm", lambda _: None)
    assert sorted(t["content"] for t in turns if t["role"] == "assistant") == ["thumbs down", "thumbs up"]
