"""Runs with an endpoint model (kind: openai) against servers on 127.0.0.1 that count their requests.

* the scripted server (testing/chat_server.py): prose answers counted as wrong over every row and
  listed escaped in the reports, cost = Σ usage × price, the response cache (a second run sends
  nothing, ``--no-cache`` asks again), logprobs → probabilities, a 429 storm through a whole run,
  the API key in no file and no output, Ctrl-C keeping every answer received, bad input;
* a real server (``transformers serve`` with a Llama of known behaviour, testing/tiny_llm.py): a
  second identical run sends 0 requests and ``--no-cache`` sends them again, counted in its log.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import psutil
import pytest
import yaml

import headtohead
from headtohead.cli.main import main
from headtohead.testing.chat_server import Reply, ScriptedChatServer, last_prompt_text
from headtohead.testing.data import make_text_rows, write_text_table

LABELS = ("negative", "positive")
KEY = "sk-h2h-TEST-9f3b2c71e5d04a8b"  # distinctive: searched for in every file and output
PRICE = {"input_per_1m": 0.15, "output_per_1m": 0.60}


@pytest.fixture()
def data(tmp_path, monkeypatch):
    """40 rows with ids, a private response cache, and the key in the environment."""
    monkeypatch.setenv("H2H_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("H2H_TEST_KEY", KEY)
    rows = make_text_rows(20, classes=LABELS, seed=5)
    for i, row in enumerate(rows):
        row["id"] = f"s{i:03d}"
    write_text_table(tmp_path / "dev.csv", rows)
    return tmp_path, {r["text"]: r["label"] for r in rows}


def _experiment(root: Path, url: str, **model) -> dict:
    entry = {
        "name": "llm",
        "kind": "openai",
        "source": "scripted-7b",
        "base_url": url,
        "api_key_env": "H2H_TEST_KEY",
        "max_concurrency": 4,
        "timeout_s": 5,
        "price": PRICE,
        **model,
    }
    return {
        "name": "endpoint",
        "data": {"path": str(root / "dev.csv"), "id_column": "id"},
        "models": [entry],
        "eval": {"batch_size": 8, "device": "cpu"},
        "stats": {"n_resamples": 200},
    }


class Truthful:
    """Answers each example's label, except every tenth example (by its text), answered with prose."""

    def __init__(self, truth: dict[str, str], prose_every: int = 10, **reply) -> None:
        self.truth, self.reply = truth, reply
        self.prose = set(sorted(truth)[::prose_every]) if prose_every else set()

    def text(self, payload) -> str:
        prompt = last_prompt_text(payload)
        return max((t for t in self.truth if t in prompt), key=len)

    def __call__(self, number, payload) -> Reply:
        text = self.text(payload)
        if text in self.prose:
            return Reply(text="Hard to say <b>&amp;</b> | it depends", **self.reply)
        return Reply(text=self.truth[text].capitalize() + ".", **self.reply)


def _files_holding(root: Path, secret: str) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def test_prose_answers_are_wrong_over_every_row_listed_escaped_and_priced_from_usage(data, capsys):
    root, truth = data
    script = Truthful(truth)
    out = root / "out"
    with ScriptedChatServer(script) as server:
        main(["run", _write(root, _experiment(root, server.base_url)), "--out", str(out)])
        printed = capsys.readouterr()
        assert server.counts.requests == 40 and server.counts.max_in_flight <= 4
        assert set(server.counts.authorization) == {f"Bearer {KEY}"}  # the key travels in the header only
        usage_in, usage_out = server.counts.prompt_tokens, server.counts.completion_tokens

    result = headtohead.load_result(out / "results.json")
    model = result.model("llm")
    prose = len(script.prose)
    assert prose == 4
    assert model.quality.accuracy == pytest.approx((40 - prose) / 40)  # every example in the denominator
    assert model.answers.n_unparseable == prose
    assert sorted(a.answer for a in model.answers.unparseable) == ["Hard to say <b>&amp;</b> | it depends"] * prose
    expected = usage_in * PRICE["input_per_1m"] / 1e6 + usage_out * PRICE["output_per_1m"] / 1e6
    assert abs(model.answers.cost - expected) < 1e-4 and model.answers.cost == pytest.approx(expected)
    saved = json.loads((out / "results.json").read_text())["models"][0]["answers"]
    assert saved["cost"] == pytest.approx(expected) and saved["endpoint"]["requests"] == 40
    cost_row = next(s for s in result.speed.model("llm").cost.scenarios if s.scenario == "endpoint")
    assert cost_row.cost_per_million == pytest.approx(expected / 40 * 1e6)

    html = (out / "report.html").read_text()
    assert "Hard to say &lt;b&gt;&amp;amp;&lt;/b&gt; | it depends" in html and "<b>&amp;</b>" not in html
    assert "4 unparseable answers" in html and "label only" in html.replace("label-only", "label only")
    assert "cost / 1M predictions" in html
    # the key: in no file under --out, the response cache, or any output
    assert _files_holding(out, KEY) == [] and _files_holding(root / "cache", KEY) == []
    assert KEY not in printed.out + printed.err
    assert "requests" in printed.out and "unparseable" in printed.out  # the terminal's endpoint lines
    assert "req/s" in printed.err and "tok/s" in printed.err  # the progress bar's rates


def test_the_cache_answers_a_second_run_and_no_cache_asks_again(data):
    root, truth = data
    with ScriptedChatServer(Truthful(truth)) as server:
        exp = _experiment(root, server.base_url)
        first = headtohead.run(exp, out_dir=root / "a", report=False).result.model("llm")
        assert server.counts.requests == 40
        second = headtohead.run(exp, out_dir=root / "b", report=True).result.model("llm")
        assert server.counts.requests == 40  # nothing sent
        assert second.answers.from_cache == sorted(second.answers.from_cache) and len(second.answers.from_cache) == 40
        assert second.answers.endpoint.requests == 0 and second.answers.endpoint.timing.latency is None  # nothing timed
        assert second.answers.cost_per_million == pytest.approx(first.answers.cost_per_million)
        html = (root / "b" / "report.html").read_text()
        assert "40 answered from the response cache, 0 asked" in html
        assert "latency: not measured (every answer came from the response cache)" in html
        assert "not measured (no request answered in this run)" in html  # its speed row, with its cost
        assert second.answers.cost == pytest.approx(first.answers.cost) and second.answers.endpoint.cost_sent == 0.0
        assert second.quality.accuracy == first.quality.accuracy
        fresh = headtohead.run(exp, out_dir=root / "c", report=False, response_cache=False).result.model("llm")
        assert server.counts.requests == 80 and fresh.answers.from_cache == []
        # a changed prompt is another question
        headtohead.run(
            _experiment(root, server.base_url, prompt="Label: {text}\nOne of {labels}."),
            out_dir=root / "d",
            report=False,
        )
        assert server.counts.requests == 120


def test_logprobs_give_class_probabilities_and_a_429_storm_loses_nothing(data):
    root, truth = data
    seen: dict[str, int] = {}
    base = Truthful(truth, prose_every=0)

    def script(number, payload):
        text = base.text(payload)
        seen[text] = seen.get(text, 0) + 1
        if seen[text] == 1:
            return Reply("status", status=429, retry_after="0.05")
        first = truth[text][:3]
        other = "neg" if first == "pos" else "pos"
        return Reply(text=truth[text], logprobs={first: 0.7, other: 0.2, "The": 0.1})

    with ScriptedChatServer(script) as server:
        outcome = headtohead.run(_experiment(root, server.base_url, max_concurrency=8), out_dir=root / "out")
        assert server.counts.requests == 80 and server.counts.statuses[429] == 40  # (and one GET /models)
        assert server.counts.max_in_flight <= 8
    model = outcome.result.model("llm")
    assert model.quality.accuracy == 1.0 and model.answers.endpoint.retries == 40
    assert model.answers.probabilities == "logprobs"
    assert model.answers.outside_mass_mean == pytest.approx(0.1)
    predictions = headtohead.load_predictions(root / "out" / "predictions.npz")
    proba = predictions["llm"].proba
    assert np.allclose(proba.max(axis=1), 0.7 / 0.9) and np.allclose(proba.sum(axis=1), 1.0)
    assert outcome.result.stats.model("llm").ece is not None


class HeldUntilTwoProcesses(Truthful):
    """Truthful answers, each held until requests from two client processes are in flight at once.

    So a model's shards overlap at the server whatever their start-up times: a shard that kept
    more requests in flight than its share would show it in ``max_in_flight``. Only an arrival
    can open the gate, so each request checks once as it arrives; no clock is involved.
    """

    def __init__(self, truth: dict[str, str]) -> None:
        super().__init__(truth, prose_every=0)
        self.server: ScriptedChatServer | None = None
        self.open = False
        self.ready = threading.Condition()

    def processes_in_flight(self) -> int:
        assert self.server is not None
        port = int(self.server.base_url.rsplit(":", 1)[1].split("/")[0])
        ports = set(self.server.counts.ports_in_flight)
        clients = [c for c in psutil.net_connections("tcp") if c.raddr and c.raddr.port == port]
        return len({c.pid for c in clients if c.laddr.port in ports})

    def __call__(self, number, payload) -> Reply:
        with self.ready:
            if not self.open and self.processes_in_flight() >= 2:
                self.open = True
                self.ready.notify_all()
            self.ready.wait_for(lambda: self.open)  # the second shard's arrival opens it, however late it starts
        return super().__call__(number, payload)


def test_max_concurrency_holds_for_the_model_over_shards_in_processes(data, capsys):
    """max_concurrency 2 over 3 shards in processes: the model runs on 2 shards of 1 request each."""
    root, truth = data
    script = HeldUntilTwoProcesses(truth)
    exp = _experiment(root, "", max_concurrency=2)
    exp["execution"] = {"mode": "processes", "shards": 3}
    with ScriptedChatServer(script) as server:
        script.server = server
        exp["models"][0]["base_url"] = server.base_url
        main(["run", _write(root, exp), "--out", str(root / "out")])
        assert server.counts.requests == 40
        assert server.counts.max_in_flight == 2  # the two shards side by side, one request each
    model = headtohead.load_result(root / "out" / "results.json").model("llm")
    timing = model.answers.endpoint.timing
    assert timing.concurrency == 2 and timing.shard_concurrency == [1, 1] and timing.peak_in_flight == [1, 1]
    assert model.execution_mode == "processes" and sorted(w.shard for w in model.workers) == [0, 1]
    assert model.quality.accuracy == 1.0 and model.answers.endpoint.requests == 40
    assert "latency per request at concurrency 2 (2 shards side by side: 1 + 1" in capsys.readouterr().out


def test_shards_run_in_turn_each_have_the_whole_bound(data, capsys):
    """mode local runs a model's shards one after another: each may keep max_concurrency in flight."""
    root, truth = data
    with ScriptedChatServer(Truthful(truth, prose_every=0, delay_s=0.01)) as server:
        exp = _experiment(root, server.base_url, max_concurrency=3)
        exp["execution"] = {"shards": 2}
        main(["run", _write(root, exp), "--out", str(root / "out")])
        assert server.counts.requests == 40 and server.counts.max_in_flight <= 3
    timing = headtohead.load_result(root / "out" / "results.json").model("llm").answers.endpoint.timing
    assert timing.concurrency == 3 and timing.shard_concurrency == [3, 3]
    assert all(1 <= peak <= 3 for peak in timing.peak_in_flight) and len(timing.peak_in_flight) == 2
    assert "latency per request at concurrency 3 (2 shards one after another)" in capsys.readouterr().out


def _write(root: Path, experiment: dict) -> str:
    path = root / "exp.yaml"
    path.write_text(yaml.safe_dump(experiment, sort_keys=False))
    return str(path)


def test_bad_input_is_one_line_with_exit_code_2(data, capsys, monkeypatch):
    root, _ = data
    with ScriptedChatServer(lambda n, p: Reply(text="positive")) as server:
        cases = [
            ({"api_key_env": "H2H_TEST_NO_SUCH_KEY"}, "H2H_TEST_NO_SUCH_KEY named by api_key_env is not set"),
            ({"prompt": "Classify into {labels}"}, "prompt template has no {text}"),
            ({"base_url": f"http://user:{KEY}@127.0.0.1:9/v1"}, "must not carry credentials"),
            ({"base_url": "http://127.0.0.1:9/v1"}, "cannot reach base_url http://127.0.0.1:9/v1"),
        ]
        for change, message in cases:
            with pytest.raises(SystemExit) as stopped:
                main(["run", _write(root, _experiment(root, server.base_url, **change)), "--out", str(root / "o")])
            err = capsys.readouterr().err
            assert stopped.value.code == 2, err
            assert message in err and "Traceback" not in err and KEY not in err
            assert len([line for line in err.splitlines() if line.strip()]) == 1, err


def test_ctrl_c_keeps_every_answer_received_and_resume_asks_only_the_rest(data, until):
    root, truth = data
    with ScriptedChatServer(Truthful(truth, prose_every=0, delay_s=0.15)) as server:
        experiment = _write(root, _experiment(root, server.base_url, max_concurrency=2))
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        command = [sys.executable, "-m", "headtohead.cli.main", "run", experiment, "--out", str(root / "out")]
        process = subprocess.Popen(
            command,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        assert until(lambda: server.counts.answered >= 8, process), process.communicate()
        process.send_signal(signal.SIGINT)
        _, err = process.communicate()
        assert process.returncode == 130, err
        assert "Traceback" not in err and KEY not in err
        time.sleep(0.5)  # the requests in flight at Ctrl-C end at the server (their writes fail or land unread)
        answered = server.counts.answered
        with sqlite3.connect(root / "cache" / "responses.sqlite") as db:
            kept = db.execute("SELECT COUNT(*) FROM answers").fetchone()[0]
        # every answer received is in the cache: only the max_concurrency (2) answers still on their way when
        # Ctrl-C came (written by the server, not yet read by the client) may be missing
        assert answered - 2 <= kept <= answered < 40 and kept >= 6
        asked_before = server.counts.requests
        main(["run", experiment, "--out", str(root / "out"), "--resume"])
        assert server.counts.requests - asked_before == 40 - kept
    model = headtohead.load_result(root / "out" / "results.json").model("llm")
    assert model.quality.accuracy == 1.0 and len(model.answers.from_cache) == kept


@pytest.mark.slow
def test_a_real_server_counts_no_request_on_a_second_run_and_all_with_no_cache(tmp_path, monkeypatch):
    """``transformers serve`` with a Llama that answers 'positive' on cue words, gibberish otherwise."""
    for module in ("fastapi", "uvicorn", "accelerate", "openai"):  # transformers serve's own needs (dev extra)
        pytest.importorskip(module)
    from headtohead.testing.tiny_llm import CUE_WORDS, TransformersServe, build_tiny_llama

    monkeypatch.setenv("H2H_CACHE_DIR", str(tmp_path / "cache"))
    rows = make_text_rows(8, classes=LABELS, seed=2)
    write_text_table(tmp_path / "dev.csv", rows)
    model_dir = build_tiny_llama(tmp_path / "tiny")
    cued = [any(f" {w} " in f" {r['text']} " for w in CUE_WORDS) for r in rows]
    with TransformersServe(model_dir, tmp_path / "serve.log") as server:
        exp = {
            "name": "real",
            "data": {"path": str(tmp_path / "dev.csv")},
            "eval": {"device": "cpu"},
            "stats": {"n_resamples": 200},
            "models": [
                {
                    "name": "tiny",
                    "kind": "openai",
                    "source": str(model_dir),
                    "base_url": server.base_url,
                    "max_concurrency": 2,
                    "max_tokens": 4,
                    "price": PRICE,
                }
            ],
        }
        first = headtohead.run(exp, out_dir=tmp_path / "a", report=True).result.model("tiny")
        assert server.chat_requests() == 16
        headtohead.run(exp, out_dir=tmp_path / "b").result.model("tiny")
        assert server.chat_requests() == 16  # a second identical run: 0 requests at the server
        main(["run", _write(tmp_path, exp), "--out", str(tmp_path / "c"), "--no-cache"])
        assert server.chat_requests() == 32
    # the known answers: 'positive' where a cue word is, gibberish (unparseable: wrong) elsewhere
    truth = np.array([LABELS.index(r["label"]) for r in rows])
    assert first.quality.accuracy == pytest.approx(np.mean(np.array(cued) & (truth == 1)))
    assert first.answers.n_unparseable == sum(not c for c in cued) > 0
    assert first.answers.probabilities == "label only" and first.answers.prompt_tokens > 0
    assert "label only" in (tmp_path / "a" / "report.html").read_text()
