"""The keys every model entry has, and the dispatch of an entry to its family's settings class.

``ModelConfig`` is the base of every family's settings (:mod:`headtohead.config.models`):
``ModelConfig(**entry)``, ``ModelConfig.model_validate(entry)`` and an entry of
``Experiment.models`` all give the class registered for the entry's ``kind``, whose keys are
its own (``extra="forbid"``). A key of another family is refused in words that name the family.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import Field, ModelWrapValidatorHandler, field_validator, model_validator

from headtohead.config.base import Section
from headtohead.config.models.passes import PassSpec
from headtohead.errors import did_you_mean

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

    @property
    def request_bound(self) -> int | None:
        """Requests the model may have in flight at once, for the whole model; ``None``: it sends none."""
        return None

    def pass_specs(self) -> tuple[PassSpec, ...]:
        """The passes of a model measured several ways (``prompts:``, prediction files as ``passes:``), in order.

        Empty for a model measured once (the usual case). The pipeline plans one unit of work per pass
        from this alone; how a pass is made is its family's (``adapters/prompt_variants.py``).
        """
        return ()

    def pass_source(self, index: int | None) -> str | None:
        """The file pass ``index`` reads, for a family whose passes are stored files (``None``: they are not)."""
        return None

    #: Kind → its settings class; the registry (:data:`headtohead.config.models.FAMILIES`) fills it.
    families: ClassVar[Mapping[str, type[ModelConfig]]] = {}

    def __new__(cls, *args: Any, **data: Any) -> ModelConfig:
        # ModelConfig(kind="onnx", …) builds the onnx family's class, which then validates the keys
        target = ModelConfig.families.get(str(data.get("kind"))) if cls is ModelConfig else None
        return super().__new__(target or cls)

    @model_validator(mode="wrap")
    @classmethod
    def _family(cls, data: Any, handler: ModelWrapValidatorHandler[ModelConfig]) -> ModelConfig:
        if not isinstance(data, dict):
            return handler(data)
        target = ModelConfig.families.get(str(data.get("kind"))) if cls is ModelConfig else cls
        if target is None:  # an unknown kind: the base's own check names the kinds
            return handler(data)
        data = _own_keys(target, data)
        return handler(data) if target is cls else target.model_validate(data)

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, kind: str) -> str:
        kinds = list(ModelConfig.families)
        if kind not in kinds:
            raise ValueError(
                f"unknown model kind '{kind}'{did_you_mean(kind, kinds)} (choose one of: {', '.join(kinds)})"
            )
        return kind


def _own_keys(target: type[ModelConfig], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without other families' keys that say nothing; one that does: one line naming its family.

    Every entry had every family's keys before each family owned its own, so an entry written or
    dumped then (``results.json``'s ``experiment``) holds them empty (``None``) or at their family's
    default (``pretrained: false``): those are not given.

    Raises
    ------
    ValueError
        A key of another family has a value of its own (``"max_concurrency is a key of kind: openai only …"``).
    """
    foreign: dict[str, list[str]] = {}
    empty = set()
    for key, value in data.items():
        owners = [kind for kind, settings in ModelConfig.families.items() if key in settings.model_fields]
        if key in target.model_fields or not owners:
            continue
        if value is None or value == ModelConfig.families[owners[0]].model_fields[key].default:
            empty.add(key)
        else:
            foreign.setdefault(", ".join(owners), []).append(key)
    for kinds, keys in foreign.items():
        one = len(keys) == 1
        raise ValueError(
            f"{', '.join(keys)} {'is a key' if one else 'are keys'} of kind: {kinds} only (this model is kind: "
            f"{data.get('kind')}); remove {'it' if one else 'them'}"
        )
    return {k: v for k, v in data.items() if k not in empty}
