"""The keys every model entry has, and the dispatch of an entry to its family's settings class.

``ModelConfig`` is the base of every family's settings (:mod:`headtohead.config.models`):
``ModelConfig(**entry)``, ``ModelConfig.model_validate(entry)`` and an entry of
``Experiment.models`` all give the class registered for the entry's ``kind``, whose keys are
its own (``extra="forbid"``). A key of another family is refused in words that name the family.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, ModelWrapValidatorHandler, field_validator, model_validator

from headtohead.config.base import Section

__all__ = ["ModelConfig"]


class ModelConfig(Section):
    """One candidate model: the keys of every family (each family's class adds its own)."""

    name: str = Field(min_length=1, description="Unique name used in tables and results.")
    kind: str = Field(description="Model family (README.md lists the kinds).")
    source: str = Field(
        min_length=1,
        description="Hub id, local folder, checkpoint file, architecture "
        "name (timm/torchvision), 'package.module:factory' (python), a prediction file "
        "(predictions: .csv/.tsv/.jsonl/.parquet) or the model name the server expects (openai).",
    )
    checkpoint: str | None = Field(
        default=None,
        description="Weights file for an architecture (.safetensors, or a torch file loaded with weights_only=True).",
    )
    label_names: list[str] | None = Field(
        default=None, description="Names of the model's outputs, in output order, when its files do not carry them."
    )
    model_args: dict[str, Any] = Field(
        default_factory=dict, description="Extra keyword arguments for the model constructor / factory."
    )
    allow_pickle: bool = Field(default=False, description="Allow loading pickled objects (can run code).")
    trust_remote_code: bool = Field(default=False, description="transformers: run code shipped with the model.")
    revision: str | None = Field(default=None, description="Hub revision (branch, tag or commit).")

    def __new__(cls, *args: Any, **data: Any) -> ModelConfig:
        # ModelConfig(kind="onnx", …) builds the onnx family's class, which then validates the keys
        target = _settings_class(data.get("kind")) if cls is ModelConfig else None
        return super().__new__(target or cls)

    @model_validator(mode="wrap")
    @classmethod
    def _family(cls, data: Any, handler: ModelWrapValidatorHandler[ModelConfig]) -> ModelConfig:
        if not isinstance(data, dict):
            return handler(data)
        target = _settings_class(data.get("kind")) if cls is ModelConfig else cls
        if target is None:  # an unknown kind: the base's own check names the kinds
            return handler(data)
        data = _own_keys(target, data)
        return handler(data) if target is cls else target.model_validate(data)

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, kind: str) -> str:
        from headtohead.config.models import MODEL_KINDS  # the registry imports this module
        from headtohead.errors import did_you_mean

        if kind not in MODEL_KINDS:
            raise ValueError(
                f"unknown model kind '{kind}'{did_you_mean(kind, MODEL_KINDS)} "
                f"(choose one of: {', '.join(MODEL_KINDS)})"
            )
        return kind


def _settings_class(kind: Any) -> type[ModelConfig] | None:
    """The settings class registered for ``kind`` (``None`` for an unknown kind)."""
    from headtohead.config.models import FAMILIES  # the registry imports every family, which import this module

    row = next((f for f in FAMILIES if f.kind == kind), None)
    return row.settings if row is not None else None


def _own_keys(target: type[ModelConfig], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without other families' keys left empty (``None``); one given: one line naming its family.

    Raises
    ------
    ValueError
        A key of another family has a value (``"max_concurrency is a key of kind: openai only …"``).
    """
    from headtohead.config.models import FAMILIES

    foreign: dict[str, list[str]] = {}
    empty = set()
    for key, value in data.items():
        owners = [f.kind for f in FAMILIES if key in f.settings.model_fields]
        if key in target.model_fields or not owners:
            continue
        if value is None:
            empty.add(key)  # every entry had every family's key before families owned them: None is "not given"
        else:
            foreign.setdefault(", ".join(owners), []).append(key)
    for kinds, keys in foreign.items():
        one = len(keys) == 1
        raise ValueError(
            f"{', '.join(keys)} {'is a key' if one else 'are keys'} of kind: {kinds} only (this model is kind: "
            f"{data.get('kind')}); remove {'it' if one else 'them'}"
        )
    return {k: v for k, v in data.items() if k not in empty}
