"""Seeding every random number generator a run touches."""

from __future__ import annotations

import os
import random

import numpy as np

__all__ = ["seed_everything"]


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch (CPU and CUDA) so a run can be repeated.

    Parameters
    ----------
    seed : int
    """
    random.seed(seed)
    np.random.seed(seed % 2**32)  # noqa: NPY002 - the legacy global RNG that user code and libraries may draw from
    os.environ.setdefault("PYTHONHASHSEED", str(seed))
    try:
        import torch
    except ImportError:  # scikit-learn-only installs
        return
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
