"""Optimisation sweeps: variants of a model (precision, int8, compile, ONNX Runtime, pruning, NHWC,
truncation length) × batch sizes, each checked for quality against its fp32 eager parent and
timed beside it, failures kept as results, and the best variant under a budget recommended.

* :mod:`~headtohead.sweeps.grid` — the ``sweep:`` section expanded into variants;
* :mod:`~headtohead.sweeps.variants` — :class:`VariantAdapter`, a variant behind the adapter interface;
* :mod:`~headtohead.sweeps.transforms` — pruning and int8 quantisation of a module;
* :mod:`~headtohead.sweeps.onnx_export` — export, check against PyTorch, int8 with ONNX Runtime;
* :mod:`~headtohead.sweeps.quality` — paired statistics against the parent;
* :mod:`~headtohead.sweeps.measure` — speed per batch size, OOM back-off;
* :mod:`~headtohead.sweeps.recommend` — the recommendation sentence;
* :mod:`~headtohead.sweeps.run` — :func:`run_sweep`, the whole sweep;
* :mod:`~headtohead.sweeps.report` — table, Markdown and curves.

Importing this package does not import torch; the modules that need it import it inside.
"""

from headtohead.sweeps.grid import Grid, VariantSpec, expand_grid, variant_name
from headtohead.sweeps.recommend import recommend
from headtohead.sweeps.run import SweepRun, run_sweep, sweep_model

__all__ = ["run_sweep", "sweep_model", "SweepRun", "recommend", "expand_grid", "variant_name", "VariantSpec", "Grid"]
