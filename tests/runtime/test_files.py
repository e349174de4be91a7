"""Atomic writes under faults: SIGKILL mid-write (real processes) and a full disk leave the old file or the new."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from headtohead.errors import ResultsError
from headtohead.results.predictions import Predictions
from headtohead.runtime import files
from headtohead.runtime.files import write_text_atomic

# Writes results.json and predictions.npz over and over, each version a few megabytes and
# self-checking (a digest of its payload; every prediction equal to the version number).
WRITER = textwrap.dedent("""\
    import hashlib, json, sys
    from pathlib import Path
    import numpy as np
    from headtohead.results.predictions import Predictions
    from headtohead.runtime.files import write_text_atomic

    out = Path(sys.argv[1])
    n = 200_000
    for version in range(1, 10**9):
        pad = str(version) * (3_000_000 // len(str(version)))
        text = json.dumps({"version": version, "pad": pad, "sha": hashlib.sha256(pad.encode()).hexdigest()})
        write_text_atomic(out / "results.json", text)
        p = Predictions(np.arange(n), np.zeros(n, dtype=np.int64), ("a", "b"))
        p.add("m", np.full(n, version % 2), np.full((n, 2), 0.5, dtype=np.float32))
        p.save(out / "predictions.npz")
        (out / "progress").write_text(str(version))
    """)


def _check_results(path: Path) -> int:
    """The version a results file holds; fails the test if the file is not whole."""
    raw = json.loads(path.read_text())
    assert hashlib.sha256(raw["pad"].encode()).hexdigest() == raw["sha"]
    return raw["version"]


@pytest.mark.slow
def test_sigkill_mid_write_leaves_the_previous_file_or_the_new_one(tmp_path, until):
    rng = random.Random(15)
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    out = tmp_path / "out"
    out.mkdir()
    interrupted, seen, round_ = 0, [], 0
    # Kill until six kills have landed inside a write (a busy machine can make a kill land
    # between writes), at most 40 times.
    while interrupted < 6 and round_ < 40:
        round_ += 1
        process = subprocess.Popen([sys.executable, str(script), str(out)], stderr=subprocess.PIPE)
        # the first complete version, then kill at a random moment (waiting for the event, not the clock)
        assert until(lambda: (out / "progress").exists(), process), process.stderr.read().decode()
        if round_ % 2:  # at a random moment …
            time.sleep(rng.uniform(0.0, 0.6))
        else:  # … or the moment a temporary file appears: inside a write, for sure
            until(lambda: bool(list(out.glob(".*.tmp"))), process)
            time.sleep(rng.uniform(0.0, 0.002))
        process.send_signal(signal.SIGKILL)
        process.wait()
        process.stderr.close()
        assert process.returncode == -signal.SIGKILL
        interrupted += bool(list(out.glob(".*.tmp")))  # the kill landed inside a write
        seen.append(_check_results(out / "results.json"))
        predictions = Predictions.load(out / "predictions.npz")
        assert len(predictions.y_true) == 200_000 and len(set(predictions["m"].pred.tolist())) == 1
        for stale in out.glob(".*.tmp"):  # what a killed writer leaves; the next run removes it (outputs.claim_output)
            stale.unlink()
        (out / "progress").unlink()
    assert interrupted >= 6, f"only {interrupted} of {round_} kills landed mid-write: the test did not test much"
    assert all(version >= 1 for version in seen)


def test_a_full_disk_names_the_path_and_keeps_the_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "results.json"
    write_text_atomic(path, '{"version": 1}')
    real = os.fdopen

    class FullDisk:
        def __init__(self, handle):
            self.handle = handle

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

        def write(self, data):
            self.handle.write(data[: len(data) // 2])  # part of it lands, then the disk is full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def __getattr__(self, name):
            return getattr(self.handle, name)

    monkeypatch.setattr(files.os, "fdopen", lambda fd, mode: FullDisk(real(fd, mode)))
    with pytest.raises(ResultsError) as info:
        write_text_atomic(path, '{"version": 2, "pad": "' + "x" * 10_000 + '"}')
    message = str(info.value)
    assert len(message.splitlines()) == 1
    assert message.startswith(
        f"{path}: writing failed (No space left on device); the previous file, if any, is "
        f"unchanged; free some disk space or choose another --out folder"
    )
    assert json.loads(path.read_text()) == {"version": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]  # the partial temporary file is gone
