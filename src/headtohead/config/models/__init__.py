"""The model families: one registry row per ``kind``, each with the settings class that owns its keys.

A family is its settings module here (``config/models/<kind>.py``, whose class declares its
``kind`` as a literal), its adapter (``adapters/…``, named lazily as ``"module:Class"`` so that
the config never imports torch) and one :class:`Family` row in :data:`FAMILIES`. Everything that
lists the kinds reads this tuple: :data:`AnyModel`, the discriminated union on ``kind`` that makes
an entry its family's class (``Experiment.models``, :func:`model_settings`),
:func:`headtohead.adapters.create_adapter`, the extra a missing dependency names,
``h2h run --model path``'s inference of the kind, and the kinds' table in ``README.md``
(``python -m headtohead.config.models README.md`` rewrites it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Union, get_args

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError, ValidatorFunctionWrapHandler, WrapValidator
from pydantic_core import InitErrorDetails, PydanticCustomError

from headtohead.config.models.base import ModelConfig
from headtohead.config.models.cascade import CascadeSettings
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
from headtohead.errors import did_you_mean

__all__ = ["AnyModel", "Family", "FAMILIES", "MODEL_KINDS", "ModelConfig", "family", "kinds_table", "model_settings"]

_ALL = ("text", "text_pair", "image", "features")


@dataclass(frozen=True)
class Family:
    """One model family: the class of its keys (whose ``kind`` names it), and what the run needs to know of it."""

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

    @property
    def kind(self) -> str:
        """The ``kind:`` of its entries: the literal its settings class declares."""
        (kind,) = get_args(self.settings.model_fields["kind"].annotation)
        return str(kind)


FAMILIES: tuple[Family, ...] = (
    Family(
        TransformersSettings, "headtohead.adapters.hf_transformers:TransformersAdapter", "text",
        ("text", "text_pair"), "a Hugging Face sequence classifier: a saved folder or a hub id",
        recognises=is_transformers_source,
    ),
    Family(
        TimmSettings, "headtohead.adapters.timm_models:TimmAdapter", "vision", ("image",),
        "a timm architecture by name, with a checkpoint or pretrained weights",
    ),
    Family(
        TorchvisionSettings, "headtohead.adapters.torchvision_models:TorchvisionAdapter", "vision",
        ("image",), "a torchvision architecture by name, with a checkpoint or pretrained weights",
    ),
    Family(
        SklearnSettings, "headtohead.adapters.sklearn_models:SklearnAdapter", None,
        ("features", "image", "text"), "a fitted scikit-learn estimator (.skops; pickles only when trusted)",
        suffixes=SKLEARN_SUFFIXES,
    ),
    Family(
        PythonSettings, "headtohead.adapters.python_factory:PythonAdapter", None, _ALL,
        "any callable built by a package.module:factory function", recognises=is_factory_source,
    ),
    Family(
        OnnxSettings, "headtohead.adapters.onnx_runtime:OnnxRuntimeAdapter", "onnx", _ALL,
        "an exported .onnx graph run with ONNX Runtime", suffixes=(".onnx",), recognises=is_onnx_folder,
    ),
    Family(
        PredictionsSettings, "headtohead.adapters.predictions:PredictionsAdapter", None, _ALL,
        "stored predictions or probabilities, matched to the data by example", suffixes=PREDICTION_SUFFIXES,
    ),
    Family(
        OpenAISettings, "headtohead.adapters.openai_chat:OpenAIChatAdapter", "llm", ("text", "text_pair"),
        "a chat model behind an OpenAI-compatible endpoint, prompted to answer with a label",
    ),
    Family(
        CausalLMSettings, "headtohead.adapters.causal_lm:CausalLMAdapter", "llm-local",
        ("text", "text_pair"), "a causal LM run here (a folder or a .gguf file): label log-likelihoods, or answers read",
        suffixes=(".gguf",),
    ),
    Family(
        LmEvalSettings, "headtohead.adapters.lm_eval_samples:LmEvalAdapter", None, ("text",),
        "an lm-evaluation-harness run's --log_samples files: each document right or wrong by its metric",
        holds_data=True,
    ),
    Family(
        InspectSettings, "headtohead.adapters.inspect_log:InspectAdapter", "inspect", ("text",),
        "an Inspect log (.eval/.json): each sample's score per epoch, epochs grouped by sample",
        suffixes=INSPECT_SUFFIXES, holds_data=True,
    ),
    Family(
        CascadeSettings, "headtohead.adapters.cascade:CascadeAdapter", None, _ALL,
        "two models of the run: the cheap one answers where sure, the rest deferred to the expensive one "
        "(threshold by Learn-then-Test)",
    ),
)  # fmt: skip

#: The kinds, in the registry's order.
MODEL_KINDS: tuple[str, ...] = tuple(f.kind for f in FAMILIES)


def family(kind: str) -> Family:
    """The registry row of ``kind`` (``KeyError`` for an unknown kind; the config refuses those first)."""
    for row in FAMILIES:
        if row.kind == kind:
            return row
    raise KeyError(kind)


def _own_keys(target: type[ModelConfig], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without other families' keys that say nothing; one that does: one line naming its families.

    Every entry had every family's keys before each family owned its own, so an entry written or
    dumped then (``results.json``'s ``experiment``) holds them empty (``None``) or at their family's
    default (``pretrained: false``, ``model_args: {}``): those are not given.

    Raises
    ------
    ValueError
        A key of another family has a value of its own (``"max_concurrency is a key of kind: openai only …"``).
    """
    foreign: dict[str, list[str]] = {}
    empty = set()
    for key, value in data.items():
        owners = [row for row in FAMILIES if key in row.settings.model_fields]
        if key in target.model_fields or not owners:
            continue
        if value is None or value == owners[0].settings.model_fields[key].get_default(call_default_factory=True):
            empty.add(key)
        else:
            foreign.setdefault(", ".join(row.kind for row in owners), []).append(key)
    for kinds, keys in foreign.items():
        one = len(keys) == 1
        raise ValueError(
            f"{', '.join(keys)} {'is a key' if one else 'are keys'} of kind: {kinds} only (this model is kind: "
            f"{data.get('kind')}); remove {'it' if one else 'them'}"
        )
    return {k: v for k, v in data.items() if k not in empty}


def _entry(data: Any, union: ValidatorFunctionWrapHandler) -> Any:
    """An entry checked in the words of ``models:`` before and after the union on ``kind`` builds its class.

    An unknown or missing ``kind`` is said as the field's error (pydantic's own "does not match
    any of the expected tags" is not), another family's key names its families, and the tag the
    union adds to an error's location (``models.0.onnx.max_length``) is taken out again.
    """
    if not isinstance(data, Mapping):  # an entry already built, or not a mapping at all: the union says
        return union(data)
    kind = data.get("kind")
    if "kind" not in data:
        raise ValidationError.from_exception_data(
            "ModelConfig", [{"type": "missing", "loc": ("kind",), "input": data}], hide_input=True
        )
    if kind not in MODEL_KINDS:
        said = f"unknown model kind '{kind}'{did_you_mean(str(kind), MODEL_KINDS)} (choose one of: "
        said += f"{', '.join(MODEL_KINDS)})"
        line: InitErrorDetails = {"type": "value_error", "loc": ("kind",), "input": kind, "ctx": {"error": said}}
        raise ValidationError.from_exception_data("ModelConfig", [line], hide_input=True)
    try:
        return union(_own_keys(family(str(kind)).settings, dict(data)))
    except ValidationError as exc:
        untagged = [_untagged(e, str(kind)) for e in exc.errors()]
        raise ValidationError.from_exception_data(exc.title, untagged, hide_input=True) from None


def _untagged(error: Any, kind: str) -> InitErrorDetails:
    """One error of the union with its tag taken out of the location, as it was raised."""
    loc = error["loc"][1:] if error["loc"][:1] == (kind,) else error["loc"]
    line: InitErrorDetails = {"type": error["type"], "loc": loc, "input": error["input"]}
    if "ctx" in error:
        line["ctx"] = error["ctx"]
    try:
        ValidationError.from_exception_data("probe", [line])
    except (KeyError, TypeError, ValueError):  # a validator's own error type: kept with its words
        line = {"type": PydanticCustomError(error["type"], error["msg"]), "loc": loc, "input": error["input"]}
    return line


if TYPE_CHECKING:
    AnyModel = ModelConfig
else:
    #: An entry of ``models:``: the settings class of its ``kind``, chosen by pydantic's discriminated union.
    AnyModel = Annotated[
        Union[tuple(row.settings for row in FAMILIES)],  # noqa: UP007 (a union built from the registry)
        Field(discriminator="kind"),
        WrapValidator(_entry),
    ]
# an error never repeats a value (a base_url with a password in it), as no section's does
_ANY_MODEL: TypeAdapter[ModelConfig] = TypeAdapter(
    AnyModel, config=ConfigDict(hide_input_in_errors=True, title="model entry")
)


def model_settings(entry: Mapping[str, Any] | None = None, /, **keys: Any) -> ModelConfig:
    """A model entry as its family's settings class: ``model_settings(name="m", kind="onnx", source="m.onnx")``.

    Parameters
    ----------
    entry : mapping, optional
        The entry as written (a ``models:`` item); ``keys`` are added to it.

    Returns
    -------
    ModelConfig
        The class of the entry's ``kind`` (:class:`~headtohead.config.models.onnx.OnnxSettings` …).

    Raises
    ------
    pydantic.ValidationError
        An unknown kind, another family's key, a key its family refuses.

    Examples
    --------
    >>> type(model_settings({"name": "m", "kind": "onnx", "source": "m.onnx"}, max_length=32)).__name__
    'OnnxSettings'
    """
    return _ANY_MODEL.validate_python({**(entry or {}), **keys})


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
