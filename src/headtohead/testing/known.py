"""Fake text classifiers of known accuracy, for testing decisions that depend on a gap between models.

See ``docs/architecture.md``, the section of this title.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

__all__ = ["KnownAccuracy", "known_accuracy", "known_accuracy_rows", "hash_uniform"]


def hash_uniform(text: str, seed: int) -> float:
    """A number in [0, 1) fixed by ``text`` and ``seed`` (BLAKE2b), the same in every process.

    Examples
    --------
    >>> hash_uniform("a", 0) == hash_uniform("a", 0), hash_uniform("a", 0) == hash_uniform("a", 1)
    (True, False)
    """
    digest = hashlib.blake2b(f"{seed}\x00{text}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0**64


def known_accuracy_rows(
    n: int, *, classes: Sequence[str] = ("negative", "positive"), seed: int = 0
) -> list[dict[str, Any]]:
    """``n`` rows whose text names their label, labels drawn uniformly with ``seed``.

    Examples
    --------
    >>> known_accuracy_rows(2, seed=1)[0]["text"].split()[-1] in ("negative", "positive")
    True
    """
    labels = np.random.default_rng(seed).integers(0, len(classes), size=n)
    return [{"text": f"example {i} is {classes[k]}", "label": classes[k]} for i, k in enumerate(labels)]


class KnownAccuracy:
    """Right on an example when ``hash_uniform(text, seed) < accuracy``; otherwise picks the next class.

    Parameters
    ----------
    accuracy : float
        Share of examples it gets right (in expectation over examples; exactly reproducible).
    seed : int
        Which examples those are.
    label_names : sequence of str
        The classes, in output order; the last word of each text must be one of them.
    sleep_ms : float
        Each call sleeps this long first (a model of known speed; 0: none).
    """

    def __init__(self, accuracy: float, seed: int, label_names: Sequence[str], sleep_ms: float = 0.0) -> None:
        self.accuracy, self.seed, self.sleep_s = float(accuracy), int(seed), float(sleep_ms) / 1e3
        self.label_names = [str(n) for n in label_names]
        self.seen: list[str] = []

    def __call__(self, examples: Sequence[Any]) -> np.ndarray:
        if self.sleep_s:  # a model of known speed: every call takes at least this long
            time.sleep(self.sleep_s)
        k = len(self.label_names)
        proba = np.full((len(examples), k), 0.1 / max(k - 1, 1))
        for row, text in enumerate(map(str, examples)):
            self.seen.append(text)
            truth = self.label_names.index(text.split()[-1])
            guess = truth if hash_uniform(text, self.seed) < self.accuracy else (truth + 1) % k
            proba[row, guess] = 0.9
        return cast(np.ndarray, proba / proba.sum(axis=1, keepdims=True))


def known_accuracy(
    accuracy: float = 0.8,
    seed: int = 0,
    label_names: Sequence[str] = ("negative", "positive"),
    sleep_ms: float = 0.0,
) -> KnownAccuracy:
    """A :class:`KnownAccuracy` model (the ``python`` kind's factory); ``sleep_ms`` per call gives it a known speed."""
    return KnownAccuracy(accuracy, seed, label_names, sleep_ms)
