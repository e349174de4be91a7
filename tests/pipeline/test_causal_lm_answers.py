"""A causal LM run in this process keeps its answers as an endpoint's are kept (``answers/<model>.jsonl``).

A one-layer Llama of known behaviour (testing/tiny_llm.py) answers "positive" (as the token
` positive`, four times: it never ends its answer) when the conversation holds a cue word and
"~~~~" (unparseable) otherwise, so which answers cannot be read, their raw text, their tokens and
the reports' lists are known exactly. Scored, each example keeps its labels' probabilities and
their mass, checked against each label's log-likelihood computed alone with the model.
"""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from markupsafe import escape  # as the report escapes (jinja2's autoescape)

pytest.importorskip("torch")
pytest.importorskip("transformers")

import headtohead  # noqa: E402
from headtohead.adapters.prompting import read_answer  # noqa: E402
from headtohead.report.words.numbers import format_share  # noqa: E402
from headtohead.report.words.warnings import model_warnings  # noqa: E402
from headtohead.report.write import render_markdown  # noqa: E402
from headtohead.testing.tiny_llm import build_tiny_llama  # noqa: E402

LABELS = ("negative", "positive")
#: (text, gold label): the cue words (good, great, wonderful, charming …) make the tiny Llama answer "positive".
ROWS = [
    ("a wonderful film", "positive"),
    ("a dull and boring movie", "negative"),
    ("great acting throughout", "positive"),
    ("it is what it is", "positive"),  # no cue word: unparseable, and its gold label is positive
    ("a charming , moving story", "positive"),
    ("the plot makes no sense", "negative"),
    ("good , but far too long", "negative"),  # a cue word: read as positive, wrong
    ("nothing happens for two hours", "negative"),
]
MAX_TOKENS = 4


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


def _write(path, rows) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["text", "label"])
        writer.writerows(rows)


def _answers(out, model: str) -> list[dict]:
    return [json.loads(line) for line in (out / "answers" / f"{model}.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def run(tiny, tmp_path_factory):
    root = tmp_path_factory.mktemp("causal-answers")
    _write(root / "dev.csv", ROWS)
    experiment = {
        "name": "causal-answers",
        "data": {"path": str(root / "dev.csv")},
        "models": [
            {"name": "gen", "kind": "causal-lm", "source": str(tiny), "answer": "generate", "max_tokens": MAX_TOKENS},
            {"name": "scored", "kind": "causal-lm", "source": str(tiny)},
        ],
        "eval": {"batch_size": 3, "device": "cpu"},
        "stats": {"n_resamples": 200},
        "speed": {"enabled": False},
    }
    outcome = headtohead.run(experiment, out_dir=root / "out", report=True)
    return outcome, root / "out"


def _tokenizer(tiny):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(tiny))


def test_every_generated_answer_is_kept_with_its_prompt_tokens_and_label_read(run, tiny):
    outcome, out = run
    answers = _answers(out, "gen")
    assert [a["input"] for a in sorted(answers, key=lambda a: a["index"])] == [t for t, _ in ROWS]
    tokenizer = _tokenizer(tiny)
    for a in answers:
        text, gold = ROWS[a["index"]]
        assert a["gold"] == gold and text in a["prompt"] and a["prompt"].endswith("<|assistant|>")
        cued = "~" not in a["answer"]
        assert a["answer"].split() == (["positive"] * MAX_TOKENS if cued else ["~~~~"])  # the raw text, whole
        assert (a["label"], a["rule"]) == (("positive", "label first") if cued else (None, "unparseable"))
        # tokens counted by the model's own tokenizer: the chat template writes the special tokens itself
        assert a["tokens_in"] == len(tokenizer(a["prompt"], add_special_tokens=False)["input_ids"])
        assert a["tokens_out"] == MAX_TOKENS  # the tiny Llama never ends its answer: max_tokens each
        assert a["latency_s"] is None and a["from_cache"] is False and a["error"] is None
        assert a["probabilities"] is None and a["label_mass"] is None
    record = outcome.result.model("gen").answers
    unparseable = [
        i for i, (t, _) in enumerate(ROWS) if not any(w in t for w in ("wonderful", "great", "charm", "good"))
    ]
    assert record.n_unparseable == len(unparseable) == 4 and record.n_failed == 0 and record.endpoint is None
    assert [u.index for u in record.unparseable] == unparseable
    assert [(u.input, u.gold) for u in record.unparseable] == [ROWS[i] for i in unparseable]
    assert record.device == "cpu" and record.probabilities == "label only"
    assert record.prompt_tokens == sum(a["tokens_in"] for a in answers)
    assert record.completion_tokens == MAX_TOKENS * len(ROWS)
    model = outcome.result.model("gen")
    assert model.quality.n_failed == 4 and model.quality.accuracy == pytest.approx(3 / 8)
    # results.json counts them, keeps them with input and gold, and reads back; the answers stay in the jsonl
    saved = headtohead.load_result(out / "results.json").model("gen").answers
    assert saved.n_unparseable == 4 and saved.unparseable == record.unparseable and saved.answers == []
    raw = json.loads((out / "results.json").read_text())
    assert raw["schema_version"] == 9 and "endpoint" not in raw["models"][0]


def test_the_reports_list_a_local_models_unparseable_answers_with_input_and_gold_and_no_requests(run):
    _, out = run
    html = (out / "report.html").read_text()
    block = html[html.index("Answers of gen") : html.index("Answers of scored")]
    assert "run in this process on cpu" in block
    assert "4 unparseable answers: each counts as a wrong answer" in block
    listed = block[block.index("Unparseable answers of gen") :]
    for text in ("it is what it is", "the plot makes no sense", "nothing happens for two hours"):
        assert text in listed
    assert ">positive</td>" in listed and ">negative</td>" in listed  # the gold labels
    for word in ("request", "retries", "HTTP", "cost", "latency"):  # a local model sends none of these
        assert word not in block
    md, _ = render_markdown(headtohead.load_result(out / "results.json"))  # report.md, as h2h report writes it
    section = md[md.index("### Answers of gen") : md.index("### Answers of scored")]
    assert "4 unparseable answers: each counts as a wrong answer" in section
    assert "| 3 | it is what it is | positive | \\~\\~\\~\\~ |" in section  # Markdown's ~ escaped
    assert "answers/gen.jsonl" in section and "request" not in section and "cost" not in section


def test_the_warning_says_answers_could_not_be_read_not_nan_scores(run):
    outcome, _ = run
    warnings = model_warnings(outcome.result.model("gen"))
    said = next(w for w in warnings if "could not be read" in w)
    assert "4 of 8 answers could not be read as a label (see answers/gen.jsonl" in said
    assert not any("NaN" in w or "fp16" in w for w in warnings)
    # every label scored: nothing to say of its answers; this tiny model gives its labels little probability, said
    (mass,) = model_warnings(outcome.result.model("scored"))
    assert mass.startswith("model 'scored': its labels held a median ") and "does not make the model answer" in mass


def _loglik(model, tokenizer, prompt: str, label: str) -> float:
    """log P(label | prompt), one unpadded sequence, the label's tokens after the longest shared prefix."""
    import torch

    context = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    ids = tokenizer(prompt + label, add_special_tokens=False)["input_ids"]
    shared = next((i for i, (a, b) in enumerate(zip(context, ids, strict=False)) if a != b), len(context))
    shared = max(1, min(shared, len(ids) - 1))
    with torch.no_grad():
        logp = torch.log_softmax(model(torch.tensor([ids])).logits[0].double(), dim=-1)
    return float(sum(logp[t - 1, ids[t]] for t in range(shared, len(ids))))


def test_scored_answers_keep_each_labels_probability_and_their_mass(run, tiny):
    from transformers import AutoModelForCausalLM

    outcome, out = run
    tokenizer, model = _tokenizer(tiny), AutoModelForCausalLM.from_pretrained(str(tiny)).eval()
    answers = _answers(out, "scored")
    masses = []
    for a in answers:
        loglik = np.array([_loglik(model, tokenizer, a["prompt"], label) for label in LABELS])
        expected = np.exp(loglik) / np.exp(loglik).sum()
        assert a["rule"] == "label log-likelihood" and a["label"] == LABELS[int(np.argmax(loglik))]
        np.testing.assert_allclose([a["probabilities"][label] for label in LABELS], expected, rtol=1e-5)
        assert a["label_mass"] == pytest.approx(float(np.exp(loglik).sum()), rel=1e-5)
        assert a["answer"] == "; ".join(f"{label}: {v:.4f}" for label, v in zip(LABELS, loglik, strict=True))
        label_tokens = sum(
            len(tokenizer(a["prompt"] + label, add_special_tokens=False)["input_ids"])
            - len(tokenizer(a["prompt"], add_special_tokens=False)["input_ids"])
            for label in LABELS
        )
        assert a["tokens_in"] == len(tokenizer(a["prompt"], add_special_tokens=False)["input_ids"]) + label_tokens
        assert a["tokens_out"] == 0  # nothing generated: a known zero
        masses.append(a["label_mass"])
    record = outcome.result.model("scored").answers
    assert record.probabilities == "label log-likelihood" and record.n_with_probabilities == len(ROWS)
    assert record.outside_mass_mean == pytest.approx(1 - np.mean(masses))
    # the label mass per example, its median and how many examples fall below 90 % (kind: causal-lm has no key)
    assert record.label_mass_median == pytest.approx(float(np.median(masses)), rel=1e-9)
    below = sum(m < 0.9 for m in masses)
    assert (record.n_label_mass, record.n_label_mass_below, record.min_label_mass) == (len(ROWS), below, 0.9)
    predictions = headtohead.load_predictions(out / "predictions.npz")["scored"]
    order = headtohead.load_predictions(out / "predictions.npz").order
    by_index = {a["index"]: a for a in answers}
    np.testing.assert_allclose(
        predictions.proba, [[by_index[int(i)]["probabilities"][label] for label in LABELS] for i in order], atol=1e-6
    )
    html = (out / "report.html").read_text()
    block = html[html.index("Answers of scored") :]
    shown = f"the labels held a median {format_share(float(np.median(masses)))} of the probability after the prompt"
    assert shown in block and "completions with echo" not in block
    said = f"less than 90 % on {below} of {len(ROWS)} examples ({format_share(below / len(ROWS))})"
    assert said in block and "answers/scored.jsonl" in block


def test_nan_label_scores_are_failures_worded_as_nan(tiny, tmp_path, monkeypatch):
    """A scored model whose labels' scores come out NaN (an fp16 overflow): those examples fail, said as NaN."""
    import torch

    from headtohead.adapters.causal_lm import LabelScorer

    real = LabelScorer.forward

    def overflowing(self, inputs):
        scores = real(self, inputs)
        return torch.where(inputs["context_mask"].sum(-1, keepdim=True) > 88, torch.nan, scores)

    monkeypatch.setattr(LabelScorer, "forward", overflowing)
    _write(tmp_path / "dev.csv", ROWS)
    experiment = {
        "name": "nan",
        "data": {"path": str(tmp_path / "dev.csv")},
        "models": [{"name": "scored", "kind": "causal-lm", "source": str(tiny)}],
        "eval": {"batch_size": 4, "device": "cpu"},
        "stats": {"n_resamples": 200},
        "speed": {"enabled": False},
    }
    outcome = headtohead.run(experiment, out_dir=tmp_path / "out")
    answers = _answers(tmp_path / "out", "scored")
    failed = [a for a in answers if a["error"] is not None]
    assert sorted(a["index"] for a in failed) == [3, 5, 6, 7]  # the four longest prompts (89, 93, 91, 101 tokens)
    assert all(
        a["answer"] is None and a["label"] is None and a["error"] == "NaN or infinite label scores" for a in failed
    )
    record = outcome.result.model("scored")
    assert record.answers.n_failed == len(failed) and record.answers.n_unparseable == 0
    warning = next(w for w in model_warnings(record) if "NaN" in w)
    assert f"gave no prediction for {len(failed)} of 8 examples" in warning and "fp16 overflow" in warning
    assert "could not be read" not in warning


@pytest.mark.slow
def test_a_real_small_instruct_model_keeps_every_generated_answer_and_the_report_lists_the_unparseable(
    smollm2_folder, tmp_path
):
    """SmolLM2-135M-Instruct (its Q4_1 GGUF de-quantised to a float32 folder once per session; the GGUF read
    directly is ``tests/adapters/test_causal_lm.py``'s) generating, zero-shot, on twelve SST-2-like sentences:
    every answer's raw text is kept and read, and those it answered in prose are listed."""
    rows = [
        ("a gorgeous , witty , seductive movie .", "positive"),
        ("the film is strictly routine .", "negative"),
        ("an utterly charming and hilarious film that reminded me of the best of the disney comedies .", "positive"),
        ("it 's a cookie-cutter movie , a cut-and-paste job .", "negative"),
        ("a masterpiece four years in the making .", "positive"),
        ("the story is lacking any real emotional impact .", "negative"),
        ("one of the greatest family-oriented , fantasy-adventure movies ever .", "positive"),
        ("unfortunately the story and the actors are served with a hack script .", "negative"),
        ("it 's slow -- very , very slow .", "negative"),
        ("a sensitive , moving , brilliantly constructed work .", "positive"),
        ("the acting is amateurish and the dialogue is worse .", "negative"),
        ("a warm , funny , engaging film .", "positive"),
    ]
    _write(tmp_path / "dev.csv", rows)
    experiment = {
        "name": "smol",
        "data": {"path": str(tmp_path / "dev.csv")},
        "models": [{"name": "smol", "kind": "causal-lm", "source": str(smollm2_folder), "answer": "generate"}],
        "eval": {"batch_size": 6, "device": "cpu"},
        "stats": {"n_resamples": 200},
        "speed": {"enabled": False},
    }
    out = tmp_path / "out"
    outcome = headtohead.run(experiment, out_dir=out, report=True)
    answers = _answers(out, "smol")
    assert sorted(a["index"] for a in answers) == list(range(len(rows)))
    for a in answers:
        assert isinstance(a["answer"], str) and a["prompt"].endswith("<|im_start|>assistant\n")
        label, rule = read_answer(a["answer"], list(LABELS))
        assert (a["label"], a["rule"]) == (None if label is None else LABELS[label], rule)
        assert a["tokens_in"] > 0 and 0 < a["tokens_out"] <= 16
    unparseable = [a for a in answers if a["label"] is None]
    record = outcome.result.model("smol").answers
    assert record.n_unparseable == len(unparseable) > 0  # a 135M model answers in prose some of the time
    html, (md, _) = (out / "report.html").read_text(), render_markdown(headtohead.load_result(out / "results.json"))
    listed = html[html.index("Unparseable answers of smol") :]
    for a in unparseable:  # with input and gold label
        assert f'>{escape(a["input"])}</td><td class="text">{a["gold"]}</td>' in listed
    assert f"{len(unparseable)} unparseable answer" in html and f"{len(unparseable)} unparseable answer" in md
    assert md.count("\n| ", md.index("Unparseable answers of smol")) >= len(unparseable) + 1


def test_a_causal_lm_run_several_times_samples_each_run_with_its_own_seed(tiny, tmp_path):
    """``temperature`` above 0 with ``repeats:``: each run sampled, torch seeded per run, every run kept."""
    _write(tmp_path / "dev.csv", ROWS)
    entry = {"name": "gen", "kind": "causal-lm", "source": str(tiny), "answer": "generate", "max_tokens": MAX_TOKENS}
    experiment = {
        "name": "sampled",
        "data": {"path": str(tmp_path / "dev.csv")},
        "models": [{**entry, "temperature": 2.0, "repeats": 3}, {**entry, "name": "greedy"}],
        "eval": {"batch_size": 3, "device": "cpu"},
        "stats": {"n_resamples": 200},
        "speed": {"enabled": False},
    }
    first = headtohead.run(experiment, out_dir=tmp_path / "a").result
    headtohead.run(experiment, out_dir=tmp_path / "b")
    assert [p.key for p in first.model("gen").passes] == ["r1", "r2", "r3"]
    assert first.stats.repeats is not None and first.stats.repeats.models[0].n_repeats == 3
    texts = [
        [a["answer"] for a in _answers(out, f"gen_r{k}")] for out in (tmp_path / "a", tmp_path / "b") for k in (1, 2, 3)
    ]
    assert texts[:3] == texts[3:]  # the same seeds, the same samples
    assert len({tuple(t) for t in texts[:3]}) > 1  # three runs, sampled apart
