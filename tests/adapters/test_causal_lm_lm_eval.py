"""kind: causal-lm with ``chat_template: false`` scores each label as lm-evaluation-harness's ``hf`` backend does.

The reference is lm_eval itself: ``HFLM.loglikelihood`` of ``(prompt, " " + label)``, loading the
same model folder with the same float32 weights, as ``lm_eval --model hf`` would. h2h's class
probabilities are the softmax of those log-likelihoods. The tiny Llama's tokenizer is given
random weights here (the built model attends uniformly, so positions would not matter).
"""

from __future__ import annotations

import csv
import itertools
import os
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("lm_eval")

from scipy.special import softmax  # noqa: E402

from headtohead.adapters.base import LoadContext  # noqa: E402
from headtohead.adapters.causal_lm import CausalLMAdapter  # noqa: E402
from headtohead.config.schema import model_settings  # noqa: E402
from headtohead.data.base import Dataset  # noqa: E402
from headtohead.engines.batching import plan_batches  # noqa: E402
from headtohead.engines.evaluate import evaluate_model  # noqa: E402
from headtohead.testing.tiny_llm import build_tiny_llama  # noqa: E402

SHARED_DATA = Path(os.environ.get("H2H_SHARED_DATA") or Path(__file__).resolve().parents[2].parent / "shared" / "data")
SST2_PROMPT = "Review: {text}\nSentiment:"
#: Used when ../shared/data is absent: SST-2-like sentences, both classes.
SENTENCES = [
    ("a gorgeous , witty , seductive movie .", 1),
    ("the story is dull and the acting is worse .", 0),
    ("one of the most moving films of the year", 1),
    ("a tedious , joyless exercise in boredom", 0),
    ("it 's a charming and often affecting journey .", 1),
    ("unflinchingly bleak and desperate", 0),
    ("a delightful comedy with real heart", 1),
    ("nothing here is funny , clever or new", 0),
]


@pytest.fixture(scope="module")
def random_llama(tmp_path_factory):
    """The tiny Llama's tokenizer and architecture with seeded random weights, saved as a folder."""
    from transformers import LlamaForCausalLM

    folder = build_tiny_llama(tmp_path_factory.mktemp("random-llama"))
    model = LlamaForCausalLM.from_pretrained(folder, dtype=torch.float32)
    torch.manual_seed(0)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.normal_(0.0, 0.5)
    model.save_pretrained(folder)
    return folder


def scorer(folder: Path, labels, train=None, **keys) -> CausalLMAdapter:
    entry = model_settings(name="lm", kind="causal-lm", source=str(folder), chat_template=False, **keys)
    return CausalLMAdapter.load(entry, LoadContext(label_names=tuple(labels), modality="text", train=train))


def lm_eval_logliks(folder: Path, contexts: list[str], labels) -> np.ndarray:
    """lm_eval's ``HFLM.loglikelihood`` of ``" " + label`` after each context, ``(len(contexts), K)``."""
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    lm = HFLM(pretrained=str(folder), dtype="float32", device="cpu", batch_size=1)
    requests = [
        Instance("loglikelihood", {}, (context, " " + label), i)
        for i, context in enumerate(contexts)
        for label in labels
    ]
    return np.array([score for score, _ in lm.loglikelihood(requests, disable_tqdm=True)]).reshape(len(contexts), -1)


def h2h_probabilities(adapter: CausalLMAdapter, texts, batch_size: int) -> np.ndarray:
    """The run's quality pass over a shuffled plan: class probabilities in dataset order."""
    data = Dataset(
        source="t",
        modality="text",
        examples=list(texts),
        labels=np.zeros(len(texts), dtype=np.int64),
        label_names=tuple(adapter.label_names),
    )
    plan = plan_batches(len(texts), batch_size, shuffle=True, seed=1)
    proba = np.empty((len(texts), len(adapter.label_names)))
    proba[plan.order] = evaluate_model(adapter, data, plan, prefetch=0).proba
    return proba


TEXTS = ["a wonderful film", "a dull and boring movie", "great", "it is what it is", "a charming , moving story"]


@pytest.mark.parametrize(
    ("prompt", "labels"),
    [
        (SST2_PROMPT, ("negative", "positive")),
        ("Answer: {text} -> ", ("negative", "positive")),  # trailing whitespace: lm-eval scores it with the label
        ("{text}\nAnswer:", ("rather negative", "quite positive", "neutral")),  # labels of several tokens
    ],
)
def test_scores_equal_lm_evals_loglikelihood_of_the_label_after_the_plain_prompt(random_llama, prompt, labels):
    train = Dataset(
        source="train",
        modality="text",
        examples=["a wonderful film", "dull", "boring", "great", "so-so"],
        labels=np.array([1, 0, 0, 1, 2 % len(labels)]),
        label_names=tuple(labels),
    )
    adapter = scorer(random_llama, labels, train=train, few_shot=1, prompt=prompt)
    contexts = [adapter.prompt_text(t) for t in TEXTS]
    assert all(c.endswith(prompt.format(text=t)) for c, t in zip(contexts, TEXTS, strict=True))
    expected = lm_eval_logliks(random_llama, contexts, labels)
    scores = adapter.forward(adapter.preprocess(TEXTS)).double().numpy()  # left-padded, of several lengths
    np.testing.assert_allclose(scores, expected, atol=1e-5)
    np.testing.assert_allclose(h2h_probabilities(adapter, TEXTS, 2), softmax(expected, axis=1), atol=1e-5)


def sst2_or_built_in(n: int) -> tuple[list[str], np.ndarray]:
    """The first ``n`` SST-2 dev sentences, or the built-in ones when ../shared/data is absent."""
    path = SHARED_DATA / "sst2" / "dev.tsv"
    if path.is_file():
        with open(path, newline="") as f:
            rows = list(itertools.islice(csv.DictReader(f, delimiter="\t"), n))
        return [r["text"].strip() for r in rows], np.array([int(r["label"]) for r in rows])
    return [t for t, _ in SENTENCES], np.array([y for _, y in SENTENCES])


@pytest.mark.slow
def test_smollm2_on_sst2_gives_lm_evals_probabilities(smollm2_folder):
    """SmolLM2-135M-Instruct de-quantised once to float32 (both load that folder), 20 SST-2 dev sentences.

    Measured: the largest difference from a softmax of lm_eval's log-likelihoods is 2e-6 (log-likelihoods:
    2e-5), and both are right on 18 of 20 (0.90; on the 8 built-in sentences used without ../shared/data, 8 of 8).
    """
    folder = smollm2_folder
    labels = ("negative", "positive")
    texts, gold = sst2_or_built_in(20)
    adapter = scorer(folder, labels, prompt=SST2_PROMPT)
    assert adapter.tokenizer.chat_template and adapter.settings.system_prompt is None  # refused, not absent
    contexts = [adapter.prompt_text(t) for t in texts]
    assert contexts == [SST2_PROMPT.format(text=t) for t in texts]
    expected = lm_eval_logliks(folder, contexts, labels)
    proba = h2h_probabilities(adapter, texts, 16)
    np.testing.assert_allclose(proba, softmax(expected, axis=1), atol=1e-4)
    scores = adapter.forward(adapter.preprocess(texts)).double().numpy()
    np.testing.assert_allclose(scores, expected, atol=1e-4)
    assert (proba.argmax(axis=1) == expected.argmax(axis=1)).all()
    assert float((proba.argmax(axis=1) == gold).mean()) >= 0.7  # measured 0.90 and 1.0 (see above)
