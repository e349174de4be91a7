"""Variants of a loaded model behind the :class:`~headtohead.adapters.base.ModelAdapter` interface.

See ``docs/sweeps.md``, the section of this title.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from headtohead.adapters.base import LoadContext, ModelAdapter
from headtohead.config.schema import ModelConfig
from headtohead.errors import ModelError
from headtohead.sweeps.capabilities import backend_unsupported, compile_unsupported, precision_unsupported
from headtohead.sweeps.grid import VariantSpec
from headtohead.sweeps.transforms import INT8_API, VariantError, prune_module, quantize_int8, state_numbers

__all__ = ["VariantAdapter", "VariantError", "BuildOptions", "build_variant"]

_ORT_INT8_API = "onnxruntime.quantization.quantize_dynamic (QInt8 weights, MatMulInteger)"


@dataclass
class BuildOptions:
    """What :func:`build_variant` needs besides the parent and the spec.

    Attributes
    ----------
    workdir : Path
        Where ONNX files are written.
    check_batches : list of list
        Raw example batches (of different sizes) for the ONNX-vs-PyTorch check; the first is
        also the export example.
    atol, rtol : float
        Tolerance of the ONNX check.
    opset : int or None
    threads : int or None
        ONNX Runtime intra-op threads (default: torch's).
    exports : dict
        Checked ONNX exports (or why they failed) by sparsity, shared by the variants of one parent.
    quantized : dict
        Cache of int8 files by their fp32 source.
    """

    workdir: Path
    check_batches: list[list[Any]]
    atol: float = 1e-3
    rtol: float = 1e-3
    opset: int | None = None
    threads: int | None = None
    exports: dict[float, tuple[Path, str] | VariantError] = field(default_factory=dict)
    quantized: dict[Path, Path] = field(default_factory=dict)


class VariantAdapter(ModelAdapter):
    """A parent model run another way (see the module docstring). Built by :func:`build_variant`.

    Attributes
    ----------
    parent : ModelAdapter
    spec : VariantSpec
    inner : ModelAdapter
        A shallow copy of the parent holding this variant's module and ``max_length``.
    session : onnxruntime.InferenceSession or None
        Set for the ONNX Runtime backend.
    notes : list of str
        How it was made (API used, achieved sparsity, ONNX check), for the results.
    """

    kind: ClassVar[str] = "variant"

    def __init__(
        self,
        parent: ModelAdapter,
        spec: VariantSpec,
        name: str,
        *,
        inner: ModelAdapter,
        session: Any = None,
        onnx_path: Path | None = None,
        notes: Sequence[str] = (),
    ) -> None:
        super().__init__(parent.config.model_copy(update={"name": name}), parent.context)
        self.parent, self.spec, self.inner, self.session = parent, spec, inner, session
        self.label_names = parent.label_names
        self.output_kind = parent.output_kind
        self.tokenizer = getattr(parent, "tokenizer", None)  # the speed engine pads with its pad id
        self.max_length = getattr(inner, "max_length", None)
        self.module = None if session is not None else inner.module
        if session is not None:
            self.device = "cpu" if session.get_providers()[0] == "CPUExecutionProvider" else parent.device
        self.notes = list(notes)
        self._autocast = {"bf16": "bfloat16", "fp16": "float16"}.get(spec.precision) if session is None else None
        self._weights: tuple[int, int] | None = None
        if onnx_path is not None:
            from headtohead.adapters.onnx_runtime import onnx_weight_stats

            self._weights = onnx_weight_stats(onnx_path)

    @classmethod
    def load(cls, config: ModelConfig, context: LoadContext) -> VariantAdapter:
        raise ModelError(
            f"model '{config.name}': variants are built by h2h sweep from a loaded model, not loaded "
            f"from a config; list the model under models: and sweep it"
        )

    def preprocess(self, examples: Sequence[Any]) -> Any:
        """The parent's preprocessing, at this variant's ``max_length``."""
        return self.inner.preprocess(examples)

    def to_device(self, inputs: Any) -> Any:
        """Tensors to the device (NHWC for channels_last); the ONNX Runtime input dict for sessions."""
        if self.session is not None:
            from headtohead.adapters.onnx_runtime import session_feed

            return session_feed(self.session, inputs, model=self.name)
        moved = self.inner.to_device(inputs)
        if self.spec.channels_last and getattr(moved, "ndim", 0) == 4:
            import torch

            moved = moved.contiguous(memory_format=torch.channels_last)
        return moved

    def forward(self, inputs: Any) -> Any:
        """Scores ``(batch, n_outputs)``: the session's first output, or the module under autocast."""
        if self.session is not None:
            return self.session.run([self.session.get_outputs()[0].name], inputs)[0]
        with self._precision():
            return self.inner.forward(inputs)

    @contextlib.contextmanager
    def _precision(self) -> Iterator[None]:
        if self._autocast is None:
            yield
            return
        import torch

        device_type = "cuda" if str(self.device).startswith("cuda") else str(self.device)
        with torch.autocast(device_type=device_type, dtype=getattr(torch, self._autocast)):
            yield

    def num_parameters(self) -> int | None:
        if self._weights is not None:
            return self._weights[0]
        return state_numbers(self.module)[0] if self.module is not None else self.parent.num_parameters()

    def parameter_bytes(self) -> int | None:
        if self._weights is not None:
            return self._weights[1]
        return state_numbers(self.module)[1] if self.module is not None else self.parent.parameter_bytes()


def _rebind(parent: ModelAdapter, module: Any, max_length: int | None) -> ModelAdapter:
    """A shallow copy of ``parent`` that uses ``module`` (every attribute holding the old one) and ``max_length``."""
    inner = copy.copy(parent)
    inner.warnings = []
    if module is not parent.module and parent.module is not None:
        for key, value in vars(parent).items():
            if value is parent.module:
                setattr(inner, key, module)
    if max_length is not None and getattr(parent, "max_length", None) is not None:
        inner.max_length = max_length  # type: ignore[attr-defined]
    return inner


def _check_capabilities(spec: VariantSpec, parent_spec: VariantSpec, parent: ModelAdapter) -> None:
    device = str(parent.device)
    for reason in (
        backend_unsupported(spec.backend, device),
        precision_unsupported(spec.precision, device, spec.backend),
        compile_unsupported(device) if spec.compile else None,
    ):
        if reason:
            raise VariantError("capability", reason)
    if spec.max_length is not None and spec.max_length != parent_spec.max_length:
        limit = _position_limit(parent)
        if limit is not None and spec.max_length > limit:
            raise VariantError(
                "capability",
                f"max_length {spec.max_length} is beyond what model '{parent.name}' can read ({limit} positions)",
            )
    module_changes = spec.compile or spec.channels_last or spec.sparsity > 0
    onnx_int8_only = parent_spec.backend == spec.backend == "onnxruntime" and not module_changes
    torch_changes = module_changes or spec.precision != "fp32" or spec.backend != parent_spec.backend
    if parent.module is None and torch_changes and not onnx_int8_only:
        raise VariantError(
            "capability",
            f"model '{parent.name}' (kind {parent.config.kind}) has no PyTorch module; "
            f"only batch_size, max_length and, for onnx models, int8 can be swept",
        )


def _position_limit(parent: ModelAdapter) -> int | None:
    if parent.config.kind == "transformers" and parent.module is not None:
        from headtohead.adapters.hf_transformers import position_limit

        return position_limit(parent.module)
    stated = getattr(getattr(parent, "tokenizer", None), "model_max_length", None)
    return stated if isinstance(stated, int) and stated < 10**9 else None


def build_variant(
    parent: ModelAdapter, spec: VariantSpec, parent_spec: VariantSpec, *, name: str, options: BuildOptions
) -> VariantAdapter:
    """Build the variant ``spec`` of a loaded ``parent``.

    Parameters
    ----------
    parent : ModelAdapter
        The loaded model, in eval mode; its module is not modified (pruning and NHWC work on a copy).
    spec, parent_spec : VariantSpec
        The variant, and the parent's own spec (for what differs).
    name : str
        The variant's name (``bert[int8]``).
    options : BuildOptions

    Returns
    -------
    VariantAdapter

    Raises
    ------
    VariantError
        Not available here (``capability``), or building, exporting, checking or quantising failed.
    """
    _check_capabilities(spec, parent_spec, parent)
    max_length = spec.max_length if spec.max_length != parent_spec.max_length else None
    notes: list[str] = []
    if parent_spec.backend == "onnxruntime":
        return _from_onnx_parent(parent, spec, name, max_length, options)
    module = parent.module
    if spec.sparsity > 0 or spec.channels_last:
        module = copy.deepcopy(module)  # both change the module in place; the parent must stay as it is
    if spec.sparsity > 0:
        zeros, total = prune_module(module, spec.sparsity)
        notes.append(
            f"magnitude pruning (L1, unstructured, per layer): {zeros:,} of {total:,} Linear/Conv weights "
            f"are zero ({zeros / total:.1%})"
        )
    if spec.backend == "onnxruntime":
        return _onnx_variant(parent, spec, name, module, max_length, options, notes)
    import torch

    if spec.precision == "int8":
        module = quantize_int8(module)
        notes.append(f"int8 via {INT8_API}")
    if spec.channels_last:
        module = module.to(memory_format=torch.channels_last)
    if spec.compile:
        module = torch.compile(module)
        notes.append("torch.compile (inductor); compilation happens on the first call of the quality pass")
    if spec.precision in ("bf16", "fp16"):
        notes.append(f"{spec.precision} via torch.autocast on {parent.device} (weights stay fp32)")
    return VariantAdapter(parent, spec, name, inner=_rebind(parent, module, max_length), notes=notes)


def _onnx_variant(
    parent: ModelAdapter,
    spec: VariantSpec,
    name: str,
    module: Any,
    max_length: int | None,
    options: BuildOptions,
    notes: list[str],
) -> VariantAdapter:
    """Export (once per sparsity), check against PyTorch, optionally quantise, open a session."""
    from headtohead.adapters.onnx_runtime import create_session

    stem = f"{parent.name}-sparsity{spec.sparsity:g}" if spec.sparsity else parent.name
    if spec.sparsity not in options.exports:
        try:
            options.exports[spec.sparsity] = _export_and_check(
                parent, module, name, options, options.workdir / f"{_safe(stem)}.onnx"
            )
        except VariantError as exc:
            options.exports[spec.sparsity] = exc  # the int8 variant of a failed export fails the same way
    cached = options.exports[spec.sparsity]
    if isinstance(cached, VariantError):
        raise VariantError(cached.stage, cached.reason)
    path, summary = cached
    notes.append(f"exported with torch.onnx.export(dynamo=True) to {path.name}; {summary}")
    if spec.precision == "int8":
        path = _quantized(path, options.workdir / f"{_safe(stem)}-int8.onnx", options)
        notes.append(f"int8 via {_ORT_INT8_API}")
    session = create_session(path, device=str(parent.device), model=name, threads=options.threads)
    return VariantAdapter(
        parent,
        spec,
        name,
        inner=_rebind(parent, parent.module, max_length),
        session=session,
        onnx_path=path,
        notes=notes,
    )


def _export_and_check(
    parent: ModelAdapter, module: Any, name: str, options: BuildOptions, path: Path
) -> tuple[Path, str]:
    """Export ``module`` (fp32) and compare ONNX Runtime with PyTorch on the check batches."""
    from headtohead.adapters.onnx_runtime import create_session
    from headtohead.sweeps.onnx_export import ExportError, check_against_torch, export_onnx

    reference = _rebind(parent, module, None)
    batches = [reference.preprocess(b) for b in options.check_batches]
    try:
        export_onnx(module, batches[0], path, label_names=parent.label_names, opset=options.opset)
    except ExportError as exc:
        raise VariantError("export", str(exc)) from exc
    session = create_session(path, device=str(parent.device), model=name, threads=options.threads)
    try:
        check = check_against_torch(
            session, reference.forward, batches, atol=options.atol, rtol=options.rtol, model=name
        )
    except ExportError as exc:
        raise VariantError("onnx-check", str(exc)) from exc
    if not check.passed:
        raise VariantError("onnx-check", check.summary())
    return path, check.summary()


def _from_onnx_parent(
    parent: ModelAdapter, spec: VariantSpec, name: str, max_length: int | None, options: BuildOptions
) -> VariantAdapter:
    """A variant of a ``kind: onnx`` model: its own file, int8-quantised by ONNX Runtime when asked."""
    from headtohead.adapters.onnx_runtime import create_session

    path: Path = parent.path  # type: ignore[attr-defined]
    notes = []
    if spec.precision == "int8":
        path = _quantized(path, options.workdir / f"{_safe(parent.name)}-int8.onnx", options)
        notes.append(f"int8 via {_ORT_INT8_API}")
    session = create_session(path, device=str(parent.device), model=name, threads=options.threads)
    return VariantAdapter(
        parent, spec, name, inner=_rebind(parent, None, max_length), session=session, onnx_path=path, notes=notes
    )


def _quantized(path: Path, target: Path, options: BuildOptions) -> Path:
    """ONNX Runtime's int8 version of ``path`` at ``target`` (made once per sweep, shared by the variants)."""
    from headtohead.sweeps.onnx_export import ExportError, quantize_onnx_int8

    if path not in options.quantized:
        try:
            options.quantized[path] = quantize_onnx_int8(path, target)
        except ExportError as exc:
            raise VariantError("quantize", str(exc)) from exc
    return options.quantized[path]


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)
