"""A real suite end to end through ``h2h suite``: SST-2 and SNIPS (../shared/data) and scikit-learn's digits, wine,
breast cancer and iris, one recipe of three models fitted in seconds, the report opened in Chromium."""

from __future__ import annotations

import html
import re
import shutil
import subprocess

import pytest
import yaml

from headtohead.cli.main import main
from headtohead.config.suite import load_suite
from headtohead.results import load_result
from headtohead.results.suite import load_suite_result
from headtohead.testing.suite_models import RECIPE, fit_recipe

pytestmark = [pytest.mark.slow, pytest.mark.shared_data]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def test_six_real_data_sets_through_h2h_suite(shared_data, tmp_path, capsys):
    sklearn = [
        {"name": d, "data": {"path": f"sklearn:{d}", "split": {"eval_fraction": 0.3}}}
        for d in ("digits", "wine", "breast_cancer", "iris")
    ]
    suite = {
        "name": "six-datasets",
        "seed": 42,
        "datasets": [
            {
                "name": "sst2",
                "data": {
                    "path": str(shared_data / "sst2" / "dev.tsv"),
                    "train": str(shared_data / "sst2" / "train.tsv"),
                    "label_names": ["negative", "positive"],
                },
            },
            {
                "name": "snips",
                "data": {
                    "path": str(shared_data / "snips" / "test.tsv"),
                    "train": str(shared_data / "snips" / "train.tsv"),
                },
            },
            *sklearn,
        ],
        "models": [{"name": m, "kind": "sklearn", "source": f"models/{{dataset}}/{m}.skops"} for m in RECIPE],
        "eval": {"batch_size": 256, "device": "cpu"},
        "speed": {"enabled": False},
        "stats": {"n_resamples": 300},
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    for dataset in load_suite(path).datasets:
        fit_recipe(dataset.data, tmp_path / "models" / dataset.name, train_rows=5000)
    main(["suite", str(path), "--out", str(tmp_path / "out")])
    printed = capsys.readouterr().out
    result = load_suite_result(tmp_path / "out" / "suite.json")
    assert [d.name for d in result.finished] == ["sst2", "snips", "digits", "wine", "breast_cancer", "iris"]
    assert {d.n_classes for d in result.datasets} == {2, 7, 10, 3}
    assert result.dataset("sst2").n_examples == 872 and result.dataset("snips").n_examples == 700
    assert result.friedman is not None and result.nemenyi_cd == pytest.approx(1.353, abs=1e-3)  # k = 3, N = 6
    sst2 = load_result(tmp_path / "out" / "sst2" / "results.json")
    assert result.dataset("sst2").scores["logreg"] == sst2.model("logreg").quality.accuracy > 0.7
    assert result.verdict[0] in printed and "Ranks" in printed
    page = tmp_path / "out" / "suite.html"
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        check=False,  # no timeout: the browser ends by itself, however loaded the machine is
    )
    dom = done.stdout
    assert done.returncode == 0 and html.escape(result.verdict[0], quote=False) in dom
    assert len(re.findall(r'<img [^>]*src="data:image/svg\+xml;base64,', dom)) == 1
    assert '<a href="sst2/report.html">sst2</a>' in dom and '<a href="iris/report.html">iris</a>' in dom
