"""Optimisation variants of a model (precision, int8, compile, ONNX Runtime, pruning, NHWC, truncation
length) behind the adapter interface, and their speed at each batch size — what ``h2h sweep``
(:mod:`headtohead.pipeline.sweep`) builds, checks against the fp32 eager parent
(:mod:`headtohead.stats.variant_quality`), times, and recommends from (:mod:`headtohead.stats.recommend`).

* :mod:`~headtohead.sweeps.grid` — the ``sweep:`` section expanded into variants;
* :mod:`~headtohead.sweeps.variants` — :class:`VariantAdapter`, a variant behind the adapter interface;
* :mod:`~headtohead.sweeps.transforms` — pruning and int8 quantisation of a module;
* :mod:`~headtohead.sweeps.onnx_export` — export, check against PyTorch, int8 with ONNX Runtime;
* :mod:`~headtohead.sweeps.measure` — speed per batch size, OOM back-off;
* :mod:`~headtohead.sweeps.capabilities` — what this machine can run.

Importing this package does not import torch; the modules that need it import it inside.
"""

from headtohead.sweeps.grid import Grid, VariantSpec, expand_grid, variant_name

__all__ = ["expand_grid", "variant_name", "VariantSpec", "Grid"]
