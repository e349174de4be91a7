"""Fit the recipe of examples/suite-six-datasets.yaml on each data set's training part (seconds; no network).

TF-IDF + logistic regression / complement naive Bayes / ridge for SST-2 (first 20,000 training sentences) and
SNIPS; the same three on standardised features for scikit-learn's digits, wine, breast cancer and iris (trained on
the 70 % that the suite's seeded split keeps for training). Saved with skops under examples/models/suite/.

Usage::

    .venv/bin/python examples/build_suite_models.py
    .venv/bin/h2h suite examples/suite-six-datasets.yaml --out runs/six-datasets
"""

from __future__ import annotations

import time
from pathlib import Path

from headtohead.config.suite import load_suite
from headtohead.pipeline.setup import absolute_data_paths
from headtohead.testing.suite_models import fit_recipe

HERE = Path(__file__).resolve().parent


def main() -> None:
    suite = load_suite(HERE / "suite-six-datasets.yaml")
    for dataset in suite.datasets:
        began = time.perf_counter()
        fit_recipe(absolute_data_paths(dataset.data, HERE), HERE / "models" / "suite" / dataset.name, seed=suite.seed)
        print(f"{dataset.name}: fitted in {time.perf_counter() - began:.1f} s")


if __name__ == "__main__":
    main()
