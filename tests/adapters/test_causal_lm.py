"""kind: causal-lm — a causal LM run in this process, answering by generation or by scoring each label.

A one-layer Llama of known behaviour is built on the fly (testing/tiny_llm.py): it answers
"positive" when the conversation holds a cue word and "~" (unparseable) otherwise. Scoring is
checked against a direct, unbatched computation of each label's log-likelihood with the model.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from headtohead.adapters.base import LoadContext  # noqa: E402
from headtohead.adapters.causal_lm import (  # noqa: E402
    AnswerGenerator,
    CausalLMAdapter,
    LabelScorer,
    completion_prompt,
    scoring_batch,
)
from headtohead.config.models.causal_lm import CausalLMSettings  # noqa: E402
from headtohead.config.models.prompting import DEFAULT_SYSTEM  # noqa: E402
from headtohead.config.schema import model_settings  # noqa: E402
from headtohead.data.base import Dataset  # noqa: E402
from headtohead.errors import ModelError  # noqa: E402
from headtohead.testing.tiny_llm import build_tiny_llama  # noqa: E402

LABELS = ("negative", "positive")
TEXTS = ["a wonderful film", "a dull and boring movie", "great", "it is what it is", "a charming , moving story"]


def model_entry(source: str | Path, **keys):
    """The model entry of a causal LM: ``kind: causal-lm``'s settings, built as an experiment file's entry is."""
    return model_settings(name="lm", kind="causal-lm", source=str(source), **keys)


def write_gguf(folder: Path, out: Path) -> Path:
    """The tiny Llama of ``folder`` as a float32 GGUF file (architecture, tokenizer, chat template, tensors)."""
    import json

    gguf = pytest.importorskip("gguf")
    from safetensors.numpy import load_file

    config = json.loads((folder / "config.json").read_text())
    tokenizer = json.loads((folder / "tokenizer.json").read_text())
    writer = gguf.GGUFWriter(str(out), "llama")
    writer.add_name("tiny-llama")
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(config["hidden_size"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_head_count(config["num_attention_heads"])
    writer.add_head_count_kv(config["num_key_value_heads"])
    writer.add_layer_norm_rms_eps(config["rms_norm_eps"])
    writer.add_rope_freq_base(config.get("rope_theta") or config.get("rope_parameters", {}).get("rope_theta", 1e4))
    vocab = sorted(tokenizer["model"]["vocab"].items(), key=lambda item: item[1])
    specials = {t["content"] for t in tokenizer["added_tokens"]}
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list([token for token, _ in vocab])
    writer.add_token_types([3 if token in specials else 1 for token, _ in vocab])  # 3: control
    writer.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in tokenizer["model"]["merges"]])
    ids = dict(vocab)
    writer.add_bos_token_id(ids["<s>"])
    writer.add_eos_token_id(ids["</s>"])
    writer.add_pad_token_id(ids["</s>"])
    writer.add_chat_template((folder / "chat_template.jinja").read_text())
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, config["num_hidden_layers"])
    for key, value in load_file(folder / "model.safetensors").items():
        writer.add_tensor(names.get_name(key, try_suffixes=(".weight",)), value.astype(np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


def load(source, labels=LABELS, train=None, **keys):
    context = LoadContext(label_names=tuple(labels), modality="text", train=train)
    return CausalLMAdapter.load(model_entry(source, **keys), context)


def dataset(texts, labels=None):
    labels = np.zeros(len(texts), dtype=np.int64) if labels is None else np.asarray(labels)
    return Dataset(source="test", modality="text", examples=list(texts), labels=labels, label_names=LABELS)


def direct_loglik(adapter, example, label: str) -> float:
    """log P(label | conversation), one sequence at a time, no padding: the reference."""
    prompt = adapter.prompt_text(example)
    kwargs = adapter.encode_kwargs()
    context = adapter.tokenizer(prompt, **kwargs)["input_ids"]
    ids = adapter.tokenizer(prompt + adapter.answer_prefix + label, **kwargs)["input_ids"]
    shared = next(
        (i for i, (a, b) in enumerate(zip(context, ids, strict=False)) if a != b), min(len(context), len(ids))
    )
    return last_tokens_loglik(adapter.module, ids, len(ids) - shared)


def last_tokens_loglik(model, ids, n: int) -> float:
    """The summed log-probability of the last ``n`` of ``ids`` given the ones before, in one unpadded pass."""
    with torch.no_grad():
        logp = torch.log_softmax(model(torch.tensor([ids])).logits[0].double(), dim=-1)
    return float(sum(logp[t - 1, ids[t]] for t in range(len(ids) - n, len(ids))))


def test_generate_reads_the_built_in_answers_and_an_unparseable_one_is_a_failure(tiny):
    adapter = load(tiny, answer="generate", max_tokens=4)
    assert isinstance(adapter, AnswerGenerator) and adapter.feeds == "ids"
    data = dataset(TEXTS)
    out = adapter.stored_outputs(data, np.arange(len(TEXTS)))
    # a cue word → "positive"; none → "~~~~": no prediction (a wrong answer)
    assert out.pred.tolist() == [1, -1, 1, -1, 1]
    assert out.proba is None  # label-only: no calibration from one-hot vectors
    assert adapter.answers[1].strip() == "~~~~" and "positive" in adapter.answers[0]
    # the speed pass times preprocess + forward: the answers' tokens, at most max_tokens
    tokens = adapter.forward(adapter.to_device(adapter.preprocess(TEXTS[:2])))
    assert tokens.shape[0] == 2 and tokens.shape[1] <= 4
    # and a fixed sequence length leaves the prompts whole (a cut prompt would lose where the answer begins)
    from headtohead.engines.speed_inputs import fix_sequence_length

    assert fix_sequence_length(adapter.preprocess(TEXTS[:2]), 8, pad_id=0)[1] is False
    # answered once: asked again, the same answers come from what was kept
    adapter.module = None
    assert adapter.stored_outputs(data, np.array([4, 1])).pred.tolist() == [1, -1]


def test_generate_is_the_same_alone_and_in_a_padded_batch(tiny):
    adapter = load(tiny, answer="generate", max_tokens=6)
    batched = adapter.generate(TEXTS)
    assert [adapter.generate([t])[0] for t in TEXTS] == batched


def test_score_gives_probabilities_whose_argmax_is_the_prediction(tiny):
    from scipy.special import softmax

    adapter = load(tiny)
    # its scores are read back by example (feeds "ids"), so each example keeps them as its answer
    assert isinstance(adapter, LabelScorer) and adapter.feeds == "ids" and adapter.output_kind == "logits"
    scores = adapter.forward(adapter.to_device(adapter.preprocess(TEXTS))).numpy()
    assert scores.shape == (len(TEXTS), 2) and np.isfinite(scores).all() and (scores < 0).all()
    proba = softmax(scores.astype(np.float64), axis=1)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    # the engine's softmax of these log-likelihoods is exactly the renormalised likelihoods
    likelihood = np.exp(scores.astype(np.float64))
    np.testing.assert_allclose(proba, likelihood / likelihood.sum(axis=1, keepdims=True), rtol=1e-9)


def test_score_equals_each_labels_log_likelihood_computed_alone_and_padding_changes_nothing(tiny):
    adapter = load(tiny)
    expected = np.array([[direct_loglik(adapter, t, label) for label in LABELS] for t in TEXTS])
    together = adapter.forward(adapter.preprocess(TEXTS)).numpy()  # rows of very different lengths, left-padded
    alone = np.concatenate([adapter.forward(adapter.preprocess([t])).numpy() for t in TEXTS])
    np.testing.assert_allclose(together, expected, atol=1e-5)
    np.testing.assert_allclose(alone, expected, atol=1e-5)


def test_labels_of_several_tokens_are_scored_over_all_their_tokens(tiny):
    labels = ("rather negative", "quite positive", "neutral")
    adapter = load(tiny, labels=labels)
    batch = adapter.preprocess(TEXTS[:3])
    assert (batch["target_lengths"] > 1).all()
    scores = adapter.forward(batch).numpy()
    expected = np.array([[direct_loglik(adapter, t, label) for label in labels] for t in TEXTS[:3]])
    np.testing.assert_allclose(scores, expected, atol=1e-5)


def test_length_norm_divides_each_total_by_the_labels_characters(tiny):
    labels = ("no", "positive")
    total = load(tiny, labels=labels)
    per_char = load(tiny, labels=labels, length_norm="chars")
    a = total.forward(total.preprocess(TEXTS[:2])).numpy()
    b = per_char.forward(per_char.preprocess(TEXTS[:2])).numpy()
    np.testing.assert_allclose(b, a / np.array([2.0, 8.0]), rtol=1e-6)


def test_a_token_merging_prompt_and_label_is_scored_as_the_labels(tiny):
    adapter = load(tiny)

    def encode(texts):
        return adapter.tokenizer(texts, add_special_tokens=False)["input_ids"]

    def real(batch, name, row):
        return batch[f"{name}_ids"][row][batch[f"{name}_mask"][row] == 1].tolist()

    # "Answer: " ends in a space token that "Answer: positive" merges into " positive"; "Answer: ~" does not
    space, merged = encode(["Answer: ", " positive"])
    assert space[-1] not in encode(["Answer: positive"])[0] and encode(["Answer: ~"])[0][:3] == space
    batch = scoring_batch(encode, ["Answer: "], ["positive", "~"], pad_id=0)
    # the context both labels share is "Answer:"; the space is the tail of "~" (conditioned on, not scored)
    assert real(batch, "context", 0) == encode(["Answer:"])[0]
    assert real(batch, "tail", 0) == merged and real(batch, "tail", 1) == encode([" ~"])[0]
    assert batch["target_lengths"].tolist() == [1, len(encode([" ~"])[0]) - 1]
    expected = [
        last_tokens_loglik(adapter.module, encode(["Answer: positive"])[0], 1),
        last_tokens_loglik(adapter.module, encode(["Answer: ~"])[0], len(encode(["~"])[0])),
    ]
    np.testing.assert_allclose(adapter.forward(batch).numpy()[0], expected, atol=1e-5)


def test_few_shot_turns_and_a_plain_completion_prompt(tiny, tmp_path):
    train = dataset(["a wonderful film", "dull", "boring", "great"], [1, 0, 0, 1])
    adapter = load(tiny, train=train, few_shot=1)
    text = adapter.prompt_text("it is what it is")
    # one example per class as a user/assistant pair, then the example's own turn
    assert text.count("<|assistant|>") == 3 and text.endswith("<|assistant|>")
    assert "<|assistant|>negative</s>" in text and "<|assistant|>positive</s>" in text
    assert text.startswith("<|system|>" + DEFAULT_SYSTEM)
    assert completion_prompt([{"role": "user", "content": "x"}]) == "x\nAnswer:"
    # a model without a chat template reads the same turns as plain text, and labels follow "Answer:" after a space
    adapter.tokenizer.chat_template = None
    plain = adapter.prompt_text("it is what it is")
    assert plain.startswith(DEFAULT_SYSTEM + "\n\n") and plain.endswith("Answer:") and plain.count("Answer:") == 3
    expected = [[direct_loglik(adapter, t, label) for label in LABELS] for t in TEXTS[:2]]
    np.testing.assert_allclose(adapter.forward(adapter.preprocess(TEXTS[:2])).numpy(), expected, atol=1e-5)
    with pytest.raises(Exception, match="no training data"):
        load(tiny, few_shot=1)


def lm_eval_loglik(adapter, example, label: str) -> float:
    """lm-evaluation-harness's log P(" " + label | prompt), one unpadded sequence: the prompt's trailing whitespace
    moved to the label, the tokens of prompt + label after as many as the prompt alone has scored."""
    prompt = adapter.prompt_text(example)
    context = adapter.tokenizer(prompt.rstrip())["input_ids"]
    whole = adapter.tokenizer(prompt + " " + label)["input_ids"]
    return last_tokens_loglik(adapter.module, whole, len(whole) - len(context))


def test_chat_template_false_scores_the_plain_prompt_as_lm_eval_writes_and_scores_it(tiny):
    train = dataset(["a wonderful film", "dull", "boring", "great"], [1, 0, 0, 1])
    adapter = load(tiny, train=train, few_shot=1, chat_template=False, prompt="Review: {text}\nSentiment:")
    assert adapter.tokenizer.chat_template and not adapter.chat and adapter.settings.system_prompt is None
    # lm-eval's context: each shot as its prompt, a space, its label and a blank line; then the prompt, nothing added
    text = adapter.prompt_text("it is what it is")
    shots = [turn["content"] for turn in adapter.prompter.few_shot]
    assert text == f"{shots[0]} {shots[1]}\n\n{shots[2]} {shots[3]}\n\nReview: it is what it is\nSentiment:"
    assert "<|" not in text and adapter.answer_prefix == " "
    expected = [[lm_eval_loglik(adapter, t, label) for label in LABELS] for t in TEXTS]
    np.testing.assert_allclose(adapter.forward(adapter.preprocess(TEXTS)).numpy(), expected, atol=1e-5)
    # a prompt ending in a space: the space is scored with the label (" " + " positive"), as lm-eval moves it
    spaced = load(tiny, chat_template=False, prompt="Answer: {text} ")
    batch = spaced.preprocess(TEXTS[:2])
    label_tokens = [len(spaced.tokenizer(" " + label)["input_ids"]) for label in LABELS]
    assert batch["target_lengths"].tolist() == [1 + n for n in label_tokens] * 2  # the space, then the label's
    expected = [[lm_eval_loglik(spaced, t, label) for label in LABELS] for t in TEXTS[:2]]
    np.testing.assert_allclose(spaced.forward(batch).numpy(), expected, atol=1e-5)
    # a system prompt given is kept, as plain text before a blank line; generating reads the plain prompt too
    told = load(tiny, chat_template=False, system_prompt="Movie reviews.", prompt="{text}\nSentiment:")
    assert told.prompt_text("x") == "Movie reviews.\n\nx\nSentiment:"
    generating = load(tiny, chat_template=False, answer="generate", max_tokens=4)
    assert generating.generate(["a wonderful film"]) == [" positive positive positive positive"]


def test_chat_template_is_true_or_false_in_one_line(tmp_path):
    from pydantic import ValidationError

    from headtohead.config.loading import load_experiment
    from headtohead.errors import ConfigError

    (tmp_path / "d.tsv").write_text("text\tlabel\na\t0\nb\t1\n")
    path = tmp_path / "e.yaml"
    path.write_text(
        "data: {path: d.tsv}\nmodels:\n  - {name: lm, kind: causal-lm, source: m.gguf,\n"
        "     chat_template: '{% for m in messages %}{{ m.content }}{% endfor %}'}\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_experiment(path)
    assert "\n" not in str(caught.value) and str(caught.value).startswith(f"{path}:4: models[0].chat_template: ")
    assert "chat_template is '{% for m in messages %}{{ m.content …; it is true or false" in str(caught.value)
    assert str(caught.value).endswith("write the text into prompt and set chat_template: false")
    with pytest.raises(ValidationError, match="chat_template is 'no'"):
        model_entry("m.gguf", chat_template="no")
    assert model_entry("m.gguf").system_prompt == DEFAULT_SYSTEM  # the chat default keeps its system prompt
    assert model_entry("m.gguf", chat_template=False, system_prompt="S").system_prompt == "S"


def test_sources_that_cannot_be_read_are_one_line_each(tiny, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelError, match="cannot load its tokenizer from headtohead-tests/no-such-model"):
        load("headtohead-tests/no-such-model")  # a hub id, never downloaded offline
    with pytest.raises(ModelError, match="not found"):
        load(tmp_path / "nowhere")
    with pytest.raises(ModelError, match="not a .gguf"):
        load(tiny / "config.json")
    with pytest.raises(ModelError, match="model_args.gguf_file is not allowed"):
        load(tiny, model_args={"gguf_file": "x.gguf"})
    no_weights = tmp_path / "bin-only"
    no_weights.mkdir()
    for f in tiny.iterdir():
        if f.suffix != ".safetensors":
            (no_weights / f.name).write_bytes(f.read_bytes())
    with pytest.raises(ModelError, match="safetensors"):
        load(no_weights)


@pytest.mark.parametrize("answer", ["score", "generate"])
def test_the_quality_pass_runs_both_answers_over_the_batch_plan(tiny, answer):
    from headtohead.engines.batching import plan_batches
    from headtohead.engines.evaluate import evaluate_model

    adapter = load(tiny, answer=answer, max_tokens=4)
    data = dataset(TEXTS, [1, 0, 1, 0, 1])
    evaluation = evaluate_model(adapter, data, plan_batches(len(TEXTS), 2, shuffle=True, seed=3), prefetch=0)
    order = np.argsort(plan_batches(len(TEXTS), 2, shuffle=True, seed=3).order)
    if answer == "generate":
        assert evaluation.proba is None and evaluation.pred[order].tolist() == [1, -1, 1, -1, 1]
        return
    direct = np.array([[direct_loglik(adapter, t, label) for label in LABELS] for t in TEXTS])
    expected = np.exp(direct) / np.exp(direct).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(evaluation.proba[order], expected, atol=1e-5)
    assert (evaluation.pred == evaluation.proba.argmax(axis=1)).all()


def test_a_gguf_file_loads_with_its_tokenizer_and_chat_template_and_scores_as_the_folder_does(tiny, tmp_path):
    gguf_path = write_gguf(tiny, tmp_path / "tiny.gguf")
    folder, single = load(tiny), load(gguf_path)
    assert single.prompt_text(TEXTS[0]) == folder.prompt_text(TEXTS[0])
    np.testing.assert_allclose(
        single.forward(single.preprocess(TEXTS)).numpy(), folder.forward(folder.preprocess(TEXTS)).numpy(), atol=1e-6
    )
    generating = load(gguf_path, answer="generate", max_tokens=4)
    assert generating.stored_outputs(dataset(TEXTS), np.arange(len(TEXTS))).pred.tolist() == [1, -1, 1, -1, 1]


def sst2(shared_data, split: str, n: int) -> Dataset:
    import csv
    import itertools

    with open(shared_data / "sst2" / f"{split}.tsv", newline="") as f:
        rows = list(itertools.islice(csv.DictReader(f, delimiter="\t"), n))
    return dataset([r["text"].strip() for r in rows], [int(r["label"]) for r in rows])


@pytest.mark.slow
@pytest.mark.shared_data
def test_a_real_small_instruct_model_answers_sst2_both_ways(shared_data, smollm2_folder):
    """SmolLM2-135M-Instruct on the first 12 SST-2 dev sentences, 2 examples per class shown: its Q4_1 GGUF as the
    session's float32 folder (the weights transformers reads from the GGUF, loaded once for every test that needs
    them; reading a GGUF is proven above on one the test writes).

    Measured (CPU, float32): score ranks the classes above chance (ROC AUC 0.92; 0.78 on 20) but leans
    to "positive" (accuracy 0.50: a 135M model's prior); generate, zero-shot, answers in prose
    most of the time (8 of 12 unparseable; 10 of 20). The figures are deterministic; the
    bounds leave room for another CPU's rounding.
    """
    from sklearn.metrics import roc_auc_score

    from headtohead.adapters.prompting import parse_answer
    from headtohead.engines.batching import plan_batches
    from headtohead.engines.evaluate import evaluate_model

    data, train = sst2(shared_data, "dev", 12), sst2(shared_data, "train", 2000)
    scorer = load(smollm2_folder, train=train, few_shot=2)
    assert scorer.prompt_text("x").endswith("<|im_start|>assistant\n")  # the GGUF's own chat template
    plan = plan_batches(len(data), 10)
    truth = data.labels[plan.order]
    scored = evaluate_model(scorer, data, plan, prefetch=0)
    np.testing.assert_allclose(scored.proba.sum(axis=1), 1.0, atol=1e-5)
    assert (scored.pred == scored.proba.argmax(axis=1)).all() and (scored.pred >= 0).all()
    assert roc_auc_score(truth, scored.proba[:, 1]) >= 0.70
    assert float((scored.pred == truth).mean()) >= 0.45
    # the same weights asked to generate, zero-shot (loaded once: a load takes seconds on a busy CPU)
    generator = AnswerGenerator(model_entry(smollm2_folder, answer="generate"), scorer.context)
    generator.tokenizer, generator.module, generator.label_names = scorer.tokenizer, scorer.module, scorer.label_names
    generated = evaluate_model(generator, data, plan, prefetch=0)
    assert generated.proba is None and sorted(generator.answers) == list(range(len(data)))
    unparseable = [parse_answer(generator.answers[int(i)], list(LABELS)) is None for i in plan.order]
    assert ((generated.pred == -1) == np.array(unparseable)).all()
    assert 2 <= sum(unparseable) <= 10  # prose answers happen, and so do labels


def test_the_settings_have_defaults_and_refuse_unknown_keys_and_values():
    from pydantic import ValidationError

    entry = model_entry("m.gguf")
    assert isinstance(entry, CausalLMSettings)
    assert (entry.answer, entry.length_norm, entry.max_tokens, entry.temperature) == ("score", "none", 16, 0.0)
    for wrong in ({"answer": "sample"}, {"max_tokens": 0}, {"length_norm": "tokens"}, {"temperature": 0.7}):
        with pytest.raises(ValidationError):
            model_entry("m.gguf", **wrong)


def test_a_run_of_both_answers_through_the_experiment_file(tiny, tmp_path):
    """kind: causal-lm is a plug-in: an experiment entry reaches the adapter, the records and the statistics."""
    import headtohead

    data = tmp_path / "data.csv"
    data.write_text("text,label\n" + "".join(f'"{t}",{LABELS[i % 2]}\n' for i, t in enumerate(TEXTS * 2)))
    run = headtohead.run(
        {
            "name": "causal",
            "data": {"path": str(data)},
            "models": [
                {"name": "scored", "kind": "causal-lm", "source": str(tiny)},
                {"name": "generated", "kind": "causal-lm", "source": str(tiny), "answer": "generate", "max_tokens": 4},
            ],
            "eval": {"batch_size": 4, "device": "cpu"},
            "stats": {"n_resamples": 200},
            "speed": {"enabled": False},
        },
        out_dir=tmp_path / "out",
    )
    scored, generated = run.result.model("scored"), run.result.model("generated")
    assert scored.kind == generated.kind == "causal-lm" and scored.outputs == generated.outputs == "computed"
    assert run.predictions["scored"].proba is not None and run.predictions["generated"].proba is None
    assert scored.quality.n_failed == 0  # a label's likelihood always names a label
    # the tiny Llama answers gibberish without a cue word: those answers are wrong, counted, not dropped
    pred = run.predictions["generated"].pred
    assert generated.quality.n_failed == int((pred == -1).sum()) > 0
    assert (tmp_path / "out" / "results.json").is_file()


def test_display_names_are_what_is_scored_and_read_and_map_back_to_the_datas_labels(tiny):
    codes, shown = ("neg", "pos"), {"neg": "negative", "pos": {"name": "positive", "description": "likes it"}}
    scorer = load(tiny, labels=codes, label_display=shown)
    by_name = load(tiny)  # the data's labels are the display names themselves
    assert "negative, positive" in scorer.prompt_text(TEXTS[0])
    np.testing.assert_allclose(
        scorer.forward(scorer.preprocess(TEXTS)).numpy(), by_name.forward(by_name.preprocess(TEXTS)).numpy()
    )
    generator = load(tiny, labels=codes, label_display=shown, answer="generate", max_tokens=4)
    data = Dataset(source="t", modality="text", examples=list(TEXTS), labels=np.zeros(5, np.int64), label_names=codes)
    assert generator.stored_outputs(data, np.arange(len(TEXTS))).pred.tolist() == [1, -1, 1, -1, 1]
