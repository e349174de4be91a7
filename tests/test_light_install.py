"""The light install: ``pip install headtohead`` (no torch, transformers or timm) compares prediction files.

The ``dist`` test (``make dist-check``; ``make test`` skips it unless ``H2H_DIST_CHECK=1``, which CI
sets: it needs the package index) builds
the wheel and the sdist with ``python -m build``, installs each alone into a fresh virtual
environment (pip resolves the dependencies the distribution declares, nothing else), and there
runs ``h2h --version``, ``h2h run`` on two prediction files and ``h2h gate``. The fast test runs the
same comparison in this environment with torch, transformers, timm and torchvision made
unimportable, so a module-level ``import torch`` on the path fails it at once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zipfile
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
    pd.DataFrame(
        {
            "id": ids,
            "text": texts,
            "label": [LABELS[k] for k in y],
            "source": ["web" if i % 3 else "news" for i in range(n)],
        }
    ).to_csv(folder / "dev.csv", index=False)
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
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _BLOCKER,
            "run",
            "--data",
            "dev.csv",
            "--id-column",
            "id",
            "--slice-column",
            "source",
            "--model",
            "good=good.csv",
            "--model",
            "weak=weak.jsonl",
            "--out",
            "out",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    result = _check_outputs(tmp_path / "out")
    assert result["environment"]["torch"] is None
    # a family that needs torch says which extra to install, in one line
    done = subprocess.run(
        [sys.executable, "-c", _BLOCKER, "run", "--data", "dev.csv", "--model", "bert=transformers:org/model"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2 and 'pip install "headtohead[text]"' in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("model", "extra"),
    [("bert=hf-folder", "text"), ("bert=transformers:org/model", "text")],
)
def test_a_family_whose_extra_is_missing_stops_with_one_line_naming_it(tmp_path, model, extra):
    """As a new user's light install has it: not even huggingface_hub, which transformers brings."""
    _two_prediction_files(tmp_path)
    (tmp_path / "hf-folder").mkdir()
    (tmp_path / "hf-folder" / "config.json").write_text("{}")
    blocker = _BLOCKER.replace('"safetensors"}', '"safetensors", "huggingface_hub"}')
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    done = subprocess.run(
        [sys.executable, "-c", blocker, "run", "--data", "dev.csv", "--id-column", "id", "--model", "a=good.csv"]
        + ["--model", model],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr[-3000:]
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr[-3000:]
    assert f'pip install "headtohead[{extra}]"' in done.stderr


def _build_distributions(out: Path) -> tuple[Path, Path]:
    """``python -m build``: the wheel and the sdist of this checkout, as a release would make them."""
    done = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--sdist", "--outdir", str(out), str(REPO)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,), (sdist,) = sorted(out.glob("*.whl")), sorted(out.glob("*.tar.gz"))
    return wheel, sdist


def _pip(bin_dir: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(
        [str(bin_dir / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def _requirements(bin_dir: Path) -> list[str]:
    """What the installed headtohead declares it needs (its ``Requires-Dist``)."""
    code = "import importlib.metadata as m, json; print(json.dumps(sorted(m.requires('headtohead'))))"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return json.loads(
        subprocess.run(
            [str(bin_dir / "python"), "-c", code], capture_output=True, text=True, env=env, check=True
        ).stdout
    )


def _compare_in(bin_dir: Path, folder: Path) -> None:
    """``h2h --version``, then a comparison of two prediction files and the gate, with the installed ``h2h``."""
    from headtohead import __version__

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    python = str(bin_dir / "python")
    assert subprocess.run([python, "-c", "import torch"], capture_output=True, env=env).returncode != 0
    where = subprocess.run(
        [python, "-c", "import headtohead; print(headtohead.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    assert str(bin_dir.parent) in where  # the installed copy, not this checkout
    folder.mkdir(parents=True)
    version = subprocess.run([str(bin_dir / "h2h"), "--version"], capture_output=True, text=True, env=env)
    assert version.returncode == 0 and version.stdout.strip() == f"headtohead {__version__}", version.stderr
    _two_prediction_files(folder)
    done = subprocess.run(
        [
            str(bin_dir / "h2h"),
            "run",
            "--data",
            "dev.csv",
            "--id-column",
            "id",
            "--slice-column",
            "source",
            "--model",
            "good=good.csv",
            "--model",
            "weak=weak.jsonl",
            "--out",
            "out",
        ],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    _check_outputs(folder / "out")
    gate = subprocess.run(
        [
            str(bin_dir / "h2h"),
            "gate",
            "out/results.json",
            "--baseline",
            "good",
            "--candidate",
            "weak",
            "--max-accuracy-drop",
            "1pp",
        ],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert gate.returncode == 1, gate.stdout + gate.stderr  # weak is worse beyond the margin


@pytest.mark.dist
@pytest.mark.skipif(
    not os.environ.get("H2H_DIST_CHECK"),
    reason="builds the wheel and installs it from the package index: `make dist-check` runs it, so "
    "does CI (H2H_DIST_CHECK=1)",
)
def test_the_wheel_and_the_sdist_install_alone_and_compare_prediction_files(tmp_path):
    wheel, sdist = _build_distributions(tmp_path / "dist")
    assert wheel.name.endswith("-py3-none-any.whl") and sdist.name.endswith(".tar.gz")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert {
        "headtohead/py.typed",
        "headtohead/report/templates/document.html.j2",
        "headtohead/report/templates/blocks.html.j2",
        "headtohead/report/templates/notebook.html.j2",
    } <= names
    assert any(n.endswith(".dist-info/licenses/LICENSE") or n.endswith(".dist-info/LICENSE") for n in names)
    assert not any(n.startswith("tests/") for n in names)
    # the wheel alone in a fresh venv: pip resolves what it declares (from PyPI), nothing else
    bin_dir = tmp_path / "venv" / "bin"
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "venv")], check=True, timeout=300)
    _pip(bin_dir, str(wheel))
    _compare_in(bin_dir, tmp_path / "from-wheel")
    declared = _requirements(bin_dir)
    # the sdist built and installed in its place: the same package, declaring the same dependencies, works alike
    _pip(bin_dir, "--force-reinstall", "--no-deps", str(sdist))
    assert _requirements(bin_dir) == declared
    _compare_in(bin_dir, tmp_path / "from-sdist")
