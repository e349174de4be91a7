"""Model adapters: one module per model family behind :class:`ModelAdapter`.

:func:`create_adapter` is the one verb. Each family's row in the registry
(:data:`headtohead.config.models.FAMILIES`) names its adapter as a ``"module:Class"`` string,
so that importing this package does not import torch, transformers or timm; a family's
module is imported when a model of that kind is loaded.
"""

from __future__ import annotations

import importlib

from headtohead.adapters.base import LoadContext, ModelAdapter, move_to_device
from headtohead.adapters.labels import LabelAlignment, align_labels
from headtohead.config.models import FAMILIES, MODEL_KINDS, ModelConfig, family
from headtohead.errors import ModelError, did_you_mean
from headtohead.runtime.extras import missing_dependency

__all__ = [
    "ADAPTERS",
    "create_adapter",
    "adapter_class",
    "ModelAdapter",
    "LoadContext",
    "LabelAlignment",
    "align_labels",
    "move_to_device",
]

#: Kind → ``"module:Class"`` of its adapter, read from the registry (:data:`headtohead.config.models.FAMILIES`).
ADAPTERS: dict[str, str] = {row.kind: row.adapter for row in FAMILIES}


def adapter_class(kind: str) -> type[ModelAdapter]:
    """The adapter class registered for ``kind``."""
    if kind not in MODEL_KINDS:
        raise ModelError(
            f"unknown model kind '{kind}'{did_you_mean(kind, MODEL_KINDS)} (choose one of: {', '.join(MODEL_KINDS)})"
        )
    row = family(kind)
    module_name, class_name = row.adapter.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:  # a family whose extra is not installed (torch, transformers, timm …)
        raise missing_dependency(exc, f"model kind '{kind}'", row.extra) or exc from None
    adapter: type[ModelAdapter] = getattr(module, class_name)
    return adapter


def create_adapter(config: ModelConfig, context: LoadContext) -> ModelAdapter:
    """Load the model described by ``config``.

    Parameters
    ----------
    config : ModelConfig
        One entry of ``models:``.
    context : LoadContext
        The dataset's labels and modality, the device, the seed.

    Returns
    -------
    ModelAdapter
        Ready for :meth:`~ModelAdapter.preprocess` / :meth:`~ModelAdapter.forward`, in eval mode.

    Raises
    ------
    ModelError
        The model cannot be loaded, or cannot read this dataset's modality.
    """
    row = family(config.kind)
    if context.modality not in row.modalities:
        raise ModelError(
            f"model '{config.name}' (kind {config.kind}) cannot read {context.modality} data; "
            f"{config.kind} models read: {', '.join(row.modalities)}"
        )
    cls = adapter_class(config.kind)
    try:
        return cls.load(config, context)
    except ModuleNotFoundError as exc:  # imported on load: torch for a module, skops for a .skops file …
        raise missing_dependency(exc, f"model '{config.name}' (kind {config.kind})", row.extra) or exc from None
