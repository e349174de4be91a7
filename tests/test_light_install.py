"""The light install: ``pip install headtohead`` (no torch, transformers or timm) compares prediction files.

The slow test builds a fresh virtual environment, installs the base dependencies of
``pyproject.toml`` from the package sources pip is configured with *on this machine* (a
``file://`` index or a wheel folder: nothing is downloaded) and headtohead itself with
``--no-deps``, then runs ``h2h run`` on two prediction files end to end. It skips, saying why,
where pip has no local source or cannot install from it. The fast test runs the same
comparison in this environment with torch, transformers, timm and torchvision made
unimportable, so a module-level ``import torch`` on the path fails it at once.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from headtohead.adapters.predictions import write_prediction_file
from headtohead.results.records import SCHEMA_VERSION

REPO = Path(__file__).resolve().parents[1]
LABELS = ("negative", "positive")
_BLOCKER = textwrap.dedent("""
    import importlib.abc, sys
    class _NoHeavy(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in {"torch", "transformers", "timm", "torchvision", "tokenizers", "safetensors"}:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    sys.meta_path.insert(0, _NoHeavy())
    from headtohead.cli.main import main
    main(sys.argv[1:])
""")


def _two_prediction_files(folder: Path) -> None:
    """A small text dataset with ids and a slice column, and two prediction files (one without probabilities)."""
    rng = np.random.default_rng(0)
    n = 240
    y = rng.integers(0, 2, n)
    ids = [f"ex{i}" for i in range(n)]
    texts = [" ".join(["word"] * (1 + i % 30)) for i in range(n)]
    pd.DataFrame({"id": ids, "text": texts, "label": [LABELS[k] for k in y],
                  "source": ["web" if i % 3 else "news" for i in range(n)]}).to_csv(folder / "dev.csv", index=False)
    good = np.where(rng.random(n) < 0.9, y, 1 - y)
    weak = np.where(y == 0, np.where(rng.random(n) < 0.5, 0, 1), good)  # wrong on half the negatives
    proba = np.where(np.eye(2)[good] == 1, 0.8, 0.2)
    write_prediction_file(folder / "good.csv", ids, good.tolist(), proba, label_names=LABELS)
    write_prediction_file(folder / "weak.jsonl", ids[::-1], [LABELS[k] for k in weak[::-1]])


def _check_outputs(out: Path) -> dict:
    result = json.loads((out / "results.json").read_text())
    assert result["schema_version"] == SCHEMA_VERSION
    assert [m["outputs"] for m in result["models"]] == ["stored", "stored"]
    assert result["stats"]["comparisons"][0]["winner"] == "good"
    assert {s["kind"] for s in result["stats"]["slices"]["slices"]} == {"class", "size", "column"}
    assert result["stats"]["models"][1]["ece"] is None  # no probabilities: not available
    assert (out / "report.html").is_file() and (out / "disagreements.csv").is_file()
    assert result["speed"] is None  # stored predictions: nothing to time
    return result


def test_prediction_files_compare_with_torch_and_transformers_unimportable(tmp_path):
    _two_prediction_files(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    done = subprocess.run([sys.executable, "-c", _BLOCKER, "run", "--data", "dev.csv", "--id-column", "id",
                           "--slice-column", "source", "--model", "good=good.csv", "--model", "weak=weak.jsonl",
                           "--out", "out"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    result = _check_outputs(tmp_path / "out")
    assert result["environment"]["torch"] is None
    # a family that needs torch says which extra to install, in one line
    done = subprocess.run([sys.executable, "-c", _BLOCKER, "run", "--data", "dev.csv", "--model",
                           "bert=transformers:org/model"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 2 and 'pip install "headtohead[text]"' in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def _base_dependencies() -> list[str]:
    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11+")
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]


def _local_pip_sources() -> tuple[list[str], list[str]]:
    """The ``file://`` indexes and the local wheel folders pip is configured with (nothing remote)."""
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True,
                            check=False).stdout
    pairs = re.findall(r"\.(index-url|extra-index-url|find-links)='([^']*)'", listed)
    pairs += [(key, os.environ.get(var, "")) for key, var in (("index-url", "PIP_INDEX_URL"),
                                                              ("extra-index-url", "PIP_EXTRA_INDEX_URL"),
                                                              ("find-links", "PIP_FIND_LINKS"))]
    indexes, folders = [], []
    for key, value in pairs:
        for item in value.split():
            local = Path(item.removeprefix("file://"))
            if not local.is_dir() or (key != "find-links" and not item.startswith("file://")):
                continue
            (folders if key == "find-links" else indexes).append(item)
    return list(dict.fromkeys(indexes)), list(dict.fromkeys(folders))


@pytest.mark.slow
def test_a_fresh_venv_without_torch_compares_two_prediction_files(tmp_path):
    dependencies = _base_dependencies()
    assert not any(re.match(r"(torch|transformers|timm|torchvision)\b", d) for d in dependencies)
    indexes, folders = _local_pip_sources()
    if not indexes and not folders:
        pytest.skip("pip has no local package source (a file:// index or a wheel folder): cannot install offline")
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "venv")], check=True, timeout=300)
    python = tmp_path / "venv" / "bin" / "python"
    sources = ([f"--index-url={indexes[0]}"] + [f"--extra-index-url={i}" for i in indexes[1:]] if indexes
               else ["--no-index"]) + [f"--find-links={f}" for f in folders]
    env = dict(os.environ, PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    env.pop("PYTHONPATH", None)
    install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", *sources, *dependencies,
                              "setuptools>=68"], env=env, capture_output=True, text=True, timeout=1200)
    if install.returncode != 0:
        pytest.skip(f"pip cannot install the base dependencies offline: {install.stderr.strip().splitlines()[-1]}")
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "-e",
                    str(REPO)], env=env, check=True, capture_output=True, timeout=600)
    assert subprocess.run([str(python), "-c", "import torch"], capture_output=True).returncode != 0
    _two_prediction_files(tmp_path)
    done = subprocess.run([str(tmp_path / "venv" / "bin" / "h2h"), "run", "--data", "dev.csv", "--id-column", "id",
                           "--slice-column", "source", "--model", "good=good.csv", "--model", "weak=weak.jsonl",
                           "--out", "out"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    _check_outputs(tmp_path / "out")
    gate = subprocess.run([str(tmp_path / "venv" / "bin" / "h2h"), "gate", "out/results.json", "--baseline", "good",
                           "--candidate", "weak", "--max-accuracy-drop", "1pp"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert gate.returncode == 1, gate.stdout + gate.stderr  # weak is worse beyond the margin
