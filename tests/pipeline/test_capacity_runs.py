"""The capacity scenario through ``h2h run``: endpoints under load over real HTTP, their SLOs as written.

Two scripted OpenAI-compatible servers (``testing/chat_server.py`` with ``service_s``) serve one request
at a time, 20 ms and 40 ms each: 50 and 25 requests per second exactly, whatever this machine is doing
(each end is computed from the previous one, not slept after a hand-over). Few short probes keep the
test short, so its check is looser than the issue's 10 %: the full probes (299 requests, 3 searches)
are ``benchmarks/capacity_scripted.py``, and the same search on exactly computed queues is
``tests/engines/test_capacity.py``.
"""

from __future__ import annotations

import json

import pytest
import yaml

import headtohead
from headtohead.cli.main import main
from headtohead.config.loading import load_experiment
from headtohead.errors import ConfigError
from headtohead.report.formats.terminal import render_text
from headtohead.report.sections.run import terminal_document
from headtohead.testing.chat_server import Reply, ScriptedChatServer
from headtohead.testing.data import make_text_rows, write_text_table


def _experiment(tmp_path, models: list[dict], capacity: dict) -> dict:
    write_text_table(tmp_path / "dev.csv", make_text_rows(20, classes=("negative", "positive"), seed=5))
    return {
        "name": "capacity",
        "data": {"path": str(tmp_path / "dev.csv")},
        "stats": {"n_resamples": 100},
        "models": models,
        "speed": {"scenarios": ["capacity"], "capacity": capacity},
    }


@pytest.mark.slow
def test_two_servers_of_known_capacity_are_found_and_compared_over_http(tmp_path, monkeypatch):
    monkeypatch.setenv("H2H_CACHE_DIR", str(tmp_path / "cache"))
    answer = lambda n, payload: Reply(text="positive")  # noqa: E731
    with ScriptedChatServer(answer, service_s=0.02) as fast, ScriptedChatServer(answer, service_s=0.04) as slow:
        models = [
            {"name": name, "kind": "openai", "source": "scripted", "base_url": server.base_url}
            for name, server in (("fast", fast), ("slow", slow))
        ]
        capacity = {
            "slo": {"e2e_p99": "2s", "error_rate": "1%"},
            "requests": 30,
            "warmup_requests": 5,
            "repeats": 2,
            "precision": 0.25,
            "start_rate": 40,
            "price_per_hour": {"fast": 2.0, "slow": 2.0},
        }
        run = headtohead.run(_experiment(tmp_path, models, capacity), out_dir=tmp_path / "out", report=True)
    result = run.result.speed.capacity
    fast_m, slow_m = result.model("fast"), result.model("slow")
    assert fast_m.goodput == pytest.approx(50, rel=0.25) and slow_m.goodput == pytest.approx(25, rel=0.25)
    assert all(p.errors == 0 for p in fast_m.probes + slow_m.probes)  # cancelled at an early stop: no error
    assert all(p.ttft_p99_s is not None and p.ttft_p99_s <= p.e2e_p99_s for p in fast_m.probes if p.requests)
    assert fast_m.cost_per_million == pytest.approx(2.0 / (fast_m.goodput * 3600) * 1e6)
    (pair,) = result.comparisons
    assert 1.4 < 1 / pair.ratio < 2.9 and pair.ci_low <= 0.5 <= pair.ci_high  # slow/fast: 2 the other way round
    # answers under load are read and scored: every answer "positive"
    answered = sum(p.answered for p in fast_m.probes)
    assert answered > 0 and sum(p.correct for p in fast_m.probes) < answered
    # results.json holds the record; the report and the terminal say it
    raw = json.loads((tmp_path / "out" / "results.json").read_text())
    assert raw["speed"]["capacity"]["slo"] == {"e2e_p99": 2.0, "error_rate": 0.01}
    assert raw["experiment"]["speed"]["capacity"]["slo"]["e2e_p99"] == "2s"
    assert headtohead.load_result(tmp_path / "out" / "results.json").speed.capacity == result
    assert pair.verdict in (tmp_path / "out" / "report.html").read_text()
    # the gate reads the same searches: the faster model never fails a 5 % capacity drop against the slower
    (checked,) = headtohead.gate(tmp_path / "out", baseline="slow", candidate="fast", max_capacity_drop="5%").decisions
    assert (
        checked.check == "capacity" and checked.outcome != "fail" and checked.estimate == pytest.approx(1 / pair.ratio)
    )
    text = render_text(terminal_document(run.result), 120)
    assert "capacity (Poisson arrivals, p99 e2e ≤ 2 s, errors ≤ 1.0 %, 2 seeded searches" in text
    assert f"  fast: goodput {fast_m.goodput:.3g} requests/s" in text


def test_bad_slos_and_a_capacity_scenario_on_a_local_model_are_one_line_each(tmp_path, capsys):
    endpoint = {"name": "e", "kind": "openai", "source": "m", "base_url": "http://127.0.0.1:9/v1"}
    cases = [
        (
            {"slo": {"ttft_p99": 500}},
            [endpoint],
            "speed.capacity.slo.ttft_p99: 500 needs a unit: write it as 500ms or 2s",
        ),
        ({"slo": {"e2e_p99": "-2s"}}, [endpoint], "speed.capacity.slo.e2e_p99: '-2s' must be above zero"),
        ({"slo": {"error_rate": 0.01}}, [endpoint], "speed.capacity.slo.error_rate: 0.01 needs a unit: write it as 1%"),
        ({}, [endpoint], "scenario capacity needs speed.capacity.slo"),
        (
            {"slo": {"e2e_p99": "2s"}},
            [endpoint, {"name": "local", "kind": "sklearn", "source": "m.skops"}],
            "speed scenario capacity probes endpoint models (kind: openai), but local is not one",
        ),
    ]
    for capacity, models, said in cases:
        path = tmp_path / "exp.yaml"
        path.write_text(yaml.safe_dump(_experiment(tmp_path, models, capacity)))
        with pytest.raises(ConfigError, match="^.*" + said.replace("(", r"\(").replace(")", r"\)")):
            load_experiment(path)
        with pytest.raises(SystemExit) as exited:
            main(["validate", str(path)])
        assert exited.value.code == 2
        err = capsys.readouterr().err.strip()
        assert said in err and "\n" not in err and "Traceback" not in err
