"""An endpoint model's record says which LLM backend answered, so two stored runs can be told apart by it."""

from __future__ import annotations

import platform

import headtohead
from headtohead.report.merge import load_runs, merge_runs
from headtohead.testing.chat_server import Reply, ScriptedChatServer
from headtohead.testing.data import make_text_rows, write_text_table


def test_the_server_that_answered_is_recorded_and_compared(tmp_path, monkeypatch):
    monkeypatch.setenv("H2H_CACHE_DIR", str(tmp_path / "cache"))
    write_text_table(tmp_path / "dev.csv", make_text_rows(6, classes=("negative", "positive"), seed=5))
    with ScriptedChatServer(lambda n, p: Reply(text="positive")) as server:
        model = {"name": "llm", "kind": "openai", "source": "scripted", "base_url": server.base_url}
        exp = {"name": "backend", "data": {"path": str(tmp_path / "dev.csv")}, "models": [model],
               "stats": {"n_resamples": 200}, "speed": {"enabled": False}}  # fmt: skip
        asked = headtohead.run(exp, out_dir=tmp_path / "asked").result.model("llm")
        cached = headtohead.run(exp, out_dir=tmp_path / "cached").result.model("llm")
    # http.server's own Server header (a vLLM server says uvicorn; its responses carry no system_fingerprint)
    assert asked.answers.endpoint.server == f"BaseHTTP/0.6 Python/{platform.python_version()}"
    assert cached.answers.endpoint.server is None  # every answer from the cache: no server said anything
    merged = merge_runs(load_runs([tmp_path / "asked", tmp_path / "cached"]))
    assert merged.warnings == []  # unknown is not different
    (note,) = merged.notes
    assert note.startswith("not recorded in every run, so not checked: llm_backend of llm (unknown in backend @ ")
    assert note.endswith(f"({tmp_path / 'cached'}))")
