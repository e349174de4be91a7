"""The model families: one registry row per ``kind``, each with the settings class that owns its keys.

A family is its settings module here (``config/models/<kind>.py``), its adapter
(``adapters/…``, named lazily as ``"module:Class"`` so that the config never imports torch) and
one :class:`Family` row in :data:`FAMILIES`. Everything that lists the kinds reads this tuple:
the config's ``kind`` check, :func:`headtohead.adapters.create_adapter`, the extra a missing
dependency names, ``h2h run --model path``'s inference of the kind, and the kinds' table in
``README.md`` (``python -m headtohead.config.models README.md`` rewrites it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from headtohead.config.models.base import ModelConfig
from headtohead.config.models.causal_lm import CausalLMSettings
from headtohead.config.models.inspect_log import INSPECT_SUFFIXES, InspectSettings
from headtohead.config.models.lm_eval_samples import LmEvalSettings
from headtohead.config.models.onnx import OnnxSettings, is_onnx_folder
from headtohead.config.models.openai import OpenAISettings
from headtohead.config.models.predictions import PREDICTION_SUFFIXES, PredictionsSettings
from headtohead.config.models.python import PythonSettings, is_factory_source
from headtohead.config.models.sklearn import SKLEARN_SUFFIXES, SklearnSettings
from headtohead.config.models.timm import TimmSettings
from headtohead.config.models.torchvision import TorchvisionSettings
from headtohead.config.models.transformers import TransformersSettings, is_transformers_source

__all__ = ["Family", "FAMILIES", "MODEL_KINDS", "ModelConfig", "family", "kinds_table"]

_ALL = ("text", "text_pair", "image", "features")


@dataclass(frozen=True)
class Family:
    """One model family: the ``kind:`` of an entry, the class of its keys, and what the run needs to know of it."""

    kind: str
    settings: type[ModelConfig]
    #: ``"module:Class"`` of its :class:`~headtohead.adapters.base.ModelAdapter`, imported on load.
    adapter: str
    #: The ``pip install "headtohead[extra]"`` that brings its dependencies (``None``: the base install).
    extra: str | None
    #: The dataset modalities it reads.
    modalities: tuple[str, ...]
    #: One line for the kinds' table.
    description: str
    #: File suffixes that make a ``--model`` source this kind.
    suffixes: tuple[str, ...] = ()
    #: ``(source, path) -> bool`` for sources that are not a file suffix (folders, hub ids, factories).
    recognises: Callable[[str, Path], bool] | None = None
    #: Its source is another harness's log, which holds the examples too: the run's data may be
    #: read from the models' logs (``data.path: logs:``, and ``h2h run`` without ``--data``).
    holds_data: bool = False


FAMILIES: tuple[Family, ...] = (
    Family(
        "transformers", TransformersSettings, "headtohead.adapters.hf_transformers:TransformersAdapter", "text",
        ("text", "text_pair"), "a Hugging Face sequence classifier: a saved folder or a hub id",
        recognises=is_transformers_source,
    ),
    Family(
        "timm", TimmSettings, "headtohead.adapters.timm_models:TimmAdapter", "vision", ("image",),
        "a timm architecture by name, with a checkpoint or pretrained weights",
    ),
    Family(
        "torchvision", TorchvisionSettings, "headtohead.adapters.torchvision_models:TorchvisionAdapter", "vision",
        ("image",), "a torchvision architecture by name, with a checkpoint or pretrained weights",
    ),
    Family(
        "sklearn", SklearnSettings, "headtohead.adapters.sklearn_models:SklearnAdapter", None,
        ("features", "image", "text"), "a fitted scikit-learn estimator (.skops; pickles only when trusted)",
        suffixes=SKLEARN_SUFFIXES,
    ),
    Family(
        "python", PythonSettings, "headtohead.adapters.python_factory:PythonAdapter", None, _ALL,
        "any callable built by a package.module:factory function", recognises=is_factory_source,
    ),
    Family(
        "onnx", OnnxSettings, "headtohead.adapters.onnx_runtime:OnnxRuntimeAdapter", "onnx", _ALL,
        "an exported .onnx graph run with ONNX Runtime", suffixes=(".onnx",), recognises=is_onnx_folder,
    ),
    Family(
        "predictions", PredictionsSettings, "headtohead.adapters.predictions:PredictionsAdapter", None, _ALL,
        "stored predictions or probabilities, matched to the data by example", suffixes=PREDICTION_SUFFIXES,
    ),
    Family(
        "openai", OpenAISettings, "headtohead.adapters.openai_chat:OpenAIChatAdapter", "llm", ("text", "text_pair"),
        "a chat model behind an OpenAI-compatible endpoint, prompted to answer with a label",
    ),
    Family(
        "causal-lm", CausalLMSettings, "headtohead.adapters.causal_lm:CausalLMAdapter", "llm-local",
        ("text", "text_pair"), "a causal LM run here (a folder or a .gguf file): label log-likelihoods, or answers read",
        suffixes=(".gguf",),
    ),
    Family(
        "lm-eval", LmEvalSettings, "headtohead.adapters.lm_eval_samples:LmEvalAdapter", None, ("text",),
        "an lm-evaluation-harness run's --log_samples files: each document right or wrong by its metric",
        holds_data=True,
    ),
    Family(
        "inspect", InspectSettings, "headtohead.adapters.inspect_log:InspectAdapter", "inspect", ("text",),
        "an Inspect log (.eval/.json): each sample's score per epoch, epochs grouped by sample",
        suffixes=INSPECT_SUFFIXES, holds_data=True,
    ),
)  # fmt: skip

#: The kinds, in the registry's order.
MODEL_KINDS: tuple[str, ...] = tuple(f.kind for f in FAMILIES)
ModelConfig.families = MappingProxyType({f.kind: f.settings for f in FAMILIES})  # what an entry's kind builds


def family(kind: str) -> Family:
    """The registry row of ``kind`` (``KeyError`` for an unknown kind; the config refuses those first)."""
    for row in FAMILIES:
        if row.kind == kind:
            return row
    raise KeyError(kind)


def kinds_table() -> str:
    """The kinds as a Markdown table (``README.md`` holds it between two markers; a test keeps them equal)."""
    lines = ["| kind | what it is | reads | install | its keys |", "| --- | --- | --- | --- | --- |"]
    base = set(ModelConfig.model_fields)
    for row in FAMILIES:
        own = [f"`{k}`" for k in row.settings.model_fields if k not in base] or ["—"]
        install = f'`pip install "headtohead[{row.extra}]"`' if row.extra else "the base install"
        lines.append(
            f"| `{row.kind}` | {row.description} | {', '.join(row.modalities)} | {install} | {', '.join(own)} |"
        )
    return "\n".join(lines) + "\n"


_BEGIN, _END = "<!-- kinds table: generated by python -m headtohead.config.models -->", "<!-- end of kinds table -->"


def with_kinds_table(text: str) -> str:
    """``text`` (a docs page) with the table between its two markers replaced by :func:`kinds_table`."""
    head, begin, rest = text.partition(_BEGIN)
    _, end, tail = rest.partition(_END)
    if not begin or not end:
        raise ValueError(f"the page has no '{_BEGIN}' … '{_END}' markers")
    return f"{head}{_BEGIN}\n{kinds_table()}{_END}{tail}"
