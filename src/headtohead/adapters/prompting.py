"""LLM prompting, in one place for every LLM family: the conversation asked, and the answer read as a label.

See ``docs/llm.md``, "Answers become labels".
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import softmax

from headtohead.config.models.prompting import DEFAULT_MIN_LABEL_MASS, PromptSettings
from headtohead.data.base import Dataset
from headtohead.errors import ConfigError

__all__ = [
    "Prompter",
    "draw_few_shot",
    "completion_prompt",
    "parse_answer",
    "read_answer",
    "RULES",
    "normalise",
    "label_probabilities",
    "TokenChoice",
    "LabelMass",
    "Reading",
    "ARGMAX_DISAGREES",
    "DEFAULT_MIN_LABEL_MASS",
    "AnswerLog",
    "answers_as_outputs",
    "NO_PREDICTION",
]

NO_PREDICTION = -1  # results.predictions.NO_PREDICTION (adapters come before results)

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)
_EDGES = "\"'`*()[]{}<>«»“”‘’.,;:!?"


def normalise(text: str) -> str:
    """Case folded, whitespace collapsed, surrounding quotes/brackets/punctuation dropped."""
    return " ".join(text.split()).casefold().strip(_EDGES + " ")


def parse_answer(answer: str, labels: Sequence[str]) -> int | None:
    """The index of the label ``answer`` names, or ``None`` when it is unparseable (see :func:`read_answer`).

    Examples
    --------
    >>> labels = ["negative", "positive"]
    >>> [parse_answer(a, labels) for a in ["positive", " Negative.", "pos", "It is positive!", "no idea", ""]]
    [1, 0, 1, 1, None, None]
    >>> [parse_answer(a, labels) for a in ["positiveに通客", "The text is a product of the negative label."]]
    [1, None]
    """
    return read_answer(answer, labels)[0]


def read_answer(answer: str, labels: Sequence[str]) -> tuple[int | None, str]:
    """``(label index or None, the rule that read it)``: the first of :data:`RULES` that decides, else ``unparseable``."""
    if answer in labels:
        return list(labels).index(answer), "exact"
    text = normalise(_THINK.sub(" ", answer))
    if not text:
        return None, "unparseable"
    folded = [normalise(label) for label in labels]
    same = [k for k, label in enumerate(folded) if label == text]
    if len(same) == 1:
        return same[0], "case and whitespace"
    starts = [k for k, label in enumerate(folded) if label.startswith(text)]
    if len(starts) == 1:
        return starts[0], "unique prefix"
    first = _label_first(text, folded)
    if first is not None:
        return first, "label first"
    stated = _labels_stated(text, folded)
    return (stated[0], "label as the answer") if len(stated) == 1 else (None, "unparseable")


#: The rules that read an answer as a label, in the order they are tried (``docs/llm.md``, "Answers become labels").
RULES = ("exact", "case and whitespace", "unique prefix", "label first", "label as the answer")

#: What may stand right before a label given as the answer in prose: "is", "be", "was", "'s", ":", "=", "->".
_STATED = re.compile(r"(?:(?<!\w)(?:is|be|was|are)|'s|[:=]|->)\s*$")


def _script(char: str) -> str:
    """The script a character is written in (the first word of its Unicode name: LATIN, CJK, HIRAGANA …)."""
    return unicodedata.name(char, "?").split(" ")[0]


def _ends_there(text: str, end: int) -> bool:
    """The label ending at ``end`` ends a word: the text ends, or goes on with no letter or digit, or in another script."""
    if end >= len(text) or not text[end].isalnum():
        return True
    return end > 0 and _script(text[end]) != _script(text[end - 1])


def _label_first(text: str, folded: Sequence[str]) -> int | None:
    """The label ``text`` begins with, on a word or script boundary, when the rest names no other label."""
    for k in sorted(range(len(folded)), key=lambda i: -len(folded[i])):
        label = folded[k]
        if label and text.startswith(label) and _ends_there(text, len(label)):
            others = [j for j in _labels_named(text[len(label) :], folded) if folded[j] != label]
            return None if others else k
    return None


def _labels_stated(text: str, folded: Sequence[str]) -> list[int]:
    """The labels given as the answer in prose: right after "is", ":" … (``The sentiment is positive.``)."""
    return _labels_in(text, folded, stated=True)


def _labels_named(text: str, folded: Sequence[str]) -> list[int]:
    """The labels occurring in ``text`` as whole words."""
    return _labels_in(text, folded, stated=False)


def _labels_in(text: str, folded: Sequence[str], *, stated: bool) -> list[int]:
    """The labels in ``text`` as whole words (``stated``: only where an answer stands); longer labels first, their
    words taken out, so a label inside a longer one (``spam`` in ``not spam``) counts as the longer."""
    found: list[int] = []
    for k in sorted(range(len(folded)), key=lambda i: -len(folded[i])):
        if not folded[k]:
            continue
        pattern = re.compile(r"(?<!\w)" + re.escape(folded[k]) + r"(?!\w)")
        hits = [m for m in pattern.finditer(text) if not stated or _STATED.search(text[: m.start()])]
        if hits and folded[k] not in {folded[j] for j in found}:
            found.append(k)
        text = pattern.sub(" ", text)
    return found


@dataclass(frozen=True)
class TokenChoice:
    """One position of an answer: the token generated, its log-probability and the alternatives returned."""

    token: str
    logprob: float
    alternatives: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class LabelMass:
    """Class probabilities read from log-probabilities.

    Attributes
    ----------
    proba : ndarray (K,) or None
        Renormalised over the labels; ``None`` when no alternative named any label.
    outside : float
        Probability the answer's first tokens gave to no label (``1 - Σ`` before renormalising).
    """

    proba: np.ndarray | None
    outside: float


def _matching(text: str, folded: Sequence[str]) -> list[int]:
    """Labels ``text`` (normalised, left-stripped) could still become, or already is followed by more."""
    return [k for k, label in enumerate(folded) if label.startswith(text) or (text.startswith(label) and label)]


def label_probabilities(positions: Sequence[TokenChoice], labels: Sequence[str]) -> LabelMass:
    """Class probabilities from an answer's first tokens (see the module docstring).

    Examples
    --------
    >>> first = TokenChoice("pos", math.log(0.7), (("pos", math.log(0.7)), ("neg", math.log(0.2)), ("I", math.log(0.1))))
    >>> mass = label_probabilities([first], ["negative", "positive"])
    >>> [round(float(p), 3) for p in mass.proba], round(mass.outside, 3)
    ([0.222, 0.778], 0.1)
    """
    folded = [normalise(label) for label in labels]
    mass = np.zeros(len(labels), dtype=np.float64)
    prefix, path = "", 0.0
    for position in positions:
        for token, logprob in position.alternatives:
            text = (prefix + token).lstrip().casefold()
            if not text:
                continue
            matches = _matching(text, folded)
            if len(matches) == 1:
                mass[matches[0]] += math.exp(path + logprob)
        generated = (prefix + position.token).lstrip().casefold()
        if generated and len(_matching(generated, folded)) != 1 and _matching(generated, folded):
            prefix, path = prefix + position.token, path + position.logprob  # still between labels: read on
            continue
        if not generated:  # leading whitespace: the answer starts at the next token
            prefix, path = prefix + position.token, path + position.logprob
            continue
        break
    total = float(mass.sum())
    outside = max(0.0, 1.0 - total)
    return LabelMass(mass / total if total > 0 else None, outside)


class Prompter:
    """The conversation an LLM is asked for each example (see the module docstring).

    Parameters
    ----------
    settings : PromptSettings
        The model's prompting keys.
    label_names : sequence of str
        The dataset's labels, in its order (the template's ``{labels}``).
    """

    def __init__(self, settings: PromptSettings, label_names: Sequence[str]) -> None:
        self.settings, self.label_names = settings, [str(name) for name in label_names]
        #: The few-shot turns shown before every example (:func:`draw_few_shot`).
        self.few_shot: list[dict[str, str]] = []

    def prompt(self, example: Any) -> str:
        """The template filled in with the example (a text pair: one part per line) and the labels."""
        text = "\n".join(str(part) for part in example) if isinstance(example, (tuple, list)) else str(example)
        variant = self.settings.variant  # one of several prompts: its label order and separator
        labels = ", ".join(self.label_names) if variant is None else variant.labels_text(self.label_names)
        return self.settings.prompt.format(text=text, labels=labels)

    def messages(self, example: Any) -> list[dict[str, str]]:
        """The whole conversation for ``example``: system prompt, few-shot turns, its prompt."""
        system = [{"role": "system", "content": self.settings.system_prompt}] if self.settings.system_prompt else []
        return [*system, *self.few_shot, {"role": "user", "content": self.prompt(example)}]

    def completion_text(self, example: Any) -> str:
        """The conversation as plain text, up to ``Answer:`` (:func:`completion_prompt`): for a model with no chat
        template, or for scoring each label as the text that follows."""
        return completion_prompt(self.messages(example))


def completion_prompt(messages: Sequence[dict[str, str]]) -> str:
    """A conversation as plain text for a model without a chat template: turns separated by blank lines.

    Examples
    --------
    >>> completion_prompt([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"},
    ...                    {"role": "assistant", "content": "4"}, {"role": "user", "content": "3+3?"}])
    'Be brief.\\n\\n2+2?\\nAnswer: 4\\n\\n3+3?\\nAnswer:'
    """
    parts = {"system": "{}\n\n", "user": "{}\nAnswer:", "assistant": " {}\n\n"}
    return "".join(parts[m["role"]].format(m["content"]) for m in messages)


def draw_few_shot(
    prompter: Prompter, train: Dataset | None, seed: int, model: str, warn: Callable[[str], None]
) -> list[dict[str, str]]:
    """``few_shot`` examples of each class from the training data, as user/assistant turns, seeded.

    Raises
    ------
    ConfigError
        Examples are asked for but the experiment has no training data.
    """
    k = prompter.settings.few_shot
    if not k:
        return []
    if train is None or not len(train):
        raise ConfigError(
            f"model '{model}' asks for few_shot: {k} examples per class but the experiment has "
            f"no training data; set data.train (or data.split), or few_shot: 0"
        )
    rng = np.random.default_rng(seed)
    chosen: list[int] = []
    for name in prompter.label_names:
        if name not in train.label_names:
            continue
        pool = np.flatnonzero(train.labels == list(train.label_names).index(name))
        if len(pool) < k:
            warn(f"few_shot: {k} but data.train has {len(pool)} example(s) of class '{name}'; all are shown")
        chosen.extend(rng.choice(pool, size=min(k, len(pool)), replace=False).tolist())
    messages = []
    variant = prompter.settings.variant
    for i in (rng if variant is None else variant.few_shot_order(rng)).permutation(len(chosen)):
        index = chosen[int(i)]
        messages.append({"role": "user", "content": prompter.prompt(train.examples[index])})
        messages.append({"role": "assistant", "content": str(train.label_names[int(train.labels[index])])})
    return messages


class Reading:
    """One example's answer read as a label: what came back, the prediction (or ``None``), why, and the probabilities.

    ``exchange`` is what the transport got for the example (for ``openai``,
    :class:`~headtohead.adapters.chat_client.Exchange`): ``body`` (``content``, ``usage``) or
    ``None`` with ``error``, ``latency_s``, ``from_cache``. ``mass`` is what the log-probabilities
    said (``None``: none came); ``proba`` the class probabilities kept — only where the labels held at
    least ``min_label_mass`` of the answer's first-token probability and their argmax is the label
    read (``no_proba`` says why not: ``"label mass below …"``, ``"argmax is another label"``).
    """

    __slots__ = ("exchange", "pred", "mass", "rule", "proba", "no_proba")

    def __init__(
        self,
        exchange: Any,
        pred: int | None,
        mass: LabelMass | None,
        rule: str = "unparseable",
        min_label_mass: float = DEFAULT_MIN_LABEL_MASS,
    ) -> None:
        self.exchange, self.pred, self.mass, self.rule = exchange, pred, mass, rule
        self.proba, self.no_proba = _kept_probabilities(pred, mass, min_label_mass)

    @classmethod
    def of(
        cls,
        exchange: Any,
        labels: Sequence[str],
        positions: Sequence[TokenChoice] | None,
        min_label_mass: float = DEFAULT_MIN_LABEL_MASS,
    ) -> Reading:
        """An exchange as a label (``None``: no answer or an unparseable one) and its label probabilities."""
        if exchange.body is None:
            return cls(exchange, None, None, "no answer", min_label_mass)
        pred, rule = read_answer(exchange.body["content"], labels)
        mass = label_probabilities(positions, labels) if positions else None
        return cls(exchange, pred, mass, rule, min_label_mass)

    @classmethod
    def of_scores(cls, exchange: Any, loglik: Sequence[float]) -> Reading:
        """Each label's log-likelihood as the answer: the prediction is their argmax and the class probabilities
        their softmax, so the two always agree and nothing is parsed."""
        scores = np.asarray(loglik, dtype=np.float64)
        reading = cls(exchange, int(np.argmax(scores)), None, "label log-likelihood")
        reading.proba, reading.no_proba = softmax(scores), None
        return reading

    @property
    def unparseable(self) -> bool:
        """An answer came back but names no label (or several)."""
        return self.exchange.body is not None and self.pred is None

    @property
    def label_mass(self) -> float | None:
        """The share of the answer's first-token probability on the labels (``None``: no log-probabilities)."""
        return None if self.mass is None else 1.0 - self.mass.outside

    @property
    def disagrees(self) -> bool:
        """The log-probabilities favoured another label than the one read (flagged; no probabilities kept)."""
        return self.no_proba == ARGMAX_DISAGREES


#: Why an answer's class probabilities were dropped though it had some: they favour another label.
ARGMAX_DISAGREES = "argmax is another label"


def _kept_probabilities(
    pred: int | None, mass: LabelMass | None, min_label_mass: float
) -> tuple[np.ndarray | None, str | None]:
    """``(class probabilities, None)`` when they may be kept, else ``(None, why not)`` (see :class:`Reading`)."""
    if pred is None:
        return None, None
    if mass is None:
        return None, "no log-probabilities"
    if mass.proba is None:
        return None, "no label among the log-probabilities"
    if 1.0 - mass.outside < min_label_mass - 1e-9:  # the masses are sums of exp(logprob): rounding is not below
        return None, f"label mass below {min_label_mass:g}"
    if int(np.argmax(mass.proba)) != pred:
        return None, ARGMAX_DISAGREES
    return mass.proba, None


@dataclass(frozen=True)
class AnswerLog:
    """What an LLM family's answers were, for the run's records (transport-neutral)."""

    #: The model asked (``source``).
    model: str
    #: Dataset index → its answer, every example asked in this run.
    readings: Mapping[int, Reading]
    #: Each pass of requests (``requests``, ``retries``, ``wall_s``, ``statuses``).
    passes: Sequence[Any]
    #: Requests in flight at most.
    concurrency: int
    #: Some answered example has class probabilities kept (see :class:`Reading`).
    probabilities: bool
    #: Price per million tokens (``input_per_1m``, ``output_per_1m``).
    price: Any = None
    #: Where the model was asked, when over the network (without credentials or query: never a secret).
    base_url: str | None = None
    #: The least label mass an answer's probabilities were kept at (``None``: no log-probabilities asked).
    min_label_mass: float | None = None
    #: Each label scored by its log-likelihood (``answer: score``), not an answer read.
    scored: bool = False


def answers_as_outputs(
    readings: Sequence[Reading], n_labels: int, probabilities: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    """The predictions of ``readings`` (:data:`NO_PREDICTION` where none) and, if asked, their probabilities."""
    pred = np.array([NO_PREDICTION if r.pred is None else r.pred for r in readings], dtype=np.int64)
    if not probabilities:
        return pred, None
    proba = np.full((len(readings), n_labels), np.nan, dtype=np.float32)
    for row, reading in enumerate(readings):
        if reading.proba is not None:
            proba[row] = reading.proba
    return pred, proba
