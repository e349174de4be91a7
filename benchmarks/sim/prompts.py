"""A model asked with several prompts against a model with one pass, on examples of shared difficulty.

Example ``i`` has a difficulty ``u_i ~ N(0, 1)``; prompt ``p`` of model A is right on it with
probability ``base + gap + offset_p + 0.15·tanh(u_i)`` and model B with ``base + 0.15·tanh(u_i)``,
independently given ``u``. As ``E tanh(u) = 0``, prompt ``p``'s accuracy is exactly
``base + gap + offset_p`` and B's ``base``: the true pooled gap is ``gap + mean(offsets)``. The
examples' shared difficulty makes the prompts' (and the models') answers correlate, as on real data.
"""

from __future__ import annotations

import numpy as np

__all__ = ["prompt_correctness", "prompted_predictions", "FIXED_OFFSETS"]

#: Five prompts 4 pp apart, centred: their mean is the model's accuracy.
FIXED_OFFSETS = (-0.08, -0.04, 0.0, 0.04, 0.08)
_SPREAD = 0.15


def prompt_correctness(
    rng: np.random.Generator, n: int, offsets: np.ndarray, *, base: float = 0.75, gap: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Per prompt of A, which of ``n`` examples it got right (``(P, n)``), and B's (``(1, n)``)."""
    shared = _SPREAD * np.tanh(rng.normal(size=n))
    right_a = np.clip(base + gap + np.asarray(offsets)[:, None] + shared[None, :], 0.0, 1.0)
    a = rng.random((len(offsets), n)) < right_a
    b = rng.random((1, n)) < np.clip(base + shared, 0.0, 1.0)[None, :]
    return a, b


def prompted_predictions(a: np.ndarray, b: np.ndarray):  # -> Predictions
    """The correctness as a run's predictions (binary labels, all true class 1): ``llm`` with a pass per prompt of A
    (``ModelPredictions.passes``), ``encoder`` measured once."""
    from headtohead.results.predictions import Predictions

    n = a.shape[1]
    predictions = Predictions(np.arange(n), np.ones(n, dtype=np.int64), ("no", "yes"))
    for k, row in enumerate(a, start=1):
        predictions.add_pass("llm", f"p{k}", "prompt", row.astype(np.int64), None)
    predictions.add("encoder", b[0].astype(np.int64), None)
    return predictions
