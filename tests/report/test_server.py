"""How the Server scenario, LoadGen's cross-check and cost are worded, tabled and drawn."""

from __future__ import annotations

import pytest
from rich.console import Console

from headtohead.report.document import Table
from headtohead.report.formats.terminal import table_renderables
from headtohead.report.plots import model_styles
from headtohead.report.plots_server import server_figure
from headtohead.report.rows.server import cost_columns, cost_rows, server_columns, server_rows
from headtohead.report.words.server import server_lines, server_sentence
from headtohead.report.words.speed import speed_verdict_lines, with_speed_sentences
from headtohead.results.cost import ModelCost, ScenarioCost
from headtohead.results.server import (
    LoadGenCrosscheck,
    LoadGenRun,
    LoadGenSummary,
    ServerComparison,
    ServerModelResult,
    ServerSearch,
    ServerTrial,
)
from headtohead.results.speed import HostLoad, ModelSpeed, SpeedSummary


def _pair(ratio: float, low: float | None, high: float | None, more: str | None) -> ServerComparison:
    return ServerComparison(
        model_a="bert",
        model_b="roberta",
        ratio=ratio,
        ci_low=low,
        ci_high=high,
        confidence=0.95,
        n_searches=3,
        more=more,
    )


def test_sentences_name_the_model_holding_more_only_when_the_interval_excludes_one():
    assert server_sentence(_pair(1.4, 1.25, 1.57, "roberta"), 50) == (
        "roberta holds 1.40× the load of bert at p99 ≤ 50 ms (95 % CI 1.25–1.57, 3 seeded searches)"
    )
    assert server_sentence(_pair(0.5, 0.4, 0.625, "bert"), 20) == (
        "bert holds 2.00× the load of roberta at p99 ≤ 20 ms (95 % CI 1.60–2.50, 3 seeded searches)"
    )
    assert server_sentence(_pair(1.03, 0.9, 1.17, None), 50).startswith(
        "no significant difference in the load bert and roberta hold at p99 ≤ 50 ms (ratio roberta/bert 1.03"
    )
    assert "one search: no interval" in server_sentence(_pair(1.2, None, None, None), 50)


def _run(scenario: str, valid: bool, **extra) -> LoadGenRun:
    return LoadGenRun(
        scenario=scenario,
        valid=valid,
        min_duration_met=True,
        min_queries_met=True,
        query_count=600,
        percentiles_ns={"50.00": 4e6, "90.00": 6e6, "99.00": 9e6},
        **extra,
    )


def _model(name: str, qps: float) -> ServerModelResult:
    trials = [
        ServerTrial(
            search=0,
            step=i,
            phase="bracket",
            target_qps=rate,
            schedule_seed=1,
            held=held,
            p50_s=p50,
            p99_s=p50 * 3,
            batches=100,
            mean_batch=4.0,
            loadgen=_run("Server", held),
        )
        for i, (rate, held, p50) in enumerate([(qps / 2, True, 0.004), (qps, True, 0.008), (qps * 2, False, 0.3)])
    ]
    return ServerModelResult(
        name=name,
        device="cpu",
        capacity_estimate_qps=qps * 1.2,
        max_qps=qps * 1.4,
        ci_low=qps * 1.2,
        ci_high=qps * 1.6,
        confidence=0.95,
        held_qps=qps,
        searches=[ServerSearch(search=0, held_qps=qps, failed_qps=qps * 2, estimate_qps=qps * 1.4)],
        trials=trials,
        preprocessed_ahead=True,
    )


@pytest.fixture
def plain_speed() -> SpeedSummary:
    """Two models' speed record without any scenario timed (the LoadGen part is added by the tests)."""
    host = HostLoad(cpu_count=2, load_average=None, other_cpu_percent=None)
    models = [
        ModelSpeed(
            name=name, device="cpu", num_parameters=10, parameter_bytes=40, first_preprocess_s=0.01, first_call_s=0.01
        )
        for name in ("bert", "roberta")
    ]
    return SpeedSummary(
        settings={},
        batch_size=8,
        seed=0,
        torch_threads=1,
        torch_interop_threads=1,
        host_before=host,
        host_after=host,
        elapsed_s=1.0,
        scenarios=[],
        models=models,
    )


def _speed_with_server(speed):
    loadgen = LoadGenSummary(
        loadgen_version="6.0.17",
        latency_bound_ms=50.0,
        settings={"max_batch": 8, "max_wait_ms": 2.0, "repeats": 3},
        log_dir="runs/x/loadgen",
        seed=0,
        models=[_model("bert", 500.0), _model("roberta", 700.0)],
        comparisons=[_pair(1.4, 1.25, 1.57, "roberta")],
        crosschecks=[
            LoadGenCrosscheck(
                name="bert",
                single_stream=_run("SingleStream", True),
                offline=_run("Offline", False, samples_per_s=900.0, invalid_reason="Increase expected QPS"),
                h2h_single_stream_p90_s=0.005,
                h2h_offline_samples_per_s=1000.0,
            )
        ],
    )
    costs = {
        "bert": ModelCost(
            energy_source="NVML total energy, NVIDIA Fake (whole GPU)",
            scenarios=[
                ScenarioCost(
                    scenario="offline",
                    throughput_per_s=1000.0,
                    price_per_hour=3.6,
                    predictions=100,
                    seconds=1.0,
                    energy_j=20.0,
                ),
                ScenarioCost(scenario="server", throughput_per_s=700.0, price_per_hour=3.6),
            ],
        ),
        "roberta": ModelCost(
            energy_note="no RAPL counters (here)",
            scenarios=[ScenarioCost(scenario="offline", throughput_per_s=500.0, price_per_hour=3.6)],
        ),
    }
    models = [m.model_copy(update={"cost": costs[m.name]}) for m in speed.models]
    return with_speed_sentences(speed.model_copy(update={"loadgen": loadgen, "models": models}))


def test_lines_hold_the_verdict_crosscheck_cost_and_why_energy_is_missing(plain_speed):
    speed = _speed_with_server(plain_speed)
    assert speed.loadgen.comparisons[0].verdict.startswith("roberta holds 1.40× the load of bert")
    lines = server_lines(speed)
    text = "\n".join(lines)
    assert "  bert: max 700 QPS (95 % CI 600–800); LoadGen VALID up to 500 QPS (p99 24 ms, mean batch 4)" in lines
    assert "SingleStream p90 6 ms vs headtohead 5 ms (VALID)" in text
    assert "Offline 900 samples/s vs headtohead 1,000 (INVALID: Increase expected QPS)" in text
    assert "cost per million predictions, bert (at 3.6/h): offline 1, server at max_qps 1.43" in lines
    assert "energy per prediction, bert: offline 0.2 J (20 W) — NVML total energy, NVIDIA Fake (whole GPU)" in lines
    assert "energy per prediction not measured (roberta): no RAPL counters (here)" in lines
    assert "runs/x/loadgen/<model>/" in text
    assert set(lines) <= set(speed_verdict_lines(speed))


def _render(columns, rows) -> str:  # noqa: ANN001
    console = Console(width=200, record=True)
    for shown in table_renderables(Table("t", tuple(columns), tuple(rows)).without_empty_columns(), 200):
        console.print(shown)
    return console.export_text()


def test_tables_show_max_qps_and_cost(plain_speed):
    speed = _speed_with_server(plain_speed)
    text = _render(server_columns(speed), server_rows(speed))
    assert "700 (600–800)" in text and "1.43" in text
    text = _render(cost_columns(speed), cost_rows(speed))
    assert "offline J / pred." in text and "1.00" in text and "0.200" in text and "2.00" in text
    assert server_rows(plain_speed) == [] and cost_rows(plain_speed) == []


def test_the_latency_load_figure_draws_every_trial(plain_speed):
    speed = _speed_with_server(plain_speed)
    figure = server_figure(speed.loadgen, model_styles(["bert", "roberta"]))
    ax = figure.axes[0]
    assert ax.get_xscale() == "log" and "offered load" in ax.get_xlabel()
    p99 = [line for line in ax.lines if "p99" in str(line.get_label())]
    assert sum(len(line.get_xdata()) for line in p99) == 6  # every trial of both models
    hollow = [line for line in p99 if "missed" in str(line.get_label())]
    assert all(line.get_markerfacecolor() == "white" for line in hollow) and len(hollow) == 2
    assert server_figure(speed.loadgen.model_copy(update={"models": []}), {}) is None


@pytest.mark.parametrize("field", ["cost_per_million", "energy_per_prediction_j"])
def test_derived_cost_fields_reach_results_json(field, plain_speed):
    speed = _speed_with_server(plain_speed)
    dumped = speed.model_dump(mode="json")
    assert field in dumped["models"][0]["cost"]["scenarios"][0]
