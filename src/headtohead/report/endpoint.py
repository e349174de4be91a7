"""The words about models asked over an endpoint (``kind: openai``): requests, cache, answers, tokens, cost.

Every format shows the same things from :class:`~headtohead.results.endpoint.EndpointRecord`:
one block of lines per endpoint model (:func:`endpoint_lines`), and the unparseable answers with
their raw text (:func:`unparseable_rows`; HTML escapes them through jinja2's autoescape, Markdown
through ``md_escape``, the terminal through rich's ``escape``), and a speed-table row
(:func:`endpoint_speed_row`). A figure that cannot be known is said so, never shown as 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from headtohead.report.rows.summary import NOT_AVAILABLE, NOT_MEASURED, _number
from headtohead.report.words.server import format_money
from headtohead.results.endpoint import EndpointRecord, FailedRequest, RequestTiming
from headtohead.results.records import ModelRecord, RunResult
from headtohead.results.speed import ModelSpeed

__all__ = [
    "endpoint_lines",
    "endpoint_blocks",
    "EndpointBlock",
    "unparseable_rows",
    "endpoint_speed_row",
    "ENDPOINT_SPEED_KEYS",
    "ANSWER_SHOWN_CHARS",
    "ANSWERS_SHOWN",
    "cost_per_million_for_tradeoff",
]

#: Characters of a raw answer shown in a table row (the record keeps up to 2000).
ANSWER_SHOWN_CHARS = 300
#: Unparseable answers listed per model in a report (the others are counted; results.json keeps 1000).
ANSWERS_SHOWN = 20


def _ms(seconds: float) -> str:
    return _number(seconds * 1e3, "ms")


def _requests_line(e: EndpointRecord) -> str:
    asked = e.examples - len(e.from_cache)
    parts = [f"{e.examples:,} examples: {len(e.from_cache):,} answered from the response cache, {asked:,} asked"]
    if e.requests:
        problems = ", ".join(f"{what} ×{n}" for what, n in sorted(e.statuses.items()) if what != "200")
        parts.append(f"{e.requests:,} requests ({e.retries:,} retries{': ' + problems if problems else ''})")
    return "; ".join(parts)


def _answers_line(e: EndpointRecord) -> str:
    unparseable = f"{e.n_unparseable:,} unparseable answer{'s' if e.n_unparseable != 1 else ''}"
    missing = set(e.missing)
    refused = [f for f in e.failed_requests if f.index not in missing]
    failed = f"{e.n_failed_requests - e.n_missing:,} request{'s' if len(refused) != 1 else ''} refused"
    line = f"{unparseable}, {failed}{_reasons(refused)}: each counts as a wrong answer"
    if e.n_missing:
        gone = [f for f in e.failed_requests if f.index in missing]
        line += f"; {e.n_missing:,} never answered{_reasons(gone)}: missing, not wrong"
    return line


def _reasons(failures: list[FailedRequest]) -> str:
    """`` (HTTP 400 ×2, timeout ×1)``: the last try's failure of each request, counted (``""`` for none)."""
    reasons: dict[str, int] = {}
    for f in failures:
        reasons[f.reason] = reasons.get(f.reason, 0) + 1
    return " (" + ", ".join(f"{why} ×{n}" for why, n in reasons.items()) + ")" if reasons else ""


def _tokens_line(e: EndpointRecord) -> str:
    if e.prompt_tokens is None or e.completion_tokens is None:
        tokens = "tokens: not reported by the server for every answer"
    else:
        tokens = f"tokens: {e.prompt_tokens:,} in, {e.completion_tokens:,} out"
    if e.price is None:
        return tokens + "; cost: no price given (price: {input_per_1m, output_per_1m})"
    if e.cost is None:
        return tokens + f"; cost: {NOT_AVAILABLE} (usage missing)"
    return (
        tokens + f"; cost {format_money(e.cost)} at {format_money(e.price.input_per_1m)} / "
        f"{format_money(e.price.output_per_1m)} per million tokens in / out (this run's requests "
        f"{format_money(e.cost_sent or 0.0)}), {format_money(e.cost_per_million or 0.0)} per million predictions"
    )


def _concurrency(t: RequestTiming) -> str:
    """``8``; for a sharded model its bound and its shards' (``2 (2 shards side by side: 1 + 1; …)``)."""
    shares = t.shard_concurrency
    if len(shares) <= 1:
        return str(t.concurrency)
    if sum(shares) > t.concurrency:  # each shard had the whole bound: they ran one at a time
        return f"{t.concurrency} ({len(shares)} shards one after another)"
    seen = f"; most in flight seen {' + '.join(map(str, t.peak_in_flight))}" if t.peak_in_flight else ""
    return f"{t.concurrency} ({len(shares)} shards side by side: {' + '.join(map(str, shares))}{seen})"


def _timing_line(e: EndpointRecord) -> str:
    t = e.timing
    if t is None or t.latency is None:
        why = (
            "every answer came from the response cache"
            if len(e.from_cache) == e.examples
            else "no request was answered in this run"
        )
        return f"latency: not measured ({why})"
    lat = t.latency
    line = (
        f"latency per request at concurrency {_concurrency(t)}: p50 {_ms(lat['p50'])} / p90 {_ms(lat['p90'])} / "
        f"p99 {_ms(lat['p99'])} ms over {len(t.latencies_s):,} requests"
    )
    if t.requests_per_s is not None:
        line += f"; {_number(t.requests_per_s, 'rate')} answers/s"
    if t.tokens_per_s is not None:
        line += f", {_number(t.tokens_per_s, 'rate')} tokens/s"
    return line


def _probability_line(e: EndpointRecord) -> str:
    if e.probabilities == "label log-likelihood":
        return (
            "class probabilities: each label's log-likelihood after the prompt (…/completions with echo), "
            "softmaxed over the labels; the prediction is their argmax, nothing is parsed"
        )
    if e.probabilities == "logprobs":
        outside = (
            f" ({e.outside_mass_mean:.1%} of the first tokens' probability on no label, on average)"
            if e.outside_mass_mean is not None
            else ""
        )
        return (
            f"class probabilities from the answers' log-probabilities, renormalised over the labels{outside}"
            f"{_covered(e)}"
        )
    return "label only (no log-probabilities for every answer): calibration not available"


def _covered(e: EndpointRecord) -> str:
    """How many answered examples kept class probabilities, and why the others did not (empty for older records)."""
    answered = e.examples - e.n_unparseable - e.n_failed_requests
    if e.min_label_mass is None or answered <= 0:
        return ""
    why = []
    if e.n_label_mass_low:
        why.append(f"{e.n_label_mass_low:,} with less than {e.min_label_mass:.0%} of it on the labels")
    if e.n_probabilities_disagree:
        why.append(f"{e.n_probabilities_disagree:,} whose probabilities favoured another label than the one read")
    rest = f" (without: {'; '.join(why)})" if why else ""
    return (
        f"; {e.n_with_probabilities:,} of {answered:,} answered examples "
        f"({e.n_with_probabilities / answered:.0%}) have them{rest}; calibration is measured on those"
    )


def endpoint_lines(model: ModelRecord) -> list[str]:
    """The lines about one endpoint model (empty for any other)."""
    e = model.endpoint
    if e is None:
        return []
    return [
        f"{model.name} — {e.model} at {e.base_url}",
        _requests_line(e),
        _answers_line(e),
        _tokens_line(e),
        _timing_line(e),
        _probability_line(e),
    ]


def unparseable_rows(model: ModelRecord, limit: int = ANSWERS_SHOWN) -> list[dict[str, str]]:
    """The first ``limit`` unparseable answers of an endpoint model: dataset row, input, gold label, raw answer.

    Every format escapes the answer itself (HTML through autoescape, Markdown through ``md_escape``).
    """
    if model.endpoint is None:
        return []
    rows = []
    for item in model.endpoint.unparseable[:limit]:
        text = item.answer if len(item.answer) <= ANSWER_SHOWN_CHARS else item.answer[:ANSWER_SHOWN_CHARS] + "…"
        shown = (
            item.input
            if item.input is None or len(item.input) <= ANSWER_SHOWN_CHARS
            else item.input[:ANSWER_SHOWN_CHARS] + "…"
        )
        rows.append(
            {"dataset row": str(item.index), "input": shown or "", "gold label": item.gold or "", "raw answer": text}
        )
    return rows


def _more_line(e: EndpointRecord, shown: int) -> str:
    """What the list of unparseable answers leaves out (empty when it shows them all)."""
    rest = e.n_unparseable - shown
    if rest <= 0:
        return ""
    kept = len(e.unparseable)
    where = f"; results.json keeps the first {kept:,}" if kept > shown else ""
    return f"… and {rest:,} more unparseable answer{'s' if rest != 1 else ''} not listed here{where}."


@dataclass(frozen=True)
class EndpointBlock:
    """What a report shows about one endpoint model."""

    model: str
    title: str
    lines: list[str]
    unparseable: list[dict[str, str]]
    more: str


def endpoint_blocks(result: RunResult) -> list[EndpointBlock]:
    """Per endpoint model: its title, its lines, its first unparseable answers and what the list leaves out."""
    blocks: list[EndpointBlock] = []
    # a model asked with several prompts: each pass's requests and answers (llm@p1 …), as each was asked
    shown = [one for model in result.models for one in [model.pass_record(p.key) for p in model.passes] or [model]]
    for model in shown:
        e = model.endpoint
        if e is None:
            continue
        lines = endpoint_lines(model)
        rows = unparseable_rows(model)
        blocks.append(EndpointBlock(model.name, lines[0], lines[1:], rows, _more_line(e, len(rows))))
    return blocks


def cost_per_million_for_tradeoff(speed: ModelSpeed) -> float | None:
    """A model's cost per million predictions on the cost chart: per token for an endpoint, else offline's.

    A local model's cost comes from its price per hour at its offline throughput (the machine fully used).
    """
    if speed.cost is None:
        return None
    for scenario in ("endpoint", "offline"):
        found = next((s.cost_per_million for s in speed.cost.scenarios if s.scenario == scenario), None)
        if found is not None:
            return found
    return None


#: The speed-table columns an endpoint fills when no model was timed here.
ENDPOINT_SPEED_KEYS = ["model", "scenario", "p50 / p90 / p99 (ms per call)", "throughput (examples/s)", "calls"]


def endpoint_speed_row(speed: ModelSpeed, keys: list[str]) -> dict[str, str] | None:
    """A speed-table row of an endpoint model, in the columns ``keys`` of the other rows (``—`` where none fits)."""
    t = speed.endpoint
    if t is None:
        return None
    timed = t.latency is not None
    values = {
        "model": speed.name,
        "scenario": f"endpoint (at most {t.concurrency} requests in flight)"
        if timed
        else f"endpoint: {NOT_MEASURED} (no request answered in this run)",
        "p50 / p90 / p99 (ms per call)": " / ".join(_ms(t.latency[p]) for p in ("p50", "p90", "p99"))
        if t.latency is not None
        else "—",
        "throughput (examples/s)": _number(t.requests_per_s, "rate") if t.requests_per_s is not None else "—",
        "calls": str(len(t.latencies_s)),
    }
    return {key: values.get(key, "—") for key in keys}
