"""Words and tables of the Server scenario (MLPerf LoadGen), of LoadGen's cross-checks and of cost.

* :func:`server_sentence` — one pair: "roberta holds 1.41× the load of bert at p99 ≤ 50 ms (95 % CI …)";
* :func:`capacity_sentence` — the same sentence for any capacity at its bounds, an endpoint's at its SLOs
  (:func:`slo_phrase`) included: one set of words for both scenarios;
* :func:`with_server_sentences`, :func:`with_capacity_sentences` — every pair's sentence stored;
* :func:`capacity_lines` — the capacity scenario's lines (the speed verdict's, and its own section's);
* :func:`server_lines` — the lines: per model max_qps with its interval and LoadGen's
  judgement, the pairs, the cross-checks, the cost and energy per scenario.

The tables of the Server scenario and of cost are :mod:`headtohead.report.rows.server`.
"""

from __future__ import annotations

from collections.abc import Mapping

from headtohead.report.words.numbers import (
    format_duration,
    format_money,
    format_ms,
    format_rate,
    format_ratios,
    format_share,
    holm_clause,
    speed_tests_phrase,
)
from headtohead.results.capacity import CapacityModelResult, CapacityProbe, CapacitySummary
from headtohead.results.cost import ModelCost
from headtohead.results.server import LoadGenCrosscheck, LoadGenSummary, ServerComparison, ServerModelResult
from headtohead.results.speed import SpeedSummary

__all__ = [
    "server_sentence",
    "capacity_sentence",
    "slo_phrase",
    "with_capacity_sentences",
    "capacity_lines",
    "with_server_sentences",
    "server_lines",
    "cost_lines",
    "SCENARIO_NAMES",
]


def _ratio_with_ci(ratio: float, low: float, high: float, level: str) -> str:
    shown, lower, upper = format_ratios(ratio, low, high)
    return f"{shown}, {level} CI {lower}–{upper}"


def _bound(ms: float) -> str:
    return f"p99 ≤ {ms:g} ms"


def server_sentence(c: ServerComparison, latency_bound_ms: float) -> str:
    """One Server pair's capacity in one sentence (:func:`capacity_sentence` at ``p99 ≤ bound``).

    Examples
    --------
    >>> c = ServerComparison(model_a="bert", model_b="roberta", ratio=1.41, ci_low=1.3, ci_high=1.52,
    ...                      confidence=0.95, n_searches=3, more="roberta")
    >>> server_sentence(c, 50)
    'roberta holds 1.41× the load of bert at p99 ≤ 50 ms (95 % CI 1.30–1.52, 3 seeded searches)'
    """
    return capacity_sentence(c, _bound(latency_bound_ms), "speed.server.repeats")


def capacity_sentence(c: ServerComparison, at: str, repeats_key: str = "speed.capacity.repeats") -> str:
    """One pair's capacity in one sentence, the Server scenario's and an endpoint's alike; a model is said to
    hold more only when the record names it.

    It names one when the capacity ratio's test survives Holm's adjustment over the run's comparisons
    (results of version ≤ 3: when the interval excludes 1). ``at``: the bound(s) a rate was held at.

    Examples
    --------
    >>> c = ServerComparison(model_a="fast", model_b="slow", ratio=0.5, ci_low=0.45, ci_high=0.56,
    ...                      confidence=0.95, n_searches=3, more="fast")
    >>> capacity_sentence(c, "p99 e2e ≤ 2 s")
    'fast holds 2.00× the load of slow at p99 e2e ≤ 2 s (95 % CI 1.79–2.22, 3 seeded searches)'
    """
    level = f"{c.confidence * 100:g} %"
    searches = f"{c.n_searches} seeded search{'es' if c.n_searches != 1 else ''}"
    tested = holm_clause(c.p_value, c.p_adjusted, c.n_speed_tests)
    searches += f", {tested}" if tested else ""
    if c.ci_low is None or c.ci_high is None:
        return (
            f"{c.model_b} held {format_ratios(c.ratio)[0]}× the load of {c.model_a} at {at} "
            f"(one search: no interval; set {repeats_key} ≥ 2)"
        )
    if c.more == c.model_b:
        return "{2} holds {3}× the load of {1} at {0} ({4} CI {5}–{6}, {7})".format(
            at,
            c.model_a,
            c.model_b,
            *format_ratios(c.ratio)[:1],
            level,
            *format_ratios(c.ratio, c.ci_low, c.ci_high)[1:],
            searches,
        )
    if c.more == c.model_a:
        return "{1} holds {3}× the load of {2} at {0} ({4} CI {5}–{6}, {7})".format(
            at,
            c.model_a,
            c.model_b,
            *format_ratios(1 / c.ratio)[:1],
            level,
            *format_ratios(1 / c.ratio, 1 / c.ci_high, 1 / c.ci_low)[1:],
            searches,
        )
    after = (
        f" after {speed_tests_phrase(c.n_speed_tests)}"
        if c.n_speed_tests and c.n_speed_tests > 1 and (c.ci_low > 1.0 or c.ci_high < 1.0)
        else ""
    )
    return (
        f"no significant difference in the load {c.model_a} and {c.model_b} hold at {at}"
        f"{after} (ratio {c.model_b}/{c.model_a} {_ratio_with_ci(c.ratio, c.ci_low, c.ci_high, level)}, "
        f"{searches})"
    )


_SLO_WORDS = {"ttft_p99": "p99 TTFT", "tpot_p99": "p99 TPOT", "e2e_p99": "p99 e2e"}


def slo_phrase(slo: Mapping[str, float]) -> str:
    """The SLOs a capacity was held at, as people write them.

    Examples
    --------
    >>> slo_phrase({"ttft_p99": 0.5, "e2e_p99": 2.0, "error_rate": 0.01})
    'p99 TTFT ≤ 500 ms, p99 e2e ≤ 2 s, errors ≤ 1.0 %'
    """
    return ", ".join(
        f"errors ≤ {format_share(bound)}" if name == "error_rate" else f"{_SLO_WORDS[name]} ≤ {format_duration(bound)}"
        for name, bound in slo.items()
    )


def with_capacity_sentences(capacity: CapacitySummary) -> CapacitySummary:
    """``capacity`` with every pair's ``verdict`` written."""
    at = slo_phrase(capacity.slo)
    return capacity.model_copy(
        update={
            "comparisons": [c.model_copy(update={"verdict": capacity_sentence(c, at)}) for c in capacity.comparisons]
        }
    )


def _probe_figures(probe: CapacityProbe) -> str:
    figures = [
        f"{label} {format_duration(value)}"
        for label, value in (
            ("p99 TTFT", probe.ttft_p99_s),
            ("p99 TPOT", probe.tpot_p99_s),
            ("p99 e2e", probe.e2e_p99_s),
        )
        if value is not None
    ]
    figures.append(f"errors {format_share(probe.error_rate or 0.0)} of {probe.requests}")
    if probe.saturated:
        figures.append("over-saturated" + (", stopped early" if probe.stopped_early else ""))
    return ", ".join(figures)


def _capacity_model_line(model: CapacityModelResult, at: str) -> str:
    if model.goodput is None:
        low = model.lowest_probe
        if low is None:
            return f"  {model.name}: missing — the server stopped answering in every search"
        return f"  {model.name}: no rate met {at} (lowest probed, {format_rate(low.rate)}/s: {_probe_figures(low)})"
    interval = (
        f" ({model.confidence * 100:g} % CI {format_rate(model.ci_low)}–{format_rate(model.ci_high)})"
        if model.ci_low is not None and model.ci_high is not None
        else ""
    )
    parts = [f"  {model.name}: goodput {format_rate(model.goodput)} requests/s{interval}"]
    held = max((p for p in model.probes if p.held), key=lambda p: p.rate, default=None)
    if held is not None:
        parts.append(f"held up to {format_rate(held.rate)}/s ({_probe_figures(held)})")
    if model.cost_per_million is not None and model.price_per_hour is not None:
        parts.append(
            f"cost {format_money(model.cost_per_million)} per 1 M requests at goodput "
            f"({format_money(model.price_per_hour)}/h)"
        )
    answered = sum(p.answered for p in model.probes)
    if answered:
        parts.append(f"answers under load {format_share(sum(p.correct for p in model.probes) / answered)} right")
    line = "; ".join(parts)
    if model.at_cap:
        line += " — at capacity.max_rate: a lower bound"
    if model.missing_searches:
        line += f" — {model.missing_searches} search(es) missing: the server stopped answering"
    return line


def capacity_lines(capacity: CapacitySummary) -> list[str]:
    """The capacity scenario's lines: each model's goodput and figures, each pair's sentence."""
    at = slo_phrase(capacity.slo)
    repeats = capacity.settings.get("repeats")
    arrivals = "Poisson" if capacity.settings.get("arrivals", "poisson") == "poisson" else "evenly spaced"
    lines = [f"capacity ({arrivals} arrivals, {at}, {repeats} seeded searches, probes interleaved ABBA):"]
    lines.extend(_capacity_model_line(m, at) for m in capacity.models)
    lines.extend(f"  {c.verdict or capacity_sentence(c, at)}" for c in capacity.comparisons)
    return lines


def with_server_sentences(summary: SpeedSummary) -> SpeedSummary:
    """``summary`` with every Server pair's ``verdict`` written (unchanged without a LoadGen part)."""
    loadgen = summary.loadgen
    if loadgen is None:
        return summary
    comparisons = [
        c.model_copy(update={"verdict": server_sentence(c, loadgen.latency_bound_ms)}) for c in loadgen.comparisons
    ]
    return summary.model_copy(update={"loadgen": loadgen.model_copy(update={"comparisons": comparisons})})


def _model_line(model: ServerModelResult, bound_ms: float) -> str:
    if model.max_qps is None:
        low = model.lowest_tried
        p99 = f"{format_ms(low.p99_s)} ms" if low is not None and low.p99_s is not None else "not reported"
        return (
            f"  {model.name}: no rate held at {_bound(bound_ms)} (lowest tried "
            f"{format_rate(low.target_qps) if low else '?'} QPS: p99 {p99})"
        )
    interval = (
        f" ({model.confidence * 100:g} % CI {format_rate(model.ci_low)}–{format_rate(model.ci_high)})"
        if model.ci_low is not None and model.ci_high is not None
        else ""
    )
    best = max((t for t in model.trials if t.held), key=lambda t: t.target_qps, default=None)
    valid = (
        f"; LoadGen VALID up to {format_rate(best.target_qps)} QPS (p99 {format_ms(best.p99_s)} ms, "
        f"mean batch {format_rate(best.mean_batch)})"
        if best is not None and best.p99_s is not None and best.mean_batch is not None
        else ""
    )
    cap = " — at server.max_qps: a lower bound" if model.at_cap else ""
    return f"  {model.name}: max {format_rate(model.max_qps)} QPS{interval}{valid}{cap}"


def _crosscheck_line(check: LoadGenCrosscheck) -> str:
    parts = []
    single = check.single_stream
    p90 = single.percentile_s("90.00") if single is not None else None
    if single is not None and p90 is not None:
        ours = (
            f" vs headtohead {format_ms(check.h2h_single_stream_p90_s)} ms"
            if check.h2h_single_stream_p90_s is not None
            else ""
        )
        parts.append(f"SingleStream p90 {format_ms(p90)} ms{ours} ({'VALID' if single.valid else 'INVALID'})")
    offline = check.offline
    if offline is not None and offline.samples_per_s is not None:
        ours = (
            f" vs headtohead {format_rate(check.h2h_offline_samples_per_s)}"
            if check.h2h_offline_samples_per_s is not None
            else ""
        )
        reason = f": {offline.invalid_reason.strip()}" if not offline.valid and offline.invalid_reason else ""
        parts.append(
            f"Offline {format_rate(offline.samples_per_s)} samples/s{ours} "
            f"({'VALID' if offline.valid else 'INVALID'}{reason})"
        )
    return f"  LoadGen cross-check, {check.name}: " + "; ".join(parts)


def _loadgen_lines(loadgen: LoadGenSummary) -> list[str]:
    lines: list[str] = []
    cfg = loadgen.settings
    if loadgen.models:
        lines.append(
            f"server (MLPerf LoadGen {loadgen.loadgen_version}, Poisson arrivals, {_bound(loadgen.latency_bound_ms)}"
            f", batcher max {cfg.get('max_batch')} / {cfg.get('max_wait_ms')} ms, "
            f"{cfg.get('repeats')} seeded searches):"
        )
        lines.extend(_model_line(m, loadgen.latency_bound_ms) for m in loadgen.models)
        lines.extend(f"  {c.verdict or server_sentence(c, loadgen.latency_bound_ms)}" for c in loadgen.comparisons)
    lines.extend(_crosscheck_line(c) for c in loadgen.crosschecks)
    if loadgen.log_dir is not None:
        lines.append(f"  LoadGen logs (mlperf_log_summary.txt, mlperf_log_detail.txt): {loadgen.log_dir}/<model>/")
    return lines


SCENARIO_NAMES = {
    "offline": "offline",
    "single_stream": "batch 1",
    "time_window": "time window",
    "server": "server at max_qps",
    "endpoint": "endpoint (per token)",
    "priced": "priced per prediction",
    "cascade": "cascade (its parts' costs)",
}


def cost_lines(name: str, cost: ModelCost) -> list[str]:
    """One line of cost per million predictions and one of energy per prediction, per model."""
    lines = []
    priced = [(s, per_million) for s in cost.scenarios if (per_million := s.cost_per_million) is not None]
    if priced:
        price = priced[0][0].price_per_hour
        at = f" (at {format_money(price)}/h)" if price is not None else ""  # an endpoint is priced per token
        lines.append(
            f"cost per million predictions, {name}{at}: "
            + ", ".join(
                f"{SCENARIO_NAMES.get(s.scenario, s.scenario)} {format_money(per_million)}" for s, per_million in priced
            )
        )
    metered = [s for s in cost.scenarios if s.energy_per_prediction_j is not None]
    if metered:
        lines.append(
            f"energy per prediction, {name}: "
            + ", ".join(
                f"{SCENARIO_NAMES.get(s.scenario, s.scenario)} {format_money(s.energy_per_prediction_j or 0.0)} J "
                f"({format_rate(s.mean_power_w or 0.0)} W)"
                for s in metered
            )
            + f" — {cost.energy_source}"
        )
    return lines


def server_lines(summary: SpeedSummary) -> list[str]:
    """The terminal lines of the LoadGen part and of cost and energy (empty when neither was measured)."""
    lines = _loadgen_lines(summary.loadgen) if summary.loadgen is not None else []
    notes: dict[str, list[str]] = {}
    for model in summary.models:
        if model.cost is not None:
            lines.extend(cost_lines(model.name, model.cost))
            if model.cost.energy_note and not any(s.energy_j is not None for s in model.cost.scenarios):
                notes.setdefault(model.cost.energy_note, []).append(model.name)
    for note, names in notes.items():  # one line per reason, not per model
        who = "" if len(names) == len(summary.models) else f" ({', '.join(names)})"
        lines.append(f"energy per prediction not measured{who}: {note}")
    return lines
