"""Statistics: is the difference between two models real? Pure functions over arrays and records.

Nothing in this package imports torch. The run calls :func:`analyse` on the saved
per-example predictions; the pieces are usable on their own:

* :mod:`~headtohead.stats.mcnemar` — McNemar's test on paired correctness;
* :mod:`~headtohead.stats.bootstrap` — vectorised (paired) bootstrap intervals, percentile/BCa;
* :mod:`~headtohead.stats.bootstrap_metrics` — metrics as functions of resampled sums (the registry);
* :mod:`~headtohead.stats.intervals` — Wilson and bootstrap intervals of one model;
* :mod:`~headtohead.stats.calibration` — ECE, MCE, Brier, NLL, reliability bins;
* :mod:`~headtohead.stats.multiple` — Holm–Bonferroni and the grouped ranking;
* :mod:`~headtohead.stats.power` — sample size and minimum detectable effect;
* :mod:`~headtohead.stats.seeds` — several training seeds per model;
* :mod:`~headtohead.stats.quality` — quality metrics of one model (scikit-learn);
* :mod:`~headtohead.stats.speed` — speed ratios over interleaved rounds;
* :mod:`~headtohead.stats.gate` — the gate's decisions;
* :mod:`~headtohead.stats.slices`, :mod:`~headtohead.stats.disagreements`, :mod:`~headtohead.stats.where` —
  where models differ: quality per slice with paired tests, the examples exactly one model got right;
* :mod:`~headtohead.stats.variant_quality`, :mod:`~headtohead.stats.recommend` — sweeps against their parent.

The words for all of it are in :mod:`headtohead.report`.
"""

from headtohead.stats.analyse import analyse
from headtohead.stats.bootstrap import Interval, bootstrap_metrics, paired_bootstrap
from headtohead.stats.bootstrap_metrics import METRICS, register_metric
from headtohead.stats.calibration import calibration, reliability_bins
from headtohead.stats.intervals import wilson_interval
from headtohead.stats.mcnemar import McNemarResult, mcnemar_test
from headtohead.stats.multiple import holm_adjust, rank_groups
from headtohead.stats.power import default_discordance, mcnemar_sample_size, minimum_detectable_effect
from headtohead.stats.seeds import compare_across_seeds, summarise_seeds
from headtohead.stats.where import ExampleFacts

__all__ = [
    "analyse",
    "ExampleFacts",
    "mcnemar_test",
    "McNemarResult",
    "bootstrap_metrics",
    "paired_bootstrap",
    "Interval",
    "METRICS",
    "register_metric",
    "wilson_interval",
    "calibration",
    "reliability_bins",
    "holm_adjust",
    "rank_groups",
    "mcnemar_sample_size",
    "default_discordance",
    "minimum_detectable_effect",
    "compare_across_seeds",
    "summarise_seeds",
]
