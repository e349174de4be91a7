"""The words about an LLM's answers, of any family: answers, cache, tokens; an endpoint's requests and cost.

Every format shows the same things from :class:`~headtohead.results.answers.AnswersRecord`:
one block of lines per LLM (:func:`endpoint_lines`: for a model asked over HTTP its requests,
retries, cost and latency; for one run in this process where it ran, nothing of requests), and
the unparseable answers with their raw text (:func:`unparseable_rows`; each format escapes them),
drawn by the answers section (:mod:`headtohead.report.sections.run.details.answers`). A figure that
cannot be known is said so, never shown as 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from headtohead.report.rows.summary import NOT_AVAILABLE
from headtohead.report.words.numbers import format_money, format_ms, format_rate, format_share
from headtohead.report.words.warnings import failure_reasons, from_log
from headtohead.results.answers import AnswersRecord, FailedAnswer
from headtohead.results.cost import one_cost_per_million
from headtohead.results.endpoint import EndpointRequests, RequestTiming
from headtohead.results.files import answers_file
from headtohead.results.records import ModelRecord, RunResult
from headtohead.results.speed import ModelSpeed

__all__ = [
    "endpoint_lines",
    "endpoint_blocks",
    "EndpointBlock",
    "unparseable_rows",
    "ANSWER_SHOWN_CHARS",
    "ANSWERS_SHOWN",
    "cost_per_million_for_tradeoff",
]

#: Characters of a raw answer shown in a table row (the record keeps up to 2000).
ANSWER_SHOWN_CHARS = 300
#: Unparseable answers listed per model in a report (the others are counted; results.json keeps 1000).
ANSWERS_SHOWN = 20


def _requests_line(e: AnswersRecord, http: EndpointRequests) -> str:
    asked = e.examples - len(e.from_cache)
    parts = [f"{e.examples:,} examples: {len(e.from_cache):,} answered from the response cache, {asked:,} asked"]
    if http.requests:
        problems = ", ".join(f"{what} ×{n}" for what, n in sorted(http.statuses.items()) if what != "200")
        parts.append(f"{http.requests:,} requests ({http.retries:,} retries{': ' + problems if problems else ''})")
    return "; ".join(parts)


def _answered_line(e: AnswersRecord, model: str) -> str:
    """A model run here: how many examples it answered and how, and where every answer is kept."""
    scored = e.probabilities == "label log-likelihood"
    how = "each label scored by its log-likelihood" if scored else "each answer generated and read as a label"
    return f"{e.examples:,} examples, {how}; every answer is kept in {answers_file(model)}"


def _answers_line(e: AnswersRecord) -> str:
    """``8 unparseable answers of the 22 that came back, 2 examples refused by the server (HTTP 400: …): each
    counts as a wrong answer; 36 never answered (…): missing, not wrong``: the unparseable ones counted among
    the answers that came back, a refusal said once with the server's reason."""
    came = e.examples - e.n_failed
    unparseable = f"{e.n_unparseable:,} unparseable answer{'s' if e.n_unparseable != 1 else ''}"
    if e.n_failed:
        unparseable += f" of the {came:,} that came back"
    missing = set(e.missing)
    failed_here = [f for f in e.failed if f.index not in missing]
    n_here = e.n_failed - e.n_missing
    why = f" ({failure_reasons(failed_here)})" if failed_here else ""
    if e.endpoint is not None:
        failed = (
            f", {n_here:,} example{'s' if n_here != 1 else ''} refused by the server{why}"
            if n_here
            else ", 0 requests refused"
        )
    else:
        failed = f", {n_here:,} without an answer{why}" if n_here else ""
    line = f"{unparseable}{failed}: each counts as a wrong answer"
    if e.n_missing:
        gone = [f for f in e.failed if f.index in missing]
        line += f"; {e.n_missing:,} never answered{_reasons(gone)}: missing, not wrong"
    return line


def _reasons(failures: list[FailedAnswer]) -> str:
    """`` (HTTP 400 ×2, timeout ×1)``: the last try's failure of each request, counted (``""`` for none)."""
    reasons: dict[str, int] = {}
    for f in failures:
        reasons[f.reason] = reasons.get(f.reason, 0) + 1
    return " (" + ", ".join(f"{why} ×{n}" for why, n in reasons.items()) + ")" if reasons else ""


def _tokens_line(e: AnswersRecord) -> str:
    http = e.endpoint
    if e.prompt_tokens is None or e.completion_tokens is None:
        who = "the server" if http is not None else "the model"
        tokens = f"tokens: not reported by {who} for every answer"
    else:
        counted = "" if http is not None else " (counted by its tokenizer)"
        tokens = f"tokens: {e.prompt_tokens:,} in, {e.completion_tokens:,} out{counted}"
    if http is None:
        return tokens
    if http.price is None:
        return tokens + "; cost: no price given (price: {input_per_1m, output_per_1m})"
    if e.cost is None:
        return tokens + f"; cost: {NOT_AVAILABLE} (usage missing)"
    return (
        tokens + f"; cost {format_money(e.cost)} at {format_money(http.price.input_per_1m)} / "
        f"{format_money(http.price.output_per_1m)} per million tokens in / out (this run's requests "
        f"{format_money(http.cost_sent or 0.0)}), {format_money(e.cost_per_million or 0.0)} per million predictions"
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


def _timing_line(e: AnswersRecord, http: EndpointRequests) -> str:
    t = http.timing
    if t is None or t.latency is None:
        why = (
            "every answer came from the response cache"
            if len(e.from_cache) == e.examples
            else "no request was answered in this run"
        )
        return f"latency: not measured ({why})"
    lat = t.latency
    line = (
        f"latency per request at concurrency {_concurrency(t)}: p50 {format_ms(lat['p50'])} / p90 {format_ms(lat['p90'])} / "
        f"p99 {format_ms(lat['p99'])} ms over {len(t.latencies_s):,} requests"
    )
    if t.requests_per_s is not None:
        line += f"; {format_rate(t.requests_per_s)} answers/s"
    if t.tokens_per_s is not None:
        line += f", {format_rate(t.tokens_per_s)} tokens/s"
    return line


def _probability_line(e: AnswersRecord, model: str) -> str:
    """Where the class probabilities came from, and how much of the probability the labels held (the label mass)."""
    if e.probabilities == "label log-likelihood":
        how = " (…/completions with echo)" if e.endpoint is not None else ""
        return (
            f"class probabilities: each label's log-likelihood after the prompt{how}, "
            f"softmaxed over the labels; the prediction is their argmax, nothing is parsed{_scored_mass(e, model)}"
        )
    if e.probabilities == "logprobs":
        if e.label_mass_median is not None:
            outside = (
                f" (the labels held a median {format_share(e.label_mass_median)} of the first tokens' probability; "
                f"each example's label mass: {answers_file(model)})"
            )
        elif e.outside_mass_mean is not None:  # written before the median was kept
            outside = f" ({format_share(e.outside_mass_mean)} of the first tokens' probability on no label, on average)"
        else:
            outside = ""
        return (
            f"class probabilities from the answers' log-probabilities, renormalised over the labels{outside}"
            f"{_covered(e)}"
        )
    if e.endpoint is None:
        return "label only (answers generated and read as labels, no class probabilities): calibration not available"
    return "label only (no log-probabilities for every answer): calibration not available"


def _scored_mass(e: AnswersRecord, model: str) -> str:
    """``; the labels held a median 5.0 % of the probability after the prompt …, less than 90 % on 30 of 30
    examples (100.0 %): the labels hold little of the probability — the prompt does not make the model answer with
    a label …`` (empty when the label mass is unknown: scores divided by their length are no probabilities)."""
    if e.label_mass_median is None:
        if e.outside_mass_mean is None:
            return ""
        mean = format_share(1 - e.outside_mass_mean)  # written before the median was kept
        return f"; the labels held {mean} of the probability after the prompt, on average"
    median = e.label_mass_median
    said = (
        f"; the labels held a median {format_share(median)} of the probability after the prompt (the probability "
        f"the model gave the labels at all; each example's label mass: {answers_file(model)})"
    )
    if e.min_label_mass is None or not e.n_label_mass:
        return said
    below, n = e.n_label_mass_below, e.n_label_mass
    said += (
        f", less than {format_share(e.min_label_mass, 0)} on {below:,} of {n:,} examples ({format_share(below / n)})"
    )
    if median < e.min_label_mass:
        said += (
            ": the labels hold little of the probability — the prompt does not make the model answer with a label, "
            "so its class probabilities compare labels it would rarely say"
        )
    return said


def _covered(e: AnswersRecord) -> str:
    """How many answered examples kept class probabilities, and why the others did not (empty for older records)."""
    answered = e.examples - e.n_unparseable - e.n_failed
    if e.min_label_mass is None or answered <= 0:
        return ""
    why = []
    if e.n_label_mass_low:
        why.append(f"{e.n_label_mass_low:,} with less than {format_share(e.min_label_mass, 0)} of it on the labels")
    if e.n_probabilities_disagree:
        why.append(f"{e.n_probabilities_disagree:,} whose probabilities favoured another label than the one read")
    rest = f" (without: {'; '.join(why)})" if why else ""
    return (
        f"; {e.n_with_probabilities:,} of {answered:,} answered examples "
        f"({format_share(e.n_with_probabilities / answered, 0)}) have them{rest}; calibration is measured on those"
    )


def endpoint_lines(model: ModelRecord) -> list[str]:
    """The lines about one LLM's answers (empty for any other model): its title first.

    Asked over HTTP: where, its requests, answers, tokens and cost, latency, class probabilities.
    Run in this process: where it ran, its answers, tokens, class probabilities (no requests, no cost).
    Read from another harness's log (Inspect's): the log, its answers as its scorer read them.
    """
    e = model.answers
    if e is None:
        return []
    http = e.endpoint
    if http is None and from_log(model):
        kept = f"every answer is kept in {answers_file(model.name)}"
        return [
            f"{model.name} — {e.model}, read from its log {model.source}",
            f"{e.examples:,} examples, each answer as the log's scorer read it; {kept}",
            _answers_line(e),
            "label only (answers read from the log, no class probabilities): calibration not available",
        ]
    if http is None:
        where = f"run in this process on {e.device}" if e.device else "run in this process"
        return [
            f"{model.name} — {e.model}, {where}",
            _answered_line(e, model.name),
            _answers_line(e),
            _tokens_line(e),
            _probability_line(e, model.name),
        ]
    return [
        f"{model.name} — {e.model} at {http.base_url}",
        _requests_line(e, http),
        _answers_line(e),
        _tokens_line(e),
        _timing_line(e, http),
        _probability_line(e, model.name),
    ]


def unparseable_rows(model: ModelRecord, limit: int = ANSWERS_SHOWN) -> list[dict[str, str]]:
    """The first ``limit`` unparseable answers of an LLM: the example (its id, else its dataset row), input, gold
    label, raw answer.

    Every format escapes the answer itself (HTML through autoescape, Markdown through ``md_escape``).
    """
    if model.answers is None:
        return []
    rows = []
    for item in model.answers.unparseable[:limit]:
        text = item.answer if len(item.answer) <= ANSWER_SHOWN_CHARS else item.answer[:ANSWER_SHOWN_CHARS] + "…"
        shown = (
            item.input
            if item.input is None or len(item.input) <= ANSWER_SHOWN_CHARS
            else item.input[:ANSWER_SHOWN_CHARS] + "…"
        )
        example = item.id if item.id is not None else str(item.index)  # its own id where the data has ids
        rows.append({"example": example, "input": shown or "", "gold label": item.gold or "", "raw answer": text})
    return rows


def _more_line(e: AnswersRecord, shown: int) -> str:
    """What the list of unparseable answers leaves out (empty when it shows them all)."""
    rest = e.n_unparseable - shown
    if rest <= 0:
        return ""
    kept = len(e.unparseable)
    where = f"; results.json keeps the first {kept:,}" if kept > shown else ""
    return f"… and {rest:,} more unparseable answer{'s' if rest != 1 else ''} not listed here{where}."


@dataclass(frozen=True)
class EndpointBlock:
    """What a report shows about one LLM's answers (asked over an endpoint or run here)."""

    model: str
    title: str
    lines: list[str]
    unparseable: list[dict[str, str]]
    more: str


def endpoint_blocks(result: RunResult) -> list[EndpointBlock]:
    """Per LLM: its title, its lines, its first unparseable answers and what the list leaves out."""
    blocks: list[EndpointBlock] = []
    # a model asked with several prompts: each pass's answers (llm@p1 …), as each was asked
    shown = [one for model in result.models for one in [model.pass_record(p.key) for p in model.passes] or [model]]
    for model in shown:
        e = model.answers
        if e is None:
            continue
        lines = endpoint_lines(model)
        rows = unparseable_rows(model)
        blocks.append(EndpointBlock(model.name, lines[0], lines[1:], rows, _more_line(e, len(rows))))
    return blocks


def cost_per_million_for_tradeoff(speed: ModelSpeed) -> float | None:
    """A model's cost per million predictions on the cost chart: the one record of ``results.cost.cost_record``.

    Per token for an endpoint; a local model's from its price per hour at its offline throughput (the machine
    fully used).
    """
    return one_cost_per_million(speed.cost)
