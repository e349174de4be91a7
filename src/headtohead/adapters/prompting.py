"""LLM prompting, in one place for every LLM family: the conversation asked, and the answer read as a label.

See ``docs/llm.md``, "Answers become labels".
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.special import logsumexp, softmax

from headtohead.adapters.prompt_variants import pass_prompt
from headtohead.config.models.prompting import (
    DEFAULT_MIN_LABEL_MASS,
    PROMPT_FIELDS,
    LabelShown,
    PromptSettings,
    is_jinja,
    jinja_environment,
    prompt_fields,
)
from headtohead.data.base import Dataset
from headtohead.errors import ConfigError, listing

if TYPE_CHECKING:
    from headtohead.adapters.chat_client import RequestLog

__all__ = [
    "Prompter",
    "shown_labels",
    "check_prompt_data",
    "draw_few_shot",
    "completion_prompt",
    "plain_prompt",
    "parse_answer",
    "read_answer",
    "RULES",
    "normalise",
    "label_probabilities",
    "TokenChoice",
    "LabelMass",
    "Answer",
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
#: The same, then an opening quote (straight or curly): a label quoted as the answer (``The text is "negative."``).
_STATED_QUOTE = re.compile(r"(?:(?<!\w)(?:is|be|was|are)|'s|[:=]|->)\s*[\"'“‘«]$")
#: What closes a quoted label: a closing quote, after a period or "!" at most (the text's end: its quote was dropped).
_CLOSED_QUOTE = re.compile(r"[.!]?(?:[\"'”’»]|$)")


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
        hits = [m for m in pattern.finditer(text) if not stated or _stands_as_answer(text, m.start(), m.end())]
        if hits and folded[k] not in {folded[j] for j in found}:
            found.append(k)
        text = pattern.sub(" ", text)
    return found


def _stands_as_answer(text: str, start: int, end: int) -> bool:
    """The label at ``text[start:end]`` stands where an answer stands: right after "is", ":" …, or quoted whole there
    (``is "negative."``, ``: “neutral”``), never as a word of a longer quote (``is "negative and sad"``)."""
    before = text[:start]
    if _STATED.search(before):
        return True
    return bool(_STATED_QUOTE.search(before)) and _CLOSED_QUOTE.match(text, end) is not None


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
        The dataset's labels, in its order.

    Attributes
    ----------
    answers : list of str
        Each data label as the prompt shows it (``label_display``'s names, else the data's), in the
        data's order: the template's ``{labels}``, the few-shot answers, and what an answer is read
        against (index ``k`` is the data's label ``k``).
    descriptions : list of str or None
        What each label means (``label_display``'s descriptions), in the same order.
    """

    def __init__(self, settings: PromptSettings, label_names: Sequence[str], variant: Any = None) -> None:
        self.settings, self.label_names = settings, [str(name) for name in label_names]
        #: One of several prompts (:class:`~headtohead.adapters.prompt_variants.PromptVariant`): its labels' order and
        #: separator, its few-shot order; ``None``: the model's one prompt.
        self.variant = variant
        shown = shown_labels(settings, self.label_names)
        self.answers = [name for name, _ in shown]
        self.descriptions = [description for _, description in shown]
        #: The few-shot turns shown before every example (:func:`draw_few_shot`).
        self.few_shot: list[dict[str, str]] = []
        self._jinja = jinja_environment().from_string(settings.prompt) if is_jinja(settings.prompt) else None
        #: The example's own columns the template reads (a Jinja template's names that are no prompt field).
        self.columns = [f for f in prompt_fields(settings.prompt) if f not in (*PROMPT_FIELDS, "texts")]

    def prompt(self, example: Any, columns: Mapping[str, Any] | None = None) -> str:
        """The template filled in with the example (a text pair: one part per line), the labels and ``columns``
        (the example's other columns, by name: a Jinja template's)."""
        parts = [str(part) for part in example] if isinstance(example, (tuple, list)) else [str(example)]
        fields = {"text": "\n".join(parts), **self._label_fields()}
        if self._jinja is None:
            return self.settings.prompt.format(**fields)
        return self._jinja.render(**dict(columns or {}), **fields, texts=parts)

    def _label_fields(self) -> dict[str, str]:
        """``{labels}`` and ``{label_descriptions}`` as this prompt shows them (a variant: its order and separator)."""
        variant = self.variant
        order = list(range(len(self.answers))) if variant is None else variant.label_order(len(self.answers))
        separator = ", " if variant is None else variant.labels_separator
        return {
            "labels": separator.join(self.answers[k] for k in order),
            "label_descriptions": "\n".join(
                self.answers[k] if self.descriptions[k] is None else f"{self.answers[k]}: {self.descriptions[k]}"
                for k in order
            ),
        }

    def template_text(self) -> str:
        """The template as this prompt renders it, the example left as ``{text}``: its own wording, labels, order.

        A Jinja template is given as written (it reads the example's columns, which only an example has).

        Examples
        --------
        >>> from headtohead.config.models import model_settings
        >>> m = model_settings(name="llm", kind="openai", source="m", base_url="http://127.0.0.1:1/v1",
        ...                 prompt="Say {labels}: {text}")
        >>> Prompter(m, ["no", "yes"]).template_text()
        'Say no, yes: {text}'
        """
        if self._jinja is not None:
            return self.settings.prompt
        return self.settings.prompt.format(text="{text}", **self._label_fields())

    def example_columns(self, dataset: Dataset, index: int) -> dict[str, Any]:
        """The columns of example ``index`` the template reads (none for a ``{text}`` template)."""
        return {name: dataset.columns[name][index] for name in self.columns}

    def messages(self, example: Any, columns: Mapping[str, Any] | None = None) -> list[dict[str, str]]:
        """The whole conversation for ``example``: system prompt, few-shot turns, its prompt."""
        system = [{"role": "system", "content": self.settings.system_prompt}] if self.settings.system_prompt else []
        return [*system, *self.few_shot, {"role": "user", "content": self.prompt(example, columns)}]

    def completion_text(self, example: Any, columns: Mapping[str, Any] | None = None) -> str:
        """The conversation as plain text, up to ``Answer:`` (:func:`completion_prompt`): for a model with no chat
        template, or for scoring each label as the text that follows."""
        return completion_prompt(self.messages(example, columns))


def shown_labels(settings: PromptSettings, label_names: Sequence[str]) -> list[tuple[str, str | None]]:
    """Each data label as the prompt shows it, in the data's order: ``(display name, description or None)``.

    Raises
    ------
    ConfigError
        ``label_display`` names a label the data does not have, or twice, or gives two labels one name.
    """
    names = [str(name) for name in label_names]
    shown: list[tuple[str, str | None]] = [(name, None) for name in names]
    given: set[int] = set()
    for key, value in (settings.label_display or {}).items():
        k = names.index(str(key)) if str(key) in names else key if isinstance(key, int) else None
        if k is None or not 0 <= k < len(names) or k in given:
            why = "names it twice" if k in given else "names a label the data does not have"
            raise ConfigError(
                f"model '{settings.name}': label_display {why} ({key!r}); key it by the data's label names "
                f"({listing(names, quote=True)}) or their index (0 to {len(names) - 1}), each once"
            )
        given.add(k)
        item = LabelShown(name=value) if isinstance(value, str) else value
        shown[k] = (item.name or names[k], item.description)
    folded = [normalise(name) for name, _ in shown]
    twice = sorted({name for name in folded if folded.count(name) > 1})
    if twice:
        raise ConfigError(
            f"model '{settings.name}': label_display shows {listing(twice, quote=True)} for two labels; give "
            f"each label a name of its own (answers are read against them)"
        )
    return shown


def check_prompt_data(settings: PromptSettings, dataset: Dataset, train: Dataset | None) -> None:
    """The model's prompt fits the data: its labels are the data's and the columns its template reads are kept.

    Called when the experiment meets its data, before any model runs or any request is sent.

    Raises
    ------
    ConfigError
        One line: ``label_display`` against the data's labels, or the column missing, with the columns
        the data keeps, or columns on a split that keeps none (``few_shot``'s training data).
    """
    for index in range(len(settings.pass_specs()) or 1):  # each prompt of several
        _check_prompter(Prompter(pass_prompt(settings, index)[0], dataset.label_names), dataset, train)


def _check_prompter(prompter: Prompter, dataset: Dataset, train: Dataset | None) -> None:
    settings = prompter.settings
    kept = list(dataset.columns)
    missing = [name for name in prompter.columns if name not in dataset.columns]
    if missing:
        raise ConfigError(
            f"model '{settings.name}': its prompt template reads {listing(missing, quote=True)}, which the data "
            f"does not keep (it keeps {listing(kept, quote=True) if kept else 'no columns'}; a template may also "
            f"read {listing([*PROMPT_FIELDS, 'texts'], quote=True)}); list the column in data.slice_columns or "
            f"correct the template"
        )
    if prompter.columns and settings.few_shot and train is not None:
        raise ConfigError(
            f"model '{settings.name}': few_shot shows training examples, which keep no columns, and the prompt "
            f"template reads {listing(prompter.columns, quote=True)}; use few_shot: 0 or a template of "
            f"{{{{ text }}}} and {{{{ labels }}}}"
        )


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


def plain_prompt(messages: Sequence[dict[str, str]]) -> str:
    """A conversation as the plain text lm-evaluation-harness writes a task's context, nothing added.

    The system prompt (when there is one) and a blank line, as a task's ``description`` is
    written; each few-shot turn as its prompt, a space (lm-eval's ``target_delimiter``), its
    answer and a blank line (its ``fewshot_delimiter``); then the example's prompt as written, so
    the prompt itself says where the answer begins (``Review: {text}\\nSentiment:``).

    Examples
    --------
    >>> plain_prompt([{"role": "user", "content": "Review: dull\\nSentiment:"}, {"role": "assistant", "content": "negative"},
    ...               {"role": "user", "content": "Review: fun\\nSentiment:"}])
    'Review: dull\\nSentiment: negative\\n\\nReview: fun\\nSentiment:'
    >>> plain_prompt([{"role": "system", "content": "Sentiment of movie reviews."}, {"role": "user", "content": "x:"}])
    'Sentiment of movie reviews.\\n\\nx:'
    """
    parts = {"system": "{}\n\n", "user": "{}", "assistant": " {}\n\n"}
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
    variant = prompter.variant
    for i in (rng if variant is None else variant.few_shot_order(rng)).permutation(len(chosen)):
        index = chosen[int(i)]
        messages.append({"role": "user", "content": prompter.prompt(train.examples[index])})
        label = prompter.label_names.index(str(train.label_names[int(train.labels[index])]))
        messages.append({"role": "assistant", "content": prompter.answers[label]})
    return messages


@dataclass(frozen=True)
class Answer:
    """One example's answer, as every LLM family gets it: over HTTP or from a model run in this process.

    The transport's own details (HTTP statuses, retries, the endpoint's URL) stay with its family
    (:class:`~headtohead.adapters.chat_client.RequestLog`); this is what any of them can say.

    Attributes
    ----------
    text : str or None
        The raw answer, as the model gave it (``None``: no answer came; ``error`` says why).
    prompt : str, list of dict or None
        What the model was asked, rendered: the text it read (its chat template applied, or the plain
        completion text), or the messages sent to a chat endpoint (whose server applies its own template).
    tokens_in, tokens_out : int or None
        Tokens of the prompt and of the answer (``None``: unknown, never 0).
    latency_s : float or None
        The answer's own time (``None``: not timed per answer, as answers generated a batch at a time).
    from_cache : bool
        Read from the response cache, not asked in this run.
    error : str or None
        Why no answer came (``None``: one came).
    missing : bool
        ``error`` is the transport's (a timeout, a refused connection, 5xx after every retry): missing
        data, not a wrong answer. Otherwise a failure is the example's own (a request refused for it,
        NaN scores) and counts as a wrong answer.
    """

    text: str | None = None
    prompt: str | list[dict[str, str]] | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_s: float | None = None
    from_cache: bool = False
    error: str | None = None
    missing: bool = False


class Reading:
    """One example's answer read as a label: what came back, the prediction (or ``None``), why, and the probabilities.

    ``answer`` is what the family got for the example (:class:`Answer`). ``mass`` is what the
    log-probabilities said (``None``: none came); ``proba`` the class probabilities kept — only
    where the labels held at least ``min_label_mass`` of the answer's first-token probability and
    their argmax is the label read (``no_proba`` says why not: ``"label mass below …"``,
    ``"argmax is another label"``).
    """

    __slots__ = ("answer", "pred", "mass", "rule", "proba", "no_proba")

    def __init__(
        self,
        answer: Answer,
        pred: int | None,
        mass: LabelMass | None,
        rule: str = "unparseable",
        min_label_mass: float = DEFAULT_MIN_LABEL_MASS,
    ) -> None:
        self.answer, self.pred, self.mass, self.rule = answer, pred, mass, rule
        self.proba, self.no_proba = _kept_probabilities(pred, mass, min_label_mass)

    @classmethod
    def of(
        cls,
        answer: Answer,
        labels: Sequence[str],
        positions: Sequence[TokenChoice] | None,
        min_label_mass: float = DEFAULT_MIN_LABEL_MASS,
    ) -> Reading:
        """An answer as a label (``None``: no answer or an unparseable one) and its label probabilities."""
        if answer.text is None:
            return cls(answer, None, None, "no answer", min_label_mass)
        pred, rule = read_answer(answer.text, labels)
        mass = label_probabilities(positions, labels) if positions else None
        return cls(answer, pred, mass, rule, min_label_mass)

    @classmethod
    def of_scores(cls, answer: Answer, loglik: Sequence[float], *, likelihoods: bool = True) -> Reading:
        """Each label's log-likelihood as the answer: the prediction is their argmax and the class probabilities
        their softmax, so the two always agree and nothing is parsed.

        ``likelihoods``: the scores are the labels' log-probabilities after the prompt (not divided by
        their length), so ``Σ exp`` is the probability the model gave the labels at all: the label mass.
        """
        scores = np.asarray(loglik, dtype=np.float64)
        proba = softmax(scores)
        mass = LabelMass(proba, max(0.0, 1.0 - float(np.exp(logsumexp(scores))))) if likelihoods else None
        reading = cls(answer, int(np.argmax(scores)), mass, "label log-likelihood")
        reading.proba, reading.no_proba = proba, None
        return reading

    @property
    def unparseable(self) -> bool:
        """An answer came back but names no label (or several)."""
        return self.answer.text is not None and self.pred is None

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
    """What an LLM family's answers were, for the run's records: the same for every family.

    Exactly one of ``device`` (a model run in this process) and ``requests`` (one asked over HTTP) is set.
    """

    #: The model asked (``source``).
    model: str
    #: Dataset index → its answer, every example answered in this run.
    readings: Mapping[int, Reading]
    #: Some answered example has class probabilities kept (see :class:`Reading`).
    probabilities: bool
    #: The least label mass an answer's probabilities were kept at (``None``: no log-probabilities asked).
    min_label_mass: float | None = None
    #: Each label scored by its log-likelihood (``answer: score``), not an answer read.
    scored: bool = False
    #: Where a model run in this process ran (its device: ``cpu``, ``cuda:0``).
    device: str | None = None
    #: The HTTP family's own part: where it asked and what its requests did.
    requests: RequestLog | None = None


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
