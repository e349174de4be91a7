"""The Bayesian signed-rank test (Benavoli, Corani, Mangili, Zaffalon & Ruggeri, ICML 2014; Benavoli et al., JMLR 18, 2017).

See ``docs/statistics.md``, the section of this title.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
from scipy import stats

__all__ = ["BayesSignedRank", "bayesian_signed_rank", "unanimous_posterior", "min_datasets_for_verdict"]

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


#: ``w0 < 1/√2``: where the prior's pseudo-observation at 0, of weight ``w0``, leaves "better" the largest posterior
#: region when every pairwise mean of the differences lies beyond the ROPE (``θ_better = 1 − w0²``).
_SQRT_HALF = float(np.sqrt(0.5))


def unanimous_posterior(n_datasets: int, *, prior: float = 0.5) -> float:
    """The most extreme P(better) the test can give on ``n_datasets`` data sets: every gap beyond twice the ROPE.

    Then every pairwise mean of the differences but the prior's own lies beyond the ROPE, so the
    posterior no longer depends on the gaps: P = P(w0 < 1/√2) with the prior's Dirichlet weight
    ``w0 ~ Beta(prior, N)``, the same for any such gaps.

    Examples
    --------
    >>> round(unanimous_posterior(2), 3), round(unanimous_posterior(3), 3)   # 2 gaps of 3 pp or of 30 pp alike
    (0.964, 0.991)
    """
    return float(stats.beta.cdf(_SQRT_HALF, prior, n_datasets))


def min_datasets_for_verdict(level: float, *, prior: float = 0.5) -> int:
    """The fewest data sets on which P(better) can reach ``level`` while one of them shows no difference at all.

    Below it, the posterior reaches ``level`` only when every data set's gap lies beyond twice the
    ROPE on one side, and it is then :func:`unanimous_posterior`, whatever the gaps: it counts the
    data sets, it does not weigh them, so it gives no verdict of its own. From it on, a verdict
    can stand with one data set at a gap of 0 (its posterior ``P(w0 + w1 < 1/√2)``, ``w0 + w1 ~
    Beta(prior + 1, N − 1)``), so the gaps, not only their signs, decide it.

    Examples
    --------
    >>> min_datasets_for_verdict(0.95)    # baycomp's prior 0.5: 4 data sets (0.952 with one at 0; 0.856 with 3)
    4
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    n = 2
    while stats.beta.cdf(_SQRT_HALF, prior + 1.0, n - 1) < level:
        n += 1
    return n
