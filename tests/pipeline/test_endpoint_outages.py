"""Outages are not answers: an endpoint that stops mid-run leaves examples missing, not wrong.

Against the scripted server (testing/chat_server.py), which stops listening after a number of
answers (a server stopped mid-run) and starts again on the same port, counting at the server
what each run sent: no verdict involves the model while examples are missing, the run exits 4
with the count in one line, ``--resume`` sends exactly the missing requests and the verdict
appears; ``allow_missing`` judges on the rows every model answered, labelled so; the key, the
server and the model name are checked before any model runs.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

import headtohead
from headtohead.cli.main import main
from headtohead.errors import AnswersMissing, ResultsError
from headtohead.report.words.numbers import format_share
from headtohead.report.words.warnings import model_warnings
from headtohead.testing.chat_server import Reply, ScriptedChatServer, last_prompt_text
from headtohead.testing.data import make_text_rows, write_text_table

LABELS = ("negative", "positive")
PRICE = {"input_per_1m": 0.15, "output_per_1m": 0.60}


@pytest.fixture()
def root(tmp_path, monkeypatch):
    """40 rows with ids, two stored-prediction models over them, a private response cache, a key."""
    monkeypatch.setenv("H2H_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("H2H_TEST_KEY", "sk-outage-test")
    rows = make_text_rows(20, classes=LABELS, seed=7)
    for i, row in enumerate(rows):
        row["id"] = f"r{i:03d}"
    write_text_table(tmp_path / "dev.csv", rows)
    flip = {"negative": "positive", "positive": "negative"}
    for name, wrong_every in (("good", 0), ("poor", 2)):  # poor: every other answer wrong
        lines = [
            f"{r['id']},{flip[r['label']] if wrong_every and i % wrong_every == 0 else r['label']}\n"
            for i, r in enumerate(rows)
        ]
        (tmp_path / f"{name}.csv").write_text("id,prediction\n" + "".join(lines))
    (tmp_path / "truth.json").write_text(json.dumps({r["text"]: r["label"] for r in rows}))
    return tmp_path


def _experiment(root: Path, url: str, **llm) -> dict:
    return {
        "name": "outage",
        "data": {"path": str(root / "dev.csv"), "id_column": "id"},
        "models": [
            {"name": "good", "kind": "predictions", "source": str(root / "good.csv")},
            {"name": "poor", "kind": "predictions", "source": str(root / "poor.csv")},
            {
                "name": "llm",
                "kind": "openai",
                "source": "scripted",
                "base_url": url,
                "api_key_env": "H2H_TEST_KEY",
                "max_concurrency": 4,
                "max_retries": 1,
                "timeout_s": 5,
                "price": PRICE,
                **llm,
            },
        ],
        "eval": {"batch_size": 8, "device": "cpu"},
        "stats": {"n_resamples": 200},
    }


def _write(root: Path, experiment: dict) -> str:
    path = root / "exp.yaml"
    path.write_text(yaml.safe_dump(experiment, sort_keys=False))
    return str(path)


class Answers:
    """The true label of each example (prose for every tenth row), until ``stop_after`` answers.

    Then the server stops: it closes the connection of the request that arrived, and stops
    listening, so every later try is refused — a server stopped mid-run.
    """

    def __init__(self, truth: dict[str, str], stop_after: int | None = None) -> None:
        self.truth, self.stop_after = truth, stop_after
        # rows 0, 10, 20 and 30, and the row of the first request that arrives: at least one prose answer is
        # among the 15 that come back whatever order the four workers send in (a loaded machine reorders them)
        self.prose = set(list(truth)[::10])
        self.server: ScriptedChatServer | None = None
        self.stopped = False

    def __call__(self, number: int, payload: dict) -> Reply:
        if self.stop_after is not None and number > self.stop_after:
            if not self.stopped and self.server is not None:
                self.stopped = True
                threading.Thread(target=self.server.stop).start()
            return Reply("reset")
        prompt = last_prompt_text(payload)
        text = max((t for t in self.truth if t in prompt), key=len)
        if number == 1 and self.stop_after is not None:  # a server that stops: its 15 answers hold prose
            self.prose.add(text)
        return Reply(text="It depends." if text in self.prose else self.truth[text])


def _serve(script: Answers, port: int = 0) -> ScriptedChatServer:
    server = ScriptedChatServer(script, model="scripted", port=port)
    script.server = server
    return server


def test_a_server_stopped_mid_run_decides_nothing_and_resume_asks_exactly_the_missing(root, capsys):
    truth = json.loads((root / "truth.json").read_text())
    out = root / "out"
    stopping = Answers(truth, stop_after=15)
    with _serve(stopping) as server:
        port = server.port
        experiment = _write(root, _experiment(root, server.base_url))
        with pytest.raises(SystemExit) as stopped:
            main(["run", experiment, "--out", str(out)])
        assert server.counts.answered == 15
    printed = capsys.readouterr()
    assert stopped.value.code == 4, printed.err
    last = [line for line in printed.err.splitlines() if line.strip()][-1]
    assert "llm never answered 25 of 40 examples" in last and "--resume" in last and "Traceback" not in printed.err

    result = headtohead.load_result(out / "results.json")
    assert result.incomplete == "answers missing"
    assert result.missing.models == {"llm": 25} and not result.missing.allowed
    llm = result.model("llm")
    assert llm.answers.n_missing == 25 and len(llm.answers.missing) == 25
    assert all("connection" in f.reason for f in llm.answers.failed)
    # no verdict involving llm: the other pair is compared as usual, on every row
    assert [(c.model_a, c.model_b) for c in result.stats.comparisons] == [("good", "poor")]
    assert [m.name for m in result.stats.models] == ["good", "poor"]
    assert all("llm" not in c.verdict for c in result.stats.comparisons)
    html = (out / "report.html").read_text()
    assert "No verdict involves llm" in html and "never answered 25 of 40 examples" in html
    # the unparseable answers are counted among the 15 that came back, not among the 40 examples
    prose = llm.answers.n_unparseable
    assert prose > 0
    unreadable = next(w for w in model_warnings(llm) if "could not be read as a label" in w)
    assert f"'llm': {prose} of the 15 answers that came back could not be read" in unreadable
    assert f"answers/llm.jsonl; {format_share(prose / 15)})" in unreadable  # the share of the answers
    shown = f"{prose} unparseable answer{'s' if prose != 1 else ''} of the 15 that came back"
    assert shown in html and f"{prose} of 40" not in html
    # everything answered is kept: the predictions of the 15 answers, and the cache
    predictions = headtohead.load_predictions(out / "predictions.npz")
    assert (predictions["llm"].pred >= 0).sum() + llm.answers.n_unparseable == 15
    assert len(list((root / "cache").rglob("*.sqlite"))) == 1
    # server restarted on the same port: --resume asks exactly the 25 missing examples
    with _serve(Answers(truth), port=port) as server:
        main(["run", experiment, "--out", str(out), "--resume"])
        assert server.counts.requests == 25
    printed = capsys.readouterr()
    result = headtohead.load_result(out / "results.json")
    assert result.incomplete is None and result.missing is None
    llm = result.model("llm")
    assert llm.answers.n_missing == 0 and len(llm.answers.from_cache) == 15
    wrong = llm.answers.n_unparseable  # rows 0, 10, 20, 30 and the first request's: 4 or 5 prose answers
    assert wrong in (4, 5) and llm.quality.accuracy == pytest.approx((40 - wrong) / 40)  # stay wrong answers
    pairs = [{c.model_a, c.model_b} for c in result.stats.comparisons]
    assert len(pairs) == 3 and {"good", "llm"} in pairs and {"poor", "llm"} in pairs
    assert [m.name for m in result.stats.models] == ["good", "poor", "llm"]
    assert "e-0" not in printed.out  # costs written out, never 5.67e-05
    warning = next(w for w in model_warnings(llm) if "could not be read as a label" in w)
    assert f"{wrong} of 40 answers" in warning and "answers/llm.jsonl" in warning and "fp16" not in warning


def test_allow_missing_judges_on_the_rows_every_model_answered_and_says_so(root):
    truth = json.loads((root / "truth.json").read_text())
    stopping = Answers(truth, stop_after=15)
    with _serve(stopping) as server:
        run = headtohead.run(_experiment(root, server.base_url), out_dir=root / "out", allow_missing=True)
    result = run.result
    assert result.incomplete == "answers missing"
    assert result.missing.allowed and result.missing.rows_used == 15
    assert {m.name: m.n_examples for m in result.stats.models} == {"good": 15, "poor": 15, "llm": 15}
    assert len(result.stats.comparisons) == 3
    assert all("Judged on the 15 examples every model answered" in c.verdict for c in result.stats.comparisons)
    unparseable = result.model("llm").answers.n_unparseable  # wrong answers, among the 15 answered
    assert result.stats.model("llm").accuracy.value == pytest.approx((15 - unparseable) / 15)
    assert result.model("llm").quality.accuracy == pytest.approx((15 - unparseable) / 40)  # the record: all rows


def test_without_allow_missing_the_python_api_raises_after_saving(root):
    truth = json.loads((root / "truth.json").read_text())
    stopping = Answers(truth, stop_after=5)
    with _serve(stopping) as server, pytest.raises(AnswersMissing, match="never answered 35 of 40") as raised:
        headtohead.run(_experiment(root, server.base_url), out_dir=root / "out")
    run = raised.value.run
    assert run.result.missing.models == {"llm": 35}
    assert headtohead.load_result(root / "out" / "results.json").missing.models == {"llm": 35}


class _Watch(logging.Handler):
    """Records each warning with what had happened by then: requests at the server, results written."""

    def __init__(self, server: ScriptedChatServer, results: Path) -> None:
        super().__init__(logging.WARNING)
        self.server, self.results, self.seen = server, results, []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append((record.getMessage(), self.server.counts.requests, self.results.exists()))


def test_a_wrong_model_name_is_warned_about_before_any_model_runs(root):
    truth = json.loads((root / "truth.json").read_text())
    logger = logging.getLogger("headtohead")
    with _serve(Answers(truth)) as server:
        watch = _Watch(server, root / "out" / "results.json")
        logger.addHandler(watch)
        try:
            headtohead.run(_experiment(root, server.base_url, source="gpt-9"), out_dir=root / "out")
        finally:
            logger.removeHandler(watch)
    found = [(requests, written) for message, requests, written in watch.seen if "'gpt-9'" in message]
    assert found and found[0] == (0, False)  # before any request and before the first model was saved
    message = next(m for m, _, _ in watch.seen if "'gpt-9'" in m)
    assert "does not list the model 'gpt-9'" in message and "'scripted'" in message
    assert any("gpt-9" in w for w in headtohead.load_result(root / "out" / "results.json").model("llm").warnings)


def test_a_missing_key_and_a_server_down_stop_the_run_before_any_model_runs(root, capsys, monkeypatch):
    monkeypatch.delenv("H2H_TEST_KEY")
    with _serve(Answers({})) as server:
        experiment = _write(root, _experiment(root, server.base_url))
        with pytest.raises(SystemExit) as stopped:
            main(["run", experiment, "--out", str(root / "out")])
    assert stopped.value.code == 2 and "H2H_TEST_KEY" in capsys.readouterr().err
    assert not (root / "out" / "results.json").exists()  # the stored predictions were not evaluated first
    monkeypatch.setenv("H2H_TEST_KEY", "sk-outage-test")
    with pytest.raises(SystemExit) as stopped:
        main(["run", experiment, "--out", str(root / "out")])  # the server is stopped now
    assert stopped.value.code == 2 and "cannot reach base_url" in capsys.readouterr().err
    assert not (root / "out" / "results.json").exists()


def test_a_run_that_stops_early_leaves_results_marked_unfinished(root):
    experiment = _experiment(root, "http://127.0.0.1:9/v1")
    # a model that fails as it loads, after the first finished (a missing prediction file is refused
    # before any model runs, with the data: it would stop the run before anything is saved)
    experiment["models"] = experiment["models"][:1] + [
        {"name": "gone", "kind": "python", "source": "h2h_no_such_module:make"}
    ]
    with pytest.raises(headtohead.errors.H2HError):
        headtohead.run(experiment, out_dir=root / "out")
    saved = headtohead.load_result(root / "out" / "results.json")
    assert [m.name for m in saved.models] == ["good"] and saved.incomplete == "unfinished"
    assert np.isfinite(saved.model("good").quality.accuracy)


@pytest.mark.slow
def test_a_real_server_stopped_mid_run_is_asked_exactly_the_missing_after_a_restart(tmp_path, monkeypatch):
    """``transformers serve`` (a tiny Llama) terminated after a few answers, then started again on its port."""
    for module in ("fastapi", "uvicorn", "accelerate", "openai"):  # transformers serve's own needs (dev extra)
        pytest.importorskip(module)
    from headtohead.testing.tiny_llm import TransformersServe, build_tiny_llama

    monkeypatch.setenv("H2H_CACHE_DIR", str(tmp_path / "cache"))
    # 80 examples asked one at a time: far more than the watcher below needs to see 5 and stop the server, so a
    # fast moment of the tiny model cannot answer them all first
    rows = make_text_rows(40, classes=LABELS, seed=2)
    write_text_table(tmp_path / "dev.csv", rows)
    model_dir = build_tiny_llama(tmp_path / "tiny")
    exp = {
        "name": "real-outage",
        "data": {"path": str(tmp_path / "dev.csv")},
        "eval": {"device": "cpu"},
        "stats": {"n_resamples": 200},
        "models": [
            {
                "name": "tiny",
                "kind": "openai",
                "source": str(model_dir),
                "base_url": "",
                "max_concurrency": 1,
                "max_tokens": 4,
                "max_retries": 1,
                "timeout_s": 30,
            },
        ],
    }
    with TransformersServe(model_dir, tmp_path / "serve-1.log") as server:
        exp["models"][0]["base_url"] = server.base_url
        port = server.port

        def stop_after_five() -> None:
            while server.chat_requests() < 5:
                time.sleep(0.05)
            server.__exit__()  # terminated mid-run, as a person stopping it would

        threading.Thread(target=stop_after_five, daemon=True).start()
        with pytest.raises(AnswersMissing) as raised:
            headtohead.run(exp, out_dir=tmp_path / "out")
    missing = raised.value.run.result.missing.models["tiny"]
    assert 0 < missing < len(rows) and raised.value.run.result.stats is None  # one model, incomplete: no statistic
    with TransformersServe(model_dir, tmp_path / "serve-2.log", port=port) as server:
        run = headtohead.run(exp, out_dir=tmp_path / "out", resume=True)
        assert server.chat_requests() == missing  # exactly the examples never answered
    assert run.result.missing is None and run.result.stats.model("tiny").n_examples == len(rows)
    assert len(run.result.model("tiny").answers.from_cache) == len(rows) - missing


PINNED = "Server is pinned to 'smol-135m'; requested 'gpt-9'."


def test_a_models_list_that_fails_is_said_once_and_a_wrong_name_refused_says_the_servers_reason(root):
    """``transformers serve`` pinned to one model: ``/v1/models`` answers 500, every chat request 400 with a reason."""
    with ScriptedChatServer(
        lambda n, p: Reply("status", status=400, message=PINNED),
        model="smol-135m",
        models=Reply("status", status=500, message="Internal Server Error"),
    ) as server:
        watch = _Watch(server, root / "out" / "results.json")
        logging.getLogger("headtohead").addHandler(watch)
        try:
            with pytest.raises(ResultsError) as stopped:
                headtohead.run(_experiment(root, server.base_url, source="gpt-9"), out_dir=root / "out")
        finally:
            logging.getLogger("headtohead").removeHandler(watch)
        assert server.counts.requests == 40 and server.counts.statuses[400] == 40  # each chat request refused
    # the check that could not be made: one warning, before any request and before any model was saved
    unchecked = [(m, n, written) for m, n, written in watch.seen if "could not be checked" in m]
    assert len(unchecked) == 1 and unchecked[0][1:] == (0, False)
    assert f"{server.base_url}/models answered HTTP 500: Internal Server Error" in unchecked[0][0]
    assert "'gpt-9' (source)" in unchecked[0][0] and "unchecked" in unchecked[0][0]
    # the server's reason, said once (not once per request), and the last words say what happened: no NaN scores
    said = [m for m, _, _ in watch.seen if PINNED in m]
    assert len(said) == 1 and said[0].count(PINNED) == 1
    assert f"40 of 40 examples (100.0 %) were refused by the server (HTTP 400: {PINNED})" in said[0]
    last = str(stopped.value)
    assert last.startswith(
        f"model 'llm' has no prediction for any example: 40 of 40 examples were refused by the server "
        f"(HTTP 400: {PINNED}); check source"
    )
    assert last.count(PINNED) == 1 and "NaN" not in last and not any("NaN" in m for m, _, _ in watch.seen)
    # the answers record keeps each failure with the server's reason
    saved = json.loads((root / "out" / "results.json").read_text())
    llm = next(m for m in saved["models"] if m["name"] == "llm")["answers"]
    assert llm["n_failed"] == 40 and llm["missing"] == []
    assert {f["reason"] for f in llm["failed"]} == {f"HTTP 400: {PINNED}"}
    answers = [json.loads(line) for line in (root / "out" / "answers" / "llm.jsonl").read_text().splitlines()]
    assert {a["error"] for a in answers} == {f"HTTP 400: {PINNED}"} and all(a["answer"] is None for a in answers)


def test_some_requests_refused_are_said_with_the_servers_reason_once_among_answers_counted_as_they_came(root, capsys):
    """Every fourth example refused (400, its reason), the rest answered as ``Answers`` does (prose every tenth)."""
    truth = json.loads((root / "truth.json").read_text())
    answers = Answers(truth)
    refused = set(sorted(truth)[1::4])

    def script(number, payload):
        text = max((t for t in truth if t in last_prompt_text(payload)), key=len)
        return (
            Reply("status", status=400, message=f"prompt too long: {len(text)} characters")
            if text in refused
            else answers(number, payload)
        )

    with ScriptedChatServer(script, model="scripted", models=Reply("malformed")) as server:
        run = headtohead.run(_experiment(root, server.base_url), out_dir=root / "out", report=True)
    llm = run.result.model("llm")
    prose = len(answers.prose - refused)
    assert llm.answers.n_failed == 10 and llm.answers.n_unparseable == prose
    said = model_warnings(llm)
    assert any("/models answered with no list of models that could be read" in w for w in said)
    unreadable = next(w for w in said if "could not be read as a label" in w)
    assert f"{prose} of the 30 answers that came back could not be read" in unreadable
    refusal = next(w for w in said if "refused by the server" in w)
    first = next(f.reason for f in llm.answers.failed)
    assert (
        f"10 of 40 examples (25.0 %) were refused by the server (HTTP 400, the first: {first[len('HTTP 400: ') :]})"
        in refusal
    )
    assert refusal.count("prompt too long") == 1  # the first reason, not one per request
    html = (root / "out" / "report.html").read_text()
    assert (
        f"{prose} unparseable answers of the 30 that came back, 10 examples refused by the server (HTTP 400, the first:"
        in html
    )
