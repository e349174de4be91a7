"""Statistics: is the difference between two models real? Pure functions over arrays and records.

See ``docs/statistics.md``.
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
