"""The Bayesian signed-rank test (Benavoli, Corani, Mangili, Zaffalon & Ruggeri, ICML 2014; Benavoli et al., JMLR 18, 2017).

See ``docs/statistics.md``, the section of this title.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

__all__ = ["BayesSignedRank", "bayesian_signed_rank"]

#: Draws per block: memory stays at ``_BLOCK × (N + 1)`` floats whatever the number of draws.
_BLOCK = 8192


@dataclass(frozen=True)
class BayesSignedRank:
    """The three posterior probabilities (they sum to 1) and their Monte-Carlo standard error."""

    p_a_better: float
    p_equivalent: float
    p_b_better: float
    n_samples: int
    mc_se: float


def _step(values: np.ndarray, threshold: float) -> np.ndarray:
    return cast(np.ndarray, (values > threshold).astype(np.float64) + 0.5 * (values == threshold))


def bayesian_signed_rank(
    a: np.ndarray, b: np.ndarray, *, rope: float, prior: float = 0.5, n_samples: int = 50_000, seed: int = 0
) -> BayesSignedRank:
    """Posterior probabilities that ``a`` is practically better, equivalent, or ``b`` is better.

    Parameters
    ----------
    a, b : array of float
        The two models' scores on the same data sets, oriented so that higher is better.
    rope : float
        Half-width of the region of practical equivalence, in the scores' units (0: none; then
        ``p_equivalent`` is 0).
    prior : float
        Strength of the Dirichlet process prior, placed at a difference of 0 (baycomp's default 0.5).
    n_samples : int
        Posterior draws.
    seed : int
        Seed of the draws.

    Returns
    -------
    BayesSignedRank

    Examples
    --------
    >>> r = bayesian_signed_rank(np.array([.82, .91, .77, .88]), np.array([.80, .90, .75, .87]), rope=0.005)
    >>> r.p_a_better > r.p_b_better
    True
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError(f"need two equally long, non-empty score vectors, got {a.shape} and {b.shape}")
    if rope < 0 or prior < 0 or n_samples < 1:
        raise ValueError(f"rope and prior must be ≥ 0 and n_samples ≥ 1 (got {rope}, {prior}, {n_samples})")
    z = np.concatenate([[0.0], a - b])
    sums = z[:, None] + z[None, :]
    above, below = _step(sums, 2 * rope), _step(-sums, 2 * rope)
    concentration = np.ones(z.size)
    concentration[0] = prior
    rng = np.random.default_rng(seed)
    wins = np.zeros(3, dtype=np.int64)  # a better, equivalent, b better
    for start in range(0, n_samples, _BLOCK):
        weights = rng.dirichlet(concentration, size=min(_BLOCK, n_samples - start))
        theta_a = np.einsum("si,ij,sj->s", weights, above, weights)
        theta_b = np.einsum("si,ij,sj->s", weights, below, weights)
        theta = np.stack([theta_a, 1.0 - theta_a - theta_b, theta_b], axis=1)
        wins += np.bincount(np.argmax(theta, axis=1), minlength=3)
    p = wins / n_samples
    return BayesSignedRank(
        p_a_better=float(p[0]),
        p_equivalent=float(p[1]),
        p_b_better=float(p[2]),
        n_samples=int(n_samples),
        mc_se=float(np.sqrt(np.max(p * (1 - p)) / n_samples)),
    )
