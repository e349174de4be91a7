"""kind: openai — answers read as labels, log-probabilities as class probabilities, and the client's faults.

The client is checked against the scripted server (testing/chat_server.py), which counts at the
server what a test wants to know: requests received, the most in flight at once, when each came.
"""

from __future__ import annotations

import math
import threading
import time
from collections import defaultdict

import numpy as np
import pytest

from headtohead.adapters.chat_client import EndpointRefused, ask_all, retry_delay
from headtohead.adapters.prompting import TokenChoice, label_probabilities, parse_answer
from headtohead.adapters.response_cache import ResponseCache, cache_key
from headtohead.config.schema import model_settings
from headtohead.testing.chat_server import Reply, ScriptedChatServer, last_prompt_text

LABELS = ["negative", "neutral", "positive"]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("positive", 2),
        ("  Positive. ", 2),
        ('"NEGATIVE"', 0),
        ("neu", 1),
        ("pos", 2),
        ("The sentiment is positive.", 2),
        ("<think>negative or positive?</think> neutral", 1),
        ("ne", None),  # begins two labels
        ("positive or negative", None),  # names two
        ("I cannot tell.", None),
        ("", None),
        ("<b>hard</b> to say", None),
    ],
)
def test_answers_are_read_as_labels_or_unparseable(answer, expected):
    assert parse_answer(answer, LABELS) == expected


def test_a_label_inside_a_longer_one_counts_as_the_longer():
    assert parse_answer("This is not spam at all", ["spam", "not spam"]) == 1
    assert parse_answer("spam", ["spam", "not spam"]) == 0


def test_logprobs_become_class_probabilities_renormalised_with_the_mass_outside():
    first = TokenChoice("pos", math.log(0.6), (("pos", math.log(0.6)), ("neg", math.log(0.25)), ("I", math.log(0.1))))
    mass = label_probabilities([first], ["negative", "positive"])
    assert mass.proba == pytest.approx([0.25 / 0.85, 0.6 / 0.85])
    assert mass.outside == pytest.approx(0.15)
    # 'ne' begins negative and neutral: the next position, conditioned on it, splits its mass
    ne = TokenChoice("ne", math.log(0.8), (("ne", math.log(0.8)), ("pos", math.log(0.2))))
    then = TokenChoice("gative", math.log(0.75), (("gative", math.log(0.75)), ("utral", math.log(0.25))))
    mass = label_probabilities([ne, then], LABELS)
    assert mass.proba == pytest.approx([0.8 * 0.75, 0.8 * 0.25, 0.2])
    assert mass.outside == pytest.approx(0.0, abs=1e-12)


def test_retry_after_is_honoured_else_backoff_grows():
    import random

    rng = random.Random(1)  # noqa: S311 - jitter
    assert retry_delay(0, "2", rng) == 2.0
    assert retry_delay(0, "Wed, 21 Oct 2015 07:28:00 GMT", rng) == 0.0  # a date in the past
    assert max(retry_delay(5, None, rng) for _ in range(200)) > 4 * max(retry_delay(1, None, rng) for _ in range(200))


def test_the_cache_key_holds_everything_that_decides_an_answer(tmp_path):
    messages = [{"role": "user", "content": "x"}]
    base = cache_key("http://h/v1", "m", messages, {"temperature": 0.0})
    assert base == cache_key("http://h/v1/", "m", messages, {"temperature": 0.0})
    assert (
        len(
            {
                base,
                cache_key("http://h/v1", "m2", messages, {"temperature": 0.0}),
                cache_key("http://h/v1", "m", [{"role": "user", "content": "y"}], {"temperature": 0.0}),
                cache_key("http://h/v1", "m", messages, {"temperature": 0.5}),
            }
        )
        == 4
    )
    cache = ResponseCache(tmp_path / "r.sqlite")
    cache.put(base, {"content": "positive"}, 0.1)
    assert ResponseCache(tmp_path / "r.sqlite").get_many([base, "other"]) == {base: ({"content": "positive"}, 0.1)}


def test_endpoint_keys_are_checked_where_they_are_written():
    entry = {"name": "llm", "kind": "openai", "source": "m", "base_url": "http://127.0.0.1:8000/v1"}
    assert model_settings(**entry).max_concurrency == 8
    for bad, message in (
        ({"prompt": "Classify: {labels}"}, "no {text}"),
        ({"prompt": "{text} {examples}"}, "may use only"),
        ({"base_url": "http://user:secret@127.0.0.1/v1"}, "must not carry credentials"),
        ({"base_url": "127.0.0.1:8000"}, "not an http"),
        ({"base_url": None}, "needs base_url"),
    ):
        with pytest.raises(ValueError, match=message) as caught:
            model_settings(**{**entry, **bad})
        assert "secret" not in str(caught.value)
    with pytest.raises(ValueError, match="of kind: openai only"):
        model_settings(name="m", kind="sklearn", source="m.skops", max_concurrency=4)


class _PerPrompt:
    """A script that replies by the prompt and by how many times that prompt was asked; records arrival times."""

    def __init__(self, reply):  # reply(prompt, nth) -> Reply
        self.reply, self.seen, self.times = reply, defaultdict(int), defaultdict(list)
        self.lock = threading.Lock()

    def __call__(self, number, payload):
        prompt = last_prompt_text(payload)
        with self.lock:
            self.seen[prompt] += 1
            nth = self.seen[prompt]
            self.times[prompt].append(time.monotonic())
        return self.reply(prompt, nth)


def _ask(server, prompts, **options):
    payloads = [{"model": "m", "messages": [{"role": "user", "content": p}]} for p in prompts]
    return ask_all(
        server.base_url,
        {},
        payloads,
        [f"k{i}" for i in range(len(prompts))],
        cache=None,
        **{"max_concurrency": 4, "timeout_s": 5.0, "max_retries": 3, **options},
    )


def test_a_429_storm_with_retry_after_loses_nothing():
    script = _PerPrompt(
        lambda p, nth: Reply("status", status=429, retry_after="0.3") if nth <= 2 else Reply(text="positive")
    )
    prompts = [f"example {i}" for i in range(12)]
    with ScriptedChatServer(script) as server:
        exchanges, stats = _ask(server, prompts, max_concurrency=6)
    assert all(e.body is not None and e.body["content"] == "positive" for e in exchanges)
    assert server.counts.statuses == {429: 24, 200: 12}
    assert stats.requests == 36 and stats.retries == 24 and stats.statuses == {"429": 24, "200": 12}
    for times in script.times.values():  # each try waited at least what Retry-After said
        assert np.diff(times).min() >= 0.29


def test_hanging_requests_time_out_are_retried_then_counted_as_failures():
    script = _PerPrompt(
        lambda p, nth: (
            Reply("hang", delay_s=5.0)
            if p == "stuck"
            else Reply("answer", text="negative", delay_s=0.6)
            if p == "slow" and nth == 1
            else Reply(text="negative")
        )
    )
    with ScriptedChatServer(script) as server:
        exchanges, stats = _ask(server, ["fine", "stuck", "slow"], timeout_s=0.3, max_retries=1)
    fine, stuck, slow = exchanges
    assert fine.body is not None and slow.body is not None and slow.tries == 2  # slow: timed out once, then answered
    assert stuck.body is None and stuck.error == "timeout (after 2 tries)"
    assert script.seen["stuck"] == 2 and stats.statuses["timeout"] == 3


def test_malformed_bodies_and_reset_connections_are_retried():
    def reply(prompt, nth):
        if prompt == "always broken":
            return Reply("malformed")
        if nth == 1:
            return Reply("malformed") if prompt.startswith("m") else Reply("reset")
        return Reply(text="positive")

    with ScriptedChatServer(_PerPrompt(reply)) as server:
        exchanges, stats = _ask(server, ["m1", "m2", "r1", "r2", "always broken"], max_retries=2)
    assert [e.body is not None for e in exchanges] == [True, True, True, True, False]
    assert exchanges[-1].error == "malformed response (after 3 tries)"
    assert stats.statuses["connection reset"] == 2
    assert stats.statuses["200"] == 2 * 2 + 2 + 3  # malformed bodies came with status 200


def test_requests_in_flight_never_exceed_max_concurrency_and_keep_it_full():
    with ScriptedChatServer(lambda n, p: Reply(text="positive", delay_s=0.05)) as server:
        exchanges, stats = _ask(server, [f"e{i}" for i in range(40)], max_concurrency=3)
    assert all(e.body is not None for e in exchanges)
    assert server.counts.requests == 40 and server.counts.max_in_flight == 3
    assert stats.peak_in_flight == 3  # the client counts what the server saw


def test_a_refused_key_stops_the_pass_with_the_servers_reason():
    with (
        ScriptedChatServer(lambda n, p: Reply("status", status=401)) as server,
        pytest.raises(EndpointRefused, match="HTTP 401: scripted 401"),
    ):
        _ask(server, ["a", "b"])


def test_the_example_comparing_minilm_with_an_endpoint_validates():
    from pathlib import Path

    from headtohead.config import load_experiment

    exp = load_experiment(Path(__file__).resolve().parents[2] / "examples" / "sst2-minilm-vs-llm.yaml")
    llm = exp.model("llm")
    assert llm.kind == "openai" and llm.few_shot == 2 and llm.price is not None
    assert exp.speed.price_per_hour is not None  # the encoder's cost per million beside the LLM's


def test_a_missing_httpx_names_the_extra_to_install(monkeypatch):
    import sys

    from headtohead.adapters import adapter_class
    from headtohead.errors import ModelError

    for name in ("headtohead.adapters.openai_chat", "headtohead.adapters.chat_client"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setitem(sys.modules, "httpx", None)  # import httpx fails as if it were not installed
    with pytest.raises(
        ModelError,
        match=r"""model kind 'openai' needs httpx, which is not installed; install it """
        r"""with: pip install "headtohead\[llm\]\"""",
    ):
        adapter_class("openai")


@pytest.mark.parametrize(
    ("models", "said"),
    [
        (Reply("status", status=500, message="Internal Server Error"), "answered HTTP 500: Internal Server Error"),
        (Reply("malformed"), "answered with no list of models that could be read"),
    ],
)
def test_a_models_list_that_cannot_be_read_leaves_the_name_unchecked_in_one_warning(models, said):
    from headtohead.adapters.openai_chat import OpenAIChatAdapter

    with ScriptedChatServer(lambda n, p: Reply(text="positive"), models=models) as server:
        entry = {"name": "llm", "kind": "openai", "source": "gpt-9", "base_url": server.base_url}
        warnings = OpenAIChatAdapter.check_before_run(model_settings(**entry))
        assert server.counts.requests == 0  # only /models was asked
    assert len(warnings) == 1
    assert f"{server.base_url}/models {said}, so the model name 'gpt-9' (source) could not be checked" in warnings[0]
    assert "unchecked" in warnings[0]


def test_a_refusal_keeps_the_servers_reason_from_its_body():
    script = _PerPrompt(lambda p, nth: Reply("status", status=400, message="Server is pinned to 'a'; requested 'b'."))
    with ScriptedChatServer(script) as server:
        exchanges, stats = _ask(server, ["x", "y"])
    assert [e.error for e in exchanges] == ["HTTP 400: Server is pinned to 'a'; requested 'b'."] * 2
    assert not any(e.missing for e in exchanges) and stats.retries == 0  # the example's own failure: not retried
