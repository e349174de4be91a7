"""Balanced run orders for interleaved speed rounds (Williams designs).

See ``docs/statistics.md`` §4.
"""

from __future__ import annotations

from typing import cast

import numpy as np

__all__ = ["williams_design", "round_order", "balanced_orders", "precedence_counts"]


def _check_models(n_models: int) -> None:
    if not isinstance(n_models, (int, np.integer)) or n_models < 1:
        raise ValueError(f"n_models must be a whole number of models, at least 1, not {n_models!r}")


def williams_design(n_models: int) -> np.ndarray:
    """One full cycle of orders: ``k`` rows for even ``k``, ``2k`` for odd ``k`` (one row for ``k = 1``).

    Parameters
    ----------
    n_models : int
        ``k``, the number of models.

    Returns
    -------
    ndarray of int, shape (cycle, k)
        Row ``r`` lists the model indices in the order they run in round ``r``; rows come
        in pairs, an order and its reverse.

    Examples
    --------
    >>> williams_design(4).tolist()
    [[0, 1, 3, 2], [2, 3, 1, 0], [1, 2, 0, 3], [3, 0, 2, 1]]
    >>> williams_design(3).tolist()
    [[0, 1, 2], [2, 1, 0], [1, 2, 0], [0, 2, 1], [2, 0, 1], [1, 0, 2]]
    """
    _check_models(n_models)
    k = int(n_models)
    # first row 0, 1, k−1, 2, k−2, …; the others add r (mod k): the classic Williams square
    first = [0] + [((j + 1) // 2) if j % 2 == 1 else k - j // 2 for j in range(1, k)]
    square = (np.asarray(first)[None, :] + np.arange(k)[:, None]) % k
    if k % 2 == 0:
        # row r + k/2 is row r reversed, so the square already pairs every order with its reverse
        rows = [square[r // 2 + (k // 2) * (r % 2)] for r in range(k)]
    else:
        rows = [square[r // 2][::-1] if r % 2 else square[r // 2] for r in range(2 * k)]
    return np.asarray(rows, dtype=np.int64)


def _relabel(design: np.ndarray, seed: int | None) -> np.ndarray:
    """The same design with the model labels permuted at random (balance is kept: it is a relabelling)."""
    if seed is None:
        return design
    labels = np.random.default_rng(seed).permutation(design.shape[1])
    return cast(np.ndarray, labels[design])


def round_order(n_models: int, round_index: int, *, seed: int | None = None) -> list[int]:
    """The order of the models in round ``round_index`` (0-based), cycling through :func:`williams_design`.

    Parameters
    ----------
    n_models : int
    round_index : int
        Rounds beyond one cycle start the cycle again.
    seed : int, optional
        Relabel the models at random (the same seed gives the same orders in every round),
        so the first-listed model is not always the one that opens round 0.

    Returns
    -------
    list of int
        Model indices in running order.

    Examples
    --------
    >>> [round_order(3, r) for r in range(3)]
    [[0, 1, 2], [2, 1, 0], [1, 2, 0]]
    """
    if round_index < 0:
        raise ValueError(f"round_index must be 0 or more, not {round_index}")
    design = _relabel(williams_design(n_models), seed)
    return cast("list[int]", design[round_index % len(design)].tolist())


def balanced_orders(n_models: int, n_rounds: int, *, seed: int | None = None) -> list[list[int]]:
    """The orders of ``n_rounds`` consecutive rounds (:func:`round_order` for rounds 0, 1, …).

    Examples
    --------
    >>> balanced_orders(2, 4)
    [[0, 1], [1, 0], [0, 1], [1, 0]]
    """
    if n_rounds < 0:
        raise ValueError(f"n_rounds must be 0 or more, not {n_rounds}")
    design = _relabel(williams_design(n_models), seed)
    return [design[r % len(design)].tolist() for r in range(n_rounds)]


def precedence_counts(orders: list[list[int]], n_models: int) -> np.ndarray:
    """``counts[i, j]``: in how many of ``orders`` model ``i`` ran (anywhere) before model ``j``.

    Examples
    --------
    >>> precedence_counts([[0, 1, 2], [1, 2, 0], [2, 0, 1]], 3)[0, 1]  # rotation: A before B twice in 3
    np.int64(2)
    """
    counts = np.zeros((n_models, n_models), dtype=np.int64)
    for order in orders:
        position = np.empty(n_models, dtype=np.int64)
        position[np.asarray(order)] = np.arange(len(order))
        counts += position[:, None] < position[None, :]
    return counts
