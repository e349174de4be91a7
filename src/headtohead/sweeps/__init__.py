"""Optimisation variants of a model (precision, int8, compile, ONNX Runtime, pruning, NHWC, truncation
length) behind the adapter interface, and their speed at each batch size — what ``h2h sweep``
(:mod:`headtohead.pipeline.sweep`) builds, checks against the fp32 eager parent
(:mod:`headtohead.stats.variant_quality`), times, and recommends from (:mod:`headtohead.stats.recommend`).

See ``docs/sweeps.md``, "Optimisation sweeps (`h2h sweep`)".
"""

from headtohead.sweeps.grid import Grid, VariantSpec, expand_grid, variant_name

__all__ = ["expand_grid", "variant_name", "VariantSpec", "Grid"]
