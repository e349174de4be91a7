"""Tiny models for tests, examples and docs, usable as ``kind: python`` factories.

See ``docs/architecture.md``, the section of this title.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

if TYPE_CHECKING:
    from torch import nn

__all__ = [
    "tiny_mlp",
    "tiny_cnn",
    "linear_probabilities",
    "LinearProbabilities",
    "keyword_classifier",
    "KeywordClassifier",
]


def tiny_mlp(n_features: int = 4, n_classes: int = 3, hidden: int = 16, seed: int = 0) -> nn.Sequential:
    """A two-layer perceptron returning logits, at a seeded random init.

    Parameters
    ----------
    n_features, n_classes, hidden : int
        Input width, number of outputs, hidden width.
    seed : int
        Seed of the initial weights (the global torch RNG is left untouched).

    Returns
    -------
    torch.nn.Sequential

    Examples
    --------
    >>> import torch
    >>> tiny_mlp(4, 3)(torch.zeros(2, 4)).shape
    torch.Size([2, 3])
    """
    import torch
    from torch import nn

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return nn.Sequential(nn.Linear(n_features, hidden), nn.ReLU(), nn.Linear(hidden, n_classes))


def tiny_cnn(n_classes: int = 10, channels: int = 8, seed: int = 0) -> nn.Sequential:
    """A two-convolution image classifier for ``3×H×W`` inputs of any size, returning logits.

    Examples
    --------
    >>> import torch
    >>> tiny_cnn(5)(torch.zeros(2, 3, 32, 32)).shape
    torch.Size([2, 5])
    """
    import torch
    from torch import nn

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return nn.Sequential(
            nn.Conv2d(3, channels, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(channels, 2 * channels, 3, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Linear(2 * channels, n_classes),
        )


class LinearProbabilities:
    """A fixed softmax-regression callable: feature rows in, class probabilities out.

    Parameters
    ----------
    weights : ndarray of shape (n_features, n_classes)
    bias : ndarray of shape (n_classes,)
    label_names : sequence of str, optional
        Exposed as :attr:`label_names`, which the ``python`` adapter reads.
    """

    def __init__(self, weights: np.ndarray, bias: np.ndarray, label_names: Sequence[str] | None = None) -> None:
        self.weights = np.asarray(weights, dtype=np.float64)
        self.bias = np.asarray(bias, dtype=np.float64)
        if label_names is not None:
            self.label_names = [str(n) for n in label_names]

    def __call__(self, examples: Sequence[Any]) -> np.ndarray:
        from scipy.special import softmax

        rows = np.asarray(examples, dtype=np.float64).reshape(len(examples), -1)
        return cast(np.ndarray, softmax(rows @ self.weights + self.bias, axis=1))


def linear_probabilities(
    n_features: int = 4, n_classes: int = 3, seed: int = 0, label_names: Sequence[str] | None = None
) -> LinearProbabilities:
    """A :class:`LinearProbabilities` with seeded random weights (no torch needed).

    Examples
    --------
    >>> model = linear_probabilities(4, 3)
    >>> model([[0.0, 1.0, 2.0, 3.0]]).sum().round(6)
    np.float64(1.0)
    """
    rng = np.random.default_rng(seed)
    return LinearProbabilities(rng.normal(size=(n_features, n_classes)), rng.normal(size=n_classes), label_names)


class KeywordClassifier:
    """Scores texts by counting keywords per class; returns smoothed probabilities.

    Parameters
    ----------
    keywords : mapping of str to sequence of str
        Class name → words that vote for it; the mapping's order is the output order and
        :attr:`label_names`.
    """

    def __init__(self, keywords: Mapping[str, Sequence[str]]) -> None:
        self.label_names = [str(k) for k in keywords]
        self.keywords = [{w.lower() for w in words} for words in keywords.values()]

    def __call__(self, examples: Sequence[Any]) -> np.ndarray:
        counts = np.ones((len(examples), len(self.keywords)))  # add-one smoothing: no zero probabilities
        for i, example in enumerate(examples):
            text = " ".join(example) if isinstance(example, tuple) else str(example)
            tokens = text.lower().split()
            for j, words in enumerate(self.keywords):
                counts[i, j] += sum(token.strip(".,!?;:") in words for token in tokens)
        return cast(np.ndarray, counts / counts.sum(axis=1, keepdims=True))


def keyword_classifier(keywords: Mapping[str, Sequence[str]]) -> KeywordClassifier:
    """A :class:`KeywordClassifier` for text (or text-pair) data.

    Examples
    --------
    >>> model = keyword_classifier({"neg": ["bad"], "pos": ["good"]})
    >>> model(["good good film"]).round(2).tolist()
    [[0.25, 0.75]]
    """
    return KeywordClassifier(keywords)
