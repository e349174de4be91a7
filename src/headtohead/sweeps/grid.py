"""Expanding the ``sweep:`` section into the variants of one model (no torch import).

A :class:`VariantSpec` is one combination of backend, precision, compile, memory format,
sparsity and truncation length. The *parent* — fp32, eager, the model's own backend and
length — is always part of a sweep: every variant is compared with it. Axes that do not
apply to a model's data are collapsed with a note (``channels_last`` for text, ``max_length``
for images); combinations that cannot exist (``torch.compile`` of an ONNX Runtime session)
are listed as skipped, with the reason.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from headtohead.config.sweep import SweepConfig

__all__ = ["VariantSpec", "Grid", "expand_grid", "variant_name", "native_backend"]


@dataclass(frozen=True)
class VariantSpec:
    """One optimisation variant of a model.

    Attributes
    ----------
    backend : {"pytorch", "onnxruntime"}
    precision : {"fp32", "fp16", "bf16", "int8"}
    compile : bool
        ``torch.compile`` the module.
    channels_last : bool
        NHWC memory format for the module and its image batches.
    sparsity : float
        Share of Linear/Conv weights zeroed by magnitude.
    max_length : int or None
        Truncation length of a text model (``None`` for other data).
    """

    backend: str = "pytorch"
    precision: str = "fp32"
    compile: bool = False
    channels_last: bool = False
    sparsity: float = 0.0
    max_length: int | None = None

    def params(self) -> dict[str, Any]:
        """The fields as a plain dict (for records)."""
        return asdict(self)

    def differences(self, parent: VariantSpec) -> list[str]:
        """How this variant differs from ``parent``, in words for its name (``["int8", "max_length=64"]``)."""
        parts: list[str] = []
        if self.backend != parent.backend:
            parts.append(self.backend)
        if self.precision != parent.precision:
            parts.append(self.precision)
        if self.compile != parent.compile:
            parts.append("compile" if self.compile else "eager")
        if self.channels_last != parent.channels_last:
            parts.append("channels_last" if self.channels_last else "contiguous")
        if self.sparsity != parent.sparsity:
            parts.append(f"sparsity={self.sparsity:g}")
        if self.max_length != parent.max_length:
            parts.append(f"max_length={self.max_length}")
        return parts


def variant_name(model: str, spec: VariantSpec, parent: VariantSpec) -> str:
    """The name of a variant in tables and results: ``bert`` for the parent, ``bert[onnxruntime,int8]`` else.

    Examples
    --------
    >>> parent = VariantSpec(max_length=128)
    >>> variant_name("bert", VariantSpec(precision="int8", max_length=64), parent)
    'bert[int8,max_length=64]'
    >>> variant_name("bert", parent, parent)
    'bert'
    """
    parts = spec.differences(parent)
    return f"{model}[{','.join(parts)}]" if parts else model


def native_backend(kind: str) -> str:
    """The backend a model of ``kind`` runs on as loaded: ONNX Runtime for ``onnx``, PyTorch otherwise."""
    return "onnxruntime" if kind == "onnx" else "pytorch"


@dataclass(frozen=True)
class Grid:
    """The variants of one model.

    Attributes
    ----------
    parent : VariantSpec
        The reference: fp32, eager, native backend, the model's own length.
    variants : list of VariantSpec
        Every other combination to build and measure, in sweep order.
    skipped : list of (VariantSpec, str)
        Combinations that cannot exist, with the reason.
    notes : list of str
        Axes collapsed because they do not apply to this model's data.
    """

    parent: VariantSpec
    variants: list[VariantSpec]
    skipped: list[tuple[VariantSpec, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _not_applicable(spec: VariantSpec) -> str | None:
    if spec.backend == "onnxruntime" and spec.compile:
        return "torch.compile applies to the PyTorch backend; ONNX Runtime optimises the graph itself"
    if spec.backend == "onnxruntime" and spec.channels_last:
        return "channels_last is a PyTorch memory format; ONNX Runtime picks its own layouts"
    return None


def expand_grid(
    sweep: SweepConfig, *, model: str, modality: str, kind: str = "transformers", parent_max_length: int | None = None
) -> Grid:
    """All variants of one model that the sweep asks for.

    Parameters
    ----------
    sweep : SweepConfig
        The ``sweep:`` section.
    model : str
        The model's name, for notes.
    modality : str
        The dataset's modality (``text``, ``text_pair``, ``image``, ``features``).
    kind : str
        The model's kind; ``onnx`` models run on ONNX Runtime as loaded.
    parent_max_length : int, optional
        The truncation length the loaded text model uses (the parent's).

    Returns
    -------
    Grid

    Examples
    --------
    >>> grid = expand_grid(SweepConfig(precision=["fp32", "int8"], backend=["pytorch", "onnxruntime"]),
    ...                    model="bert", modality="text", parent_max_length=128)
    >>> [variant_name("bert", v, grid.parent) for v in grid.variants]
    ['bert[int8]', 'bert[onnxruntime]', 'bert[onnxruntime,int8]']
    """
    text = modality in ("text", "text_pair")
    notes: list[str] = []
    lengths: list[int | None] = [parent_max_length] if text else [None]
    if sweep.max_length is not None:
        if text:
            lengths = list(sweep.max_length)
        else:
            notes.append(f"max_length is ignored for model '{model}': it reads {modality} data, not text")
    memory_formats = list(sweep.channels_last)
    if modality != "image" and True in memory_formats:
        memory_formats = [False]
        notes.append(f"channels_last is ignored for model '{model}': it applies to image batches, not {modality}")
    parent = VariantSpec(backend=native_backend(kind), max_length=parent_max_length if text else None)
    variants: list[VariantSpec] = []
    skipped: list[tuple[VariantSpec, str]] = []
    seen = {parent}
    for backend, precision, compile_, channels_last, sparsity, max_length in itertools.product(
        sweep.backend, sweep.precision, sweep.compile, memory_formats, sweep.sparsity, lengths
    ):
        spec = replace(
            parent,
            backend=backend,
            precision=precision,
            compile=compile_,
            channels_last=channels_last,
            sparsity=float(sparsity),
            max_length=max_length,
        )
        if spec in seen:
            continue
        seen.add(spec)
        reason = _not_applicable(spec)
        if reason is None:
            variants.append(spec)
        else:
            skipped.append((spec, reason))
    return Grid(parent=parent, variants=variants, skipped=skipped, notes=notes)
