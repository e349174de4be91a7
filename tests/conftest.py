"""Shared test set-up: no network, quiet libraries, paths to the optional real data."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# Before anything imports huggingface_hub/transformers: never touch the network.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("MPLBACKEND", "Agg")

# benchmarks/sim (simulators shared with the benchmarks, not shipped) is imported as ``sim``.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

# ../shared/data beside the clone; H2H_SHARED_DATA points elsewhere (a git worktree's parent has none).
SHARED_DATA = Path(os.environ.get("H2H_SHARED_DATA") or Path(__file__).resolve().parents[1].parent / "shared" / "data")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` beside the clone; tests using it skip when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is absent (real public datasets are only on the developers' machines)")
    return SHARED_DATA


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny models on a shared 2-core machine: a second intra-op thread only adds contention."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
