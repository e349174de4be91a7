"""Model adapters: one module per model family behind :class:`ModelAdapter`.

:func:`create_adapter` is the one verb. Families are registered by name in
``ADAPTERS`` as ``"module:Class"`` strings so that importing this package does not
import torch, transformers or timm; a family's module is imported when a model of that
kind is loaded. A new family is one new module plus one line here (and its name in
``headtohead.config.schema.MODEL_KINDS``, which a test keeps in step).
"""

from __future__ import annotations

import importlib

from headtohead.adapters.base import LoadContext, ModelAdapter, move_to_device
from headtohead.adapters.labels import LabelAlignment, align_labels
from headtohead.config.schema import ModelConfig
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

ADAPTERS: dict[str, str] = {
    "transformers": "headtohead.adapters.hf_transformers:TransformersAdapter",
    "timm": "headtohead.adapters.timm_models:TimmAdapter",
    "torchvision": "headtohead.adapters.torchvision_models:TorchvisionAdapter",
    "sklearn": "headtohead.adapters.sklearn_models:SklearnAdapter",
    "python": "headtohead.adapters.python_factory:PythonAdapter",
    "onnx": "headtohead.adapters.onnx_runtime:OnnxRuntimeAdapter",
    "predictions": "headtohead.adapters.predictions:PredictionsAdapter",
    "openai": "headtohead.adapters.openai_chat:OpenAIChatAdapter",
}


def adapter_class(kind: str) -> type[ModelAdapter]:
    """The adapter class registered for ``kind``."""
    if kind not in ADAPTERS:
        raise ModelError(
            f"unknown model kind '{kind}'{did_you_mean(kind, ADAPTERS)} (choose one of: {', '.join(ADAPTERS)})"
        )
    module_name, class_name = ADAPTERS[kind].split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:  # a family whose extra is not installed (torch, transformers, timm …)
        raise missing_dependency(exc, f"model kind '{kind}'", kind) or exc from None
    return getattr(module, class_name)


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
    cls = adapter_class(config.kind)
    if context.modality not in cls.modalities:
        raise ModelError(
            f"model '{config.name}' (kind {config.kind}) cannot read {context.modality} data; "
            f"{config.kind} models read: {', '.join(cls.modalities)}"
        )
    try:
        return cls.load(config, context)
    except ModuleNotFoundError as exc:  # imported on load: torch for a module, skops for a .skops file …
        raise missing_dependency(exc, f"model '{config.name}' (kind {config.kind})", config.kind) or exc from None
