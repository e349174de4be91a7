"""Words and tables of the Server scenario (MLPerf LoadGen), of LoadGen's cross-checks and of cost.

* :func:`server_sentence` — one pair: "roberta holds 1.41× the load of bert at p99 ≤ 50 ms (95 % CI …)";
* :func:`with_server_sentences` — a speed summary with every pair's sentence stored;
* :func:`server_lines` — the terminal lines: per model max_qps with its interval and LoadGen's
  judgement, the pairs, the cross-checks, the cost and energy per scenario;
* :func:`server_table` / :func:`cost_table` — rich tables (only the CLI prints them).
"""

from __future__ import annotations

import math

from rich.markup import escape
from rich.table import Table

from headtohead.report.words.numbers import holm_clause, speed_tests_phrase
from headtohead.results.cost import ModelCost
from headtohead.results.server import LoadGenCrosscheck, LoadGenSummary, ServerComparison, ServerModelResult
from headtohead.results.speed import SpeedSummary

__all__ = [
    "server_sentence",
    "with_server_sentences",
    "server_lines",
    "cost_lines",
    "server_table",
    "cost_table",
    "format_qps",
    "format_money",
]


def format_qps(qps: float) -> str:
    """``812.3`` → ``812``; ``8.43`` → ``8.43``."""
    return f"{qps:,.0f}" if qps >= 100 else f"{qps:.3g}"


def format_money(amount: float) -> str:
    """A cost with three significant digits, never in exponent notation: ``0.0000567``, ``0.0123``, ``1.23``, ``1,234``.

    Examples
    --------
    >>> [format_money(x) for x in (5.67e-05, 0.0123, 1.234, 12.34, 3.6, 1.0, 1234.5, 0.0)]
    ['0.0000567', '0.0123', '1.23', '12.3', '3.6', '1', '1,234', '0']
    """
    if amount >= 1000:
        return f"{amount:,.0f}"
    if amount == 0 or not math.isfinite(amount):
        return f"{amount:g}"
    decimals = max(0, 2 - math.floor(math.log10(abs(amount))))  # three significant digits after the zeros
    text = f"{amount:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text  # as %g writes them: 3.6, 1


def _bound(ms: float) -> str:
    return f"p99 ≤ {ms:g} ms"


def server_sentence(c: ServerComparison, latency_bound_ms: float) -> str:
    """One pair's capacity in one sentence; a model is said to hold more only when the record names it.

    It names one when the capacity ratio's test survives Holm's adjustment over every speed
    comparison of the run (results of version ≤ 3: when the interval excludes 1).

    Examples
    --------
    >>> c = ServerComparison(model_a="bert", model_b="roberta", ratio=1.41, ci_low=1.3, ci_high=1.52,
    ...                      confidence=0.95, n_searches=3, more="roberta")
    >>> server_sentence(c, 50)
    'roberta holds 1.41× the load of bert at p99 ≤ 50 ms (95 % CI 1.30–1.52, 3 seeded searches)'
    """
    level = f"{c.confidence * 100:g} %"
    searches = f"{c.n_searches} seeded search{'es' if c.n_searches != 1 else ''}"
    tested = holm_clause(c.p_value, c.p_adjusted, c.n_speed_tests)
    searches += f", {tested}" if tested else ""
    if c.ci_low is None or c.ci_high is None:
        return (
            f"{c.model_b} held {c.ratio:.2f}× the load of {c.model_a} at {_bound(latency_bound_ms)} "
            f"(one search: no interval; set speed.server.repeats ≥ 2)"
        )
    if c.more == c.model_b:
        return (
            f"{c.model_b} holds {c.ratio:.2f}× the load of {c.model_a} at {_bound(latency_bound_ms)} "
            f"({level} CI {c.ci_low:.2f}–{c.ci_high:.2f}, {searches})"
        )
    if c.more == c.model_a:
        return (
            f"{c.model_a} holds {1 / c.ratio:.2f}× the load of {c.model_b} at {_bound(latency_bound_ms)} "
            f"({level} CI {1 / c.ci_high:.2f}–{1 / c.ci_low:.2f}, {searches})"
        )
    after = (
        f" after {speed_tests_phrase(c.n_speed_tests)}"
        if c.n_speed_tests and c.n_speed_tests > 1 and (c.ci_low > 1.0 or c.ci_high < 1.0)
        else ""
    )
    return (
        f"no significant difference in the load {c.model_a} and {c.model_b} hold at {_bound(latency_bound_ms)}"
        f"{after} (ratio {c.model_b}/{c.model_a} {c.ratio:.2f}, {level} CI {c.ci_low:.2f}–{c.ci_high:.2f}, "
        f"{searches})"
    )


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
        p99 = f"{low.p99_s * 1e3:.1f} ms" if low is not None and low.p99_s is not None else "not reported"
        return (
            f"  {model.name}: no rate held at {_bound(bound_ms)} (lowest tried "
            f"{format_qps(low.target_qps) if low else '?'} QPS: p99 {p99})"
        )
    interval = (
        f" ({model.confidence * 100:g} % CI {format_qps(model.ci_low)}–{format_qps(model.ci_high)})"
        if model.ci_low is not None and model.ci_high is not None
        else ""
    )
    best = max((t for t in model.trials if t.held), key=lambda t: t.target_qps, default=None)
    valid = (
        f"; LoadGen VALID up to {format_qps(best.target_qps)} QPS (p99 {best.p99_s * 1e3:.1f} ms, "
        f"mean batch {best.mean_batch:.1f})"
        if best is not None and best.p99_s is not None and best.mean_batch is not None
        else ""
    )
    cap = " — at server.max_qps: a lower bound" if model.at_cap else ""
    return f"  {model.name}: max {format_qps(model.max_qps)} QPS{interval}{valid}{cap}"


def _crosscheck_line(check: LoadGenCrosscheck) -> str:
    parts = []
    single = check.single_stream
    p90 = single.percentile_s("90.00") if single is not None else None
    if single is not None and p90 is not None:
        ours = (
            f" vs headtohead {check.h2h_single_stream_p90_s * 1e3:.3g} ms"
            if check.h2h_single_stream_p90_s is not None
            else ""
        )
        parts.append(f"SingleStream p90 {p90 * 1e3:.3g} ms{ours} ({'VALID' if single.valid else 'INVALID'})")
    offline = check.offline
    if offline is not None and offline.samples_per_s is not None:
        ours = (
            f" vs headtohead {format_qps(check.h2h_offline_samples_per_s)}"
            if check.h2h_offline_samples_per_s is not None
            else ""
        )
        reason = f": {offline.invalid_reason.strip()}" if not offline.valid and offline.invalid_reason else ""
        parts.append(
            f"Offline {format_qps(offline.samples_per_s)} samples/s{ours} "
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


_SCENARIO_NAMES = {
    "offline": "offline",
    "single_stream": "batch 1",
    "time_window": "time window",
    "server": "server at max_qps",
    "endpoint": "endpoint (per token)",
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
                f"{_SCENARIO_NAMES.get(s.scenario, s.scenario)} {format_money(per_million)}"
                for s, per_million in priced
            )
        )
    metered = [s for s in cost.scenarios if s.energy_per_prediction_j is not None]
    if metered:
        lines.append(
            f"energy per prediction, {name}: "
            + ", ".join(
                f"{_SCENARIO_NAMES.get(s.scenario, s.scenario)} {s.energy_per_prediction_j:.3g} J "
                f"({s.mean_power_w:.0f} W)"
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


def server_table(summary: SpeedSummary) -> Table | None:
    """One row per model: max QPS with its interval, the highest VALID trial, cost and energy at max_qps."""
    loadgen = summary.loadgen
    if loadgen is None or not loadgen.models:
        return None
    table = Table(
        title=f"server — MLPerf LoadGen, Poisson arrivals, {_bound(loadgen.latency_bound_ms)}", title_justify="left"
    )
    table.add_column("model", style="bold", no_wrap=True)
    for column in (
        "max QPS",
        f"{loadgen.models[0].confidence:.0%} CI",
        "VALID up to",
        "p50 ms",
        "p99 ms",
        "trials",
        "cost / M",
        "J / pred.",
    ):
        table.add_column(column, justify="right")
    for model in loadgen.models:
        best = max((t for t in model.trials if t.held), key=lambda t: t.target_qps, default=None)
        cost = summary.model(model.name).cost if model.name in {m.name for m in summary.models} else None
        scenario = cost.scenario("server") if cost is not None else None
        table.add_row(
            escape(model.name),
            format_qps(model.max_qps) if model.max_qps is not None else "none held",
            f"{format_qps(model.ci_low)}–{format_qps(model.ci_high)}"
            if model.ci_low is not None and model.ci_high is not None
            else "–",
            format_qps(best.target_qps) if best else "–",
            f"{best.p50_s * 1e3:.3g}" if best and best.p50_s is not None else "–",
            f"{best.p99_s * 1e3:.3g}" if best and best.p99_s is not None else "–",
            str(len(model.trials)),
            format_money(scenario.cost_per_million) if scenario and scenario.cost_per_million is not None else "–",
            f"{scenario.energy_per_prediction_j:.3g}"
            if scenario and scenario.energy_per_prediction_j is not None
            else "–",
        )
    return table


def cost_table(summary: SpeedSummary) -> Table | None:
    """Models × scenarios: cost per million predictions (and J per prediction); ``None`` without a price."""
    costs = {m.name: m.cost for m in summary.models if m.cost is not None}
    scenarios = list(
        dict.fromkeys(s.scenario for c in costs.values() for s in c.scenarios if s.cost_per_million is not None)
    )
    if not scenarios:
        return None
    price = next((s.price_per_hour for c in costs.values() for s in c.scenarios if s.price_per_hour is not None), None)
    at = f" at {format_money(price)}/h" if price is not None else ""
    table = Table(title=f"cost / 1M predictions{at}", title_justify="left")
    table.add_column("model", style="bold", no_wrap=True)
    for scenario in scenarios:
        table.add_column(_SCENARIO_NAMES.get(scenario, scenario), justify="right")
    for name, cost in costs.items():
        row = [escape(name)]
        for scenario in scenarios:
            entry = cost.scenario(scenario)
            text = format_money(entry.cost_per_million) if entry and entry.cost_per_million is not None else "–"
            if entry is not None and entry.energy_per_prediction_j is not None:
                text += f" ({entry.energy_per_prediction_j:.3g} J)"
            row.append(text)
        table.add_row(*row)
    return table
