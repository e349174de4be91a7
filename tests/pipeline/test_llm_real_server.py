"""SmolLM2-135M-Instruct behind ``transformers serve`` (a real OpenAI-compatible server, offline, on 127.0.0.1)."""

from __future__ import annotations

import csv
import itertools
import json

import pytest

import headtohead
from headtohead.adapters.prompting import read_answer
from headtohead.errors import ModelError, ResultsError

LABELS = ["negative", "positive"]


@pytest.fixture(scope="module")
def served(smollm2_folder, tmp_path_factory):
    """One ``transformers serve`` of SmolLM2 for the module's tests (its start-up is most of a test's time);
    each test counts the requests it sent as a difference."""
    for module in ("fastapi", "uvicorn", "accelerate", "openai"):  # transformers serve's own needs (dev extra)
        pytest.importorskip(module)
    from headtohead.testing.tiny_llm import TransformersServe

    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with TransformersServe(smollm2_folder, log, startup_timeout_s=300) as server:
        yield server


@pytest.mark.slow
@pytest.mark.shared_data
def test_a_real_small_instruct_model_behind_a_real_server_has_every_answer_kept_and_read(
    smollm2_folder, served, tmp_path, monkeypatch, shared_data
):
    """The first 12 SST-2 dev sentences, zero-shot, ``stop: ["\\n"]``, ``extra_body: {seed: 0}``.

    The server honours ``stop`` (no answer holds a newline) and accepts ``seed``; it returns no
    log-probabilities, so the model is label-only, and ``answer: score`` (the prompt's log-probabilities
    through ``echo``) is refused in one line. Asked for another model, it refuses every request (HTTP 400,
    ``Server is pinned to …``): the run's last words give that reason. Measured (CPU, float32): most answers are prose
    ("The text is …"), unparseable; those that are labels lean to "negative".
    """
    monkeypatch.setenv("H2H_CACHE_DIR", str(tmp_path / "cache"))
    with open(shared_data / "sst2" / "dev.tsv", newline="") as f:
        rows = list(itertools.islice(csv.DictReader(f, delimiter="\t"), 12))
    with open(tmp_path / "dev.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["text", "label"])
        writer.writerows([r["text"].strip(), LABELS[int(r["label"])]] for r in rows)
    folder, server = smollm2_folder, served
    before = server.chat_requests()
    experiment = {
        "name": "smollm2",
        "data": {"path": str(tmp_path / "dev.csv")},
        "eval": {"device": "cpu"},
        "stats": {"n_resamples": 200},
        "models": [
            {
                "name": "smollm2",
                "kind": "openai",
                "source": str(folder),
                "base_url": server.base_url,
                "max_concurrency": 2,
                "max_tokens": 8,
                "stop": ["\n"],
                "extra_body": {"seed": 0},
            }
        ],
    }
    model = headtohead.run(experiment, out_dir=tmp_path / "out", report=True).result.model("smollm2")
    assert server.chat_requests() - before == 12
    # answer: score needs the prompt's log-probabilities (echo), which transformers serve does not return
    experiment["models"][0] |= {"answer": "score", "extra_body": {}}
    with pytest.raises(ModelError, match="returned no log-probabilities of the prompt"):
        headtohead.run(experiment, out_dir=tmp_path / "scored")
    # a model name the server is not pinned to: each request refused (HTTP 400, FastAPI's {"detail": …}),
    # the server's reason said in the last words, not NaN scores
    experiment["models"][0] |= {"answer": "generate", "source": "gpt-9"}
    with pytest.raises(ResultsError) as refused:
        headtohead.run(experiment, out_dir=tmp_path / "wrong")
    assert server.chat_requests() - before == 12 + 12
    _capacity_probes(server.base_url, folder)  # the same server under load (issue 43)
    assert str(refused.value).startswith(
        f"model 'smollm2' has no prediction for any example: 12 of 12 examples were refused by the server "
        f"(HTTP 400: Server is pinned to '{folder}'; requested 'gpt-9'.)"
    )
    answers = [json.loads(line) for line in (tmp_path / "out" / "answers" / "smollm2.jsonl").read_text().splitlines()]
    assert [a["input"] for a in answers] == [r["text"].strip() for r in rows]
    assert [a["gold"] for a in answers] == [LABELS[int(r["label"])] for r in rows]
    assert all(a["answer"] and "\n" not in a["answer"] for a in answers)  # every answer came; stop held
    for a in answers:  # the label kept is the one the rules read from the raw answer
        index, rule = read_answer(a["answer"], LABELS)
        assert (a["label"], a["rule"]) == (None if index is None else LABELS[index], rule)
    assert model.answers.n_unparseable == sum(a["label"] is None for a in answers) > 0
    assert model.answers.probabilities == "label only" and model.answers.n_with_probabilities == 0
    html = (tmp_path / "out" / "report.html").read_text()
    shown = next(a for a in answers if a["label"] is None)
    listed = html[html.index("Unparseable answers of smollm2") :]
    assert shown["input"].replace("'", "&#39;") in listed and f">{shown['gold']}</td>" in listed


def _capacity_probes(base_url: str, folder) -> None:
    """The capacity scenario's probes against the real server (issue 43), at small rates: every request streamed
    (its first token before its end), none failed, its answer read, judged against the SLOs; about 10 s."""
    from headtohead.adapters.chat_stream import LoadTarget, stream_probe
    from headtohead.config.speed import SpeedConfig
    from headtohead.engines.capacity import run_capacity

    payload = {
        "model": str(folder),
        "messages": [{"role": "user", "content": "Is 'a fine, moving film' positive or negative? Answer in one word."}],
        "max_tokens": 8,
        "stop": ["\n"],
    }
    target = LoadTarget(
        "smollm2", [payload], [1], lambda text: read_answer(text, LABELS)[0],
        lambda sent, offsets, limit: stream_probe(base_url, {}, sent, offsets, limit, timeout_s=30),
    )  # fmt: skip
    capacity = {"slo": {"e2e_p99": "20s"}, "requests": 3, "warmup_requests": 1, "repeats": 1, "start_rate": 1.0}
    config = SpeedConfig(scenarios=["capacity"], capacity={**capacity, "min_rate": 0.5, "max_rate": 1.5})
    (model,) = run_capacity([target], config).models
    assert model.probes and all(p.errors == 0 and p.requests == 3 for p in model.probes)
    assert all(0 < p.ttft_p50_s < p.e2e_p50_s and p.tpot_p99_s > 0 for p in model.probes)  # streamed token by token
    assert sum(p.answered for p in model.probes) > 0  # the answers under load are read
    # a busy 2-core machine serves it below 0.5/s (measured: 1.2 s a request, saturated at 0.64/s): either way
    # the record says which, a goodput or the lowest rate's figures
    assert (model.goodput is None) == (model.lowest_probe is not None)


@pytest.mark.slow
def test_a_real_server_samples_each_repeat_with_its_own_seed_and_the_cache_keeps_repeats_apart(
    smollm2_folder, served, tmp_path, monkeypatch
):
    """``repeats: 3`` through ``transformers serve``: each repeat sends its own ``seed`` and is asked afresh (36
    requests, none answered from another repeat's cache), the three seeds give three different runs, and a second
    identical run asks nothing.

    ``transformers serve`` sets the temperature but samples only when the model's generation config does
    (``do_sample``; a GGUF converted to a folder does not): measured once with the same settings and no
    ``generation_config``, the three runs answered alike (the answer changed on 0 examples; ``docs/llm.md``). So the
    request carries a generation config that samples (``extra_body``), at temperature 0.3 so that most answers stay
    labels (a run of prose only would leave the run nothing to compare).
    """
    from headtohead.testing.data import make_text_rows, write_text_table

    monkeypatch.setenv("H2H_CACHE_DIR", str(tmp_path / "cache"))
    write_text_table(tmp_path / "dev.csv", make_text_rows(6, classes=tuple(LABELS), seed=3))  # 12 rows

    def answers(out) -> list[tuple[str, ...]]:
        return [
            tuple(json.loads(line)["answer"] for line in (out / "answers" / f"smollm2_r{k}.jsonl").open())
            for k in (1, 2, 3)
        ]

    model = {
        "name": "smollm2",
        "kind": "openai",
        "source": str(smollm2_folder),
        "max_concurrency": 2,
        "max_tokens": 8,
        "stop": ["\n"],
        "temperature": 0.3,
        "extra_body": {"generation_config": json.dumps({"do_sample": True})},
        "repeats": 3,
    }
    experiment = {
        "name": "smollm2-repeats",
        "data": {"path": str(tmp_path / "dev.csv")},
        "eval": {"device": "cpu"},
        "stats": {"n_resamples": 200},
    }
    server = served
    before = server.chat_requests()
    experiment["models"] = [{**model, "base_url": server.base_url}]
    sampled = headtohead.run(experiment, out_dir=tmp_path / "sampled").result
    assert server.chat_requests() - before == 36
    headtohead.run(experiment, out_dir=tmp_path / "again")
    assert server.chat_requests() - before == 36  # every repeat answered from its own cache entries
    assert len(set(answers(tmp_path / "sampled"))) == 3 and sampled.stats.repeats.models[0].changed > 0
    assert answers(tmp_path / "again") == answers(tmp_path / "sampled")
    assert [p.varies for p in sampled.model("smollm2").passes][1] == "run 2 of 3 (seed 104771)"
