"""What the transport did is told apart from what the model did: a failure after every retry is missing.

Against the scripted server (testing/chat_server.py), which makes each fault on demand.
"""

from __future__ import annotations

import pytest

from headtohead.adapters.chat_client import RequestLog, ask_all
from headtohead.adapters.openai_chat import exchange_answer
from headtohead.adapters.prompting import AnswerLog, Reading
from headtohead.engines.answers import answers_record
from headtohead.testing.chat_server import Reply, ScriptedChatServer, last_prompt_text

FAULTS = {
    "answer": Reply(text="positive"),
    "refusal": Reply(text="I cannot help with that."),
    "503": Reply("status", status=503, retry_after="0"),
    "malformed": Reply("malformed"),
    "reset": Reply("reset"),
    "hang": Reply("hang", delay_s=2.0),
    "400": Reply("status", status=400),
}


def _ask(base_url: str, prompts: list[str]):
    payloads = [{"model": "m", "messages": [{"role": "user", "content": p}]} for p in prompts]
    return ask_all(
        base_url, {}, payloads, [f"k{i}" for i in range(len(prompts))], cache=None, timeout_s=0.5, max_retries=1
    )


def test_transport_failures_are_missing_and_the_models_own_failures_are_not():
    with ScriptedChatServer(lambda n, payload: FAULTS[last_prompt_text(payload)]) as server:
        exchanges, _ = _ask(server.base_url, list(FAULTS))
        url = server.base_url
    by_fault = dict(zip(FAULTS, exchanges, strict=True))
    assert [name for name, e in by_fault.items() if e.missing] == ["503", "malformed", "reset", "hang"]
    assert by_fault["400"].body is None and not by_fault["400"].missing  # refused for the example: a wrong answer
    assert by_fault["refusal"].body is not None and not by_fault["refusal"].missing
    # the server gone: every try refused, every example missing
    refused, _ = _ask(url, ["a", "b"])
    assert all(e.missing and e.error.startswith("connection refused") for e in refused)


def test_the_record_lists_every_missing_example_apart_from_wrong_answers():
    with ScriptedChatServer(lambda n, payload: FAULTS[last_prompt_text(payload)]) as server:
        exchanges, stats = _ask(server.base_url, list(FAULTS))
    readings = {
        i: Reading.of(exchange_answer(e, None), ["negative", "positive"], None) for i, e in enumerate(exchanges)
    }
    requests = RequestLog(base_url="http://127.0.0.1", passes=[stats], concurrency=8)
    record = answers_record(AnswerLog(model="m", readings=readings, probabilities=False, requests=requests))
    assert record.missing == [2, 3, 4, 5] and record.n_missing == 4
    assert record.n_failed == 5 and record.n_unparseable == 1  # the 400 and the refusal: wrong answers


@pytest.mark.parametrize(("amount", "shown"), [(5.67e-05, "0.0000567"), (0.000906, "0.000906"), (2.27, "2.27")])
def test_costs_are_written_out_not_in_exponent_notation(amount, shown):
    from headtohead.report.words.server import format_money

    assert format_money(amount) == shown
