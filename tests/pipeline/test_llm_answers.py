"""A run with an LLM behind the scripted server: what is sent (stop, extra_body), how answers are read, which
examples keep class probabilities, and every answer's raw text in the run folder beside its input and gold."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest

import headtohead
from headtohead.testing.chat_server import Reply, ScriptedChatServer, last_prompt_text
from headtohead.testing.data import make_text_rows, write_text_table

LABELS = ("negative", "positive")
PRODUCT = "The text is a product of the negative label."


@pytest.fixture()
def rows(tmp_path, monkeypatch):
    monkeypatch.setenv("H2H_CACHE_DIR", str(tmp_path / "cache"))
    rows = make_text_rows(15, classes=LABELS, seed=11)
    for i, row in enumerate(rows):
        row["id"] = f"r{i:02d}"
    write_text_table(tmp_path / "dev.csv", rows)
    return rows


class BaseModel:
    """Answers by the example's position (sorted texts): the label then junk, prose, or a plain label, with logprobs.

    Position % 5: 0 the true label then ``に通客`` (the first token's alternatives 95 % on labels, favouring it);
    1 prose naming a label as any word (unparseable); 2 the true label, 70 % of the first token on no label;
    3 the true label while the alternatives favour the other one; 4 the true label, well covered.
    """

    def __init__(self, rows) -> None:
        self.truth = {r["text"]: r["label"] for r in rows}
        self.position = {t: i for i, t in enumerate(sorted(self.truth))}
        self.payloads: list[dict] = []
        self.lock = threading.Lock()

    def case(self, text: str) -> int:
        return self.position[text] % 5

    def __call__(self, number, payload) -> Reply:
        with self.lock:
            self.payloads.append(payload)
        prompt = last_prompt_text(payload)
        text = max((t for t in self.truth if t in prompt), key=len)
        label = self.truth[text]
        other = LABELS[1 - LABELS.index(label)]
        case = self.case(text)
        if case == 1:
            return Reply(text=PRODUCT)
        logprobs = {
            0: {label: 0.9, other: 0.05, "The": 0.05},
            2: {label: 0.2, other: 0.1, "The": 0.7},
            3: {other: 0.6, label: 0.38, "The": 0.02},
            4: {label: 0.97, other: 0.03},
        }[case]
        return Reply(text=label + ("に通客 …" if case == 0 else ""), logprobs=logprobs)


def test_answers_are_read_probabilities_kept_only_where_they_agree_and_every_answer_is_in_the_run_folder(
    tmp_path, rows
):
    script = BaseModel(rows)
    guided = {"guided_choice": list(LABELS)}
    with ScriptedChatServer(script) as server:
        experiment = {
            "name": "answers",
            "data": {"path": str(tmp_path / "dev.csv"), "id_column": "id"},
            "eval": {"device": "cpu"},
            "stats": {"n_resamples": 200},
            "models": [
                {
                    "name": "llm",
                    "kind": "openai",
                    "source": "base-7b",
                    "base_url": server.base_url,
                    "stop": ["\n"],
                    "extra_body": guided,
                }
            ],
        }
        out = tmp_path / "out"
        outcome = headtohead.run(experiment, out_dir=out, report=True)
    assert len(script.payloads) == 30
    assert all(p["stop"] == ["\n"] and p["guided_choice"] == list(LABELS) for p in script.payloads)

    cases = {r["text"]: script.case(r["text"]) for r in rows}
    counts = {c: sum(v == c for v in cases.values()) for c in range(5)}
    model = outcome.result.model("llm")
    # every answer but the prose is read, and read right: the label first counts, the product sentence does not
    assert model.quality.accuracy == pytest.approx(1 - counts[1] / 30)
    assert model.answers.n_unparseable == counts[1]
    # probabilities only where the labels hold >= 90 % and agree with the label read
    assert model.answers.n_with_probabilities == counts[0] + counts[4]
    assert model.answers.n_label_mass_low == counts[2] and model.answers.n_probabilities_disagree == counts[3]
    assert outcome.result.stats.model("llm").calibration_examples == counts[0] + counts[4]
    llm = headtohead.load_predictions(out / "predictions.npz")["llm"]
    has = ~np.isnan(llm.proba).all(axis=1)
    assert has.sum() == counts[0] + counts[4]
    assert (llm.proba[has].argmax(axis=1) == llm.pred[has]).all()  # no probabilities contradict the label
    assert np.isnan(llm.proba[llm.pred == -1]).all()

    # every answer's raw text, label, rule, input and gold label beside predictions.npz
    answers = [json.loads(line) for line in (out / "answers" / "llm.jsonl").read_text().splitlines()]
    assert len(answers) == 30 and {a["id"] for a in answers} == {r["id"] for r in rows}
    by_text = {a["input"]: a for a in answers}
    for row in rows:
        answer = by_text[row["text"]]
        assert answer["gold"] == row["label"]
        case = cases[row["text"]]
        if case == 1:
            assert (answer["answer"], answer["label"], answer["rule"]) == (PRODUCT, None, "unparseable")
        else:
            assert answer["label"] == row["label"] and answer["answer"].startswith(row["label"])
        if case == 0:
            assert answer["rule"] == "label first" and answer["label_mass"] == pytest.approx(0.95)
        if case == 3:
            assert answer["no_probabilities"] == "argmax is another label"

    html = (out / "report.html").read_text()
    share = f"{counts[0] + counts[4]} of {30 - counts[1]} answered examples"
    assert share in html  # the share of examples with probabilities is shown
    unparseable = next(r for r in rows if cases[r["text"]] == 1)
    row_html = html[html.index("Unparseable answers of llm") :]
    assert unparseable["text"] in row_html and PRODUCT in row_html
    assert ">gold label</th>" in row_html


def test_an_answer_file_is_named_safely(tmp_path):
    from headtohead.results.files import answers_file

    assert answers_file("gpt-4o/mini 2024") == "answers/gpt-4o_mini_2024.jsonl"
    assert Path(answers_file("..")).name == "_.jsonl"


def test_answer_score_gives_each_label_its_log_likelihood_with_no_parsing(tmp_path, rows):
    """``answer: score``: one …/completions request per example and label, the prompt echoed with its
    log-probabilities; the scripted server gives the label word of example i the probabilities below."""
    chance = {r["text"]: (0.2 + 0.6 * (i % 4) / 3) for i, r in enumerate(rows)}  # P(positive) before the softmax
    seen: list[dict] = []
    lock = threading.Lock()

    def script(number, payload):
        with lock:
            seen.append(payload)
        text = max((t for t in chance if t in payload["prompt"]), key=len)
        return Reply(text=".", logprobs={"positive": chance[text], "negative": 0.3})

    with ScriptedChatServer(script) as server:
        entry = {"name": "llm", "kind": "openai", "source": "base-7b", "base_url": server.base_url, "answer": "score"}
        experiment = {
            "name": "scored",
            "data": {"path": str(tmp_path / "dev.csv"), "id_column": "id"},
            "eval": {"device": "cpu"},
            "stats": {"n_resamples": 200},
            "models": [entry],
        }
        outcome = headtohead.run(experiment, out_dir=tmp_path / "out")
    assert len(seen) == 60 and all(p["echo"] is True and p["logprobs"] == 1 and "messages" not in p for p in seen)
    assert {p["prompt"].rsplit("Answer:", 1)[1] for p in seen} == {" negative", " positive"}
    model = outcome.result.model("llm")
    assert model.answers.probabilities == "label log-likelihood" and model.answers.n_unparseable == 0
    assert model.answers.n_with_probabilities == 30
    predictions = headtohead.load_predictions(tmp_path / "out" / "predictions.npz")
    llm, order = predictions["llm"], predictions.order
    texts = [r["text"] for r in rows]
    expected = np.array([chance[texts[i]] / (chance[texts[i]] + 0.3) for i in order])
    np.testing.assert_allclose(llm.proba[:, 1], expected, rtol=1e-6)
    assert (llm.pred == llm.proba.argmax(axis=1)).all()
    answers = [json.loads(line) for line in (tmp_path / "out" / "answers" / "llm.jsonl").read_text().splitlines()]
    assert all(a["rule"] == "label log-likelihood" and a["answer"].startswith("negative: ") for a in answers)


def test_api_completions_asks_a_base_model_with_a_plain_text_prompt(tmp_path, rows):
    truth = {r["text"]: r["label"] for r in rows}
    seen: list[dict] = []
    lock = threading.Lock()

    def script(number, payload):
        with lock:
            seen.append(payload)
        text = max((t for t in truth if t in payload["prompt"]), key=len)
        return Reply(text=f" {truth[text]}", logprobs={truth[text]: 0.96})

    with ScriptedChatServer(script) as server:
        entry = {"name": "base", "kind": "openai", "source": "base-7b", "base_url": server.base_url}
        experiment = {
            "name": "completions",
            "data": {"path": str(tmp_path / "dev.csv")},
            "eval": {"device": "cpu"},
            "stats": {"n_resamples": 200},
            "models": [entry | {"api": "completions", "stop": ["\n"]}],
        }
        model = headtohead.run(experiment, out_dir=tmp_path / "out").result.model("base")
    assert len(seen) == 30 and all("messages" not in p and p["prompt"].endswith("\nAnswer:") for p in seen)
    assert all(p["logprobs"] == 20 and "top_logprobs" not in p and p["stop"] == ["\n"] for p in seen)
    assert model.quality.accuracy == 1.0 and model.answers.n_with_probabilities == 30  # label mass 0.96


def test_answer_score_says_how_little_of_the_probability_the_labels_held_per_example_and_at_the_median(tmp_path, rows):
    """A base model whose labels hold little of the probability after the prompt: the scripted server gives the
    label words of example i (by sorted text) P(negative), P(positive) of (0.02, 0.03), (0.01, 0.03) or
    (0.5, 0.45) — label masses 5 %, 4 % and 95 %, ten examples each: a median of 5 %, 20 of 30 below 90 %."""
    from headtohead.report.words.warnings import model_warnings

    chances = [(0.02, 0.03), (0.01, 0.03), (0.5, 0.45)]
    scripted = {t: chances[i % 3] for i, t in enumerate(sorted(r["text"] for r in rows))}

    def script(number, payload):
        negative, positive = scripted[max((t for t in scripted if t in payload["prompt"]), key=len)]
        return Reply(text=".", logprobs={"negative": negative, "positive": positive})

    with ScriptedChatServer(script) as server:
        entry = {"name": "base", "kind": "openai", "source": "base-7b", "base_url": server.base_url, "answer": "score"}
        experiment = {
            "name": "mass",
            "data": {"path": str(tmp_path / "dev.csv"), "id_column": "id"},
            "eval": {"device": "cpu"},
            "stats": {"n_resamples": 200},
            "models": [entry],
        }
        outcome = headtohead.run(experiment, out_dir=tmp_path / "out", report=True)
    answers = [json.loads(line) for line in (tmp_path / "out" / "answers" / "base.jsonl").read_text().splitlines()]
    for a in answers:  # each example's label mass: P(negative) + P(positive) after the prompt
        assert a["label_mass"] == pytest.approx(sum(scripted[a["input"]]), rel=1e-9)
    record = outcome.result.model("base").answers
    assert record.label_mass_median == pytest.approx(0.05, rel=1e-9)
    assert (record.n_label_mass, record.n_label_mass_below, record.min_label_mass) == (30, 20, 0.9)
    assert record.n_with_probabilities == 30  # scored labels keep their softmax, whatever their mass
    saved = json.loads((tmp_path / "out" / "results.json").read_text())["models"][0]["answers"]
    assert saved["label_mass_median"] == pytest.approx(0.05) and saved["n_label_mass_below"] == 20
    html = (tmp_path / "out" / "report.html").read_text()
    block = html[html.index("Answers of base") :]
    assert "the labels held a median 5.0 % of the probability after the prompt" in block
    assert "less than 90 % on 20 of 30 examples (66.7 %): the labels hold little of the probability" in block
    assert "the prompt does not make the model answer with a label" in block
    warning = next(w for w in model_warnings(outcome.result.model("base")) if "median" in w)
    assert warning.startswith("model 'base': its labels held a median 5.0 % of the probability after the prompt")
    assert "less than 90 % on 20 of 30 examples" in warning and "answers/base.jsonl" in warning
