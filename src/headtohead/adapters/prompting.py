"""An LLM's answer read as one of the dataset's labels, and its log-probabilities as class probabilities.

:func:`parse_answer` tries, in order (the first rule that decides wins):

1. **exact** — the answer is a label, character for character;
2. **case and whitespace** — equal after folding case and collapsing whitespace, with
   surrounding quotes, brackets and final punctuation dropped (``" Positive."``);
3. **unique prefix** — the answer is the beginning of exactly one label (``"pos"``);
4. **named alone** — exactly one label occurs in the answer as whole words (``"The sentiment
   is positive."``); a label inside a longer one (``spam`` in ``not spam``) counts as the longer.

Anything else — prose naming no label or several, an empty answer — is *unparseable*:
:func:`parse_answer` returns ``None`` and the example has no prediction (a wrong answer in
every statistic). A reasoning model's ``<think>…</think>`` block is dropped first.

:func:`label_probabilities` turns the ``logprobs`` of an answer's first tokens into one
probability per label: each alternative token at the first position that begins exactly one
label (or is a label followed by more text) adds its probability to that label; while the
generated text so far begins several labels (``ne`` for ``negative``/``neutral``) the next
position's alternatives, conditioned on it, are read too. The masses are renormalised over
the labels; what was not attributed to any label is returned beside them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["parse_answer", "normalise", "label_probabilities", "TokenChoice", "LabelMass"]

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)
_EDGES = "\"'`*()[]{}<>«»“”‘’.,;:!?"


def normalise(text: str) -> str:
    """Case folded, whitespace collapsed, surrounding quotes/brackets/punctuation dropped."""
    return " ".join(text.split()).casefold().strip(_EDGES + " ")


def parse_answer(answer: str, labels: Sequence[str]) -> int | None:
    """The index of the label ``answer`` names, or ``None`` when it is unparseable (see the module docstring).

    Examples
    --------
    >>> labels = ["negative", "positive"]
    >>> [parse_answer(a, labels) for a in ["positive", " Negative.", "pos", "It is positive!", "no idea", ""]]
    [1, 0, 1, 1, None, None]
    """
    if answer in labels:
        return list(labels).index(answer)
    text = normalise(_THINK.sub(" ", answer))
    if not text:
        return None
    folded = [normalise(label) for label in labels]
    same = [k for k, label in enumerate(folded) if label == text]
    if len(same) == 1:
        return same[0]
    starts = [k for k, label in enumerate(folded) if label.startswith(text)]
    if len(starts) == 1:
        return starts[0]
    named = _labels_named(text, folded)
    return named[0] if len(named) == 1 else None


def _labels_named(text: str, folded: Sequence[str]) -> list[int]:
    """The labels occurring in ``text`` as whole words; longer labels first, their words taken out."""
    found: list[int] = []
    for k in sorted(range(len(folded)), key=lambda i: -len(folded[i])):
        if not folded[k]:
            continue
        pattern = re.compile(r"(?<!\w)" + re.escape(folded[k]) + r"(?!\w)")
        if pattern.search(text):
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
    >>> [round(p, 3) for p in mass.proba], round(mass.outside, 3)
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
