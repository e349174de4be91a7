"""Export a PyTorch classifier to ONNX, check it against PyTorch, and quantise it to int8.

See ``docs/sweeps.md``, "ONNX Runtime".
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import tempfile
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from headtohead.adapters.onnx_runtime import LABELS_METADATA_KEY, session_feed
from headtohead.engines.evaluate import scores_to_numpy

__all__ = ["ExportError", "OnnxCheck", "export_onnx", "check_against_torch", "quantize_onnx_int8"]


class ExportError(RuntimeError):
    """The exporter or the quantiser failed; the message is one line for the cell's reason."""


@dataclass(frozen=True)
class OnnxCheck:
    """How closely ONNX Runtime reproduced PyTorch's logits.

    Attributes
    ----------
    max_abs_diff : float
        Largest ``|onnx − torch|`` over all checked logits.
    worst_excess : float
        Largest ``|onnx − torch| − (atol + rtol·|torch|)``; above 0 means a mismatch.
    n_batches : int
    shapes : list of tuple
        The input shapes checked (batch, sequence …).
    atol, rtol : float
    """

    max_abs_diff: float
    worst_excess: float
    n_batches: int
    shapes: list[tuple[int, ...]]
    atol: float
    rtol: float

    @property
    def passed(self) -> bool:
        return self.worst_excess <= 0.0

    def summary(self) -> str:
        """``ONNX check: max |Δlogit| 3.8e-06 over 3 batches (tolerance 1e-3 + 1e-3·|logit|)``."""
        verdict = "" if self.passed else " — MISMATCH, not measured"
        return (
            f"ONNX check: max |Δlogit| {self.max_abs_diff:.2g} over {self.n_batches} batches of shapes "
            f"{', '.join('×'.join(map(str, s)) for s in self.shapes)} (tolerance {self.atol:g} + "
            f"{self.rtol:g}·|logit|){verdict}"
        )


class _Logits:
    """Wraps a module so its graph takes positional tensors and returns bare logits."""

    @staticmethod
    def build(module: Any, names: Sequence[str] | None) -> Any:
        import torch

        # torch is read as Any (no stubs followed); the ignore is unused where subclassing Any is allowed
        class Logits(torch.nn.Module):  # type: ignore[misc, unused-ignore]
            def __init__(self) -> None:
                super().__init__()
                self.inner = module

            def forward(self, *args: Any) -> Any:
                out = self.inner(**dict(zip(names, args, strict=True))) if names else self.inner(*args)
                return getattr(out, "logits", out)

        return Logits().eval()


def _dynamic_axes(tensor: Any) -> dict[int, Any]:
    from torch.export import Dim

    # token inputs (batch, sequence): both vary; images (batch, C, H, W): the batch varies
    return {0: Dim.DYNAMIC, 1: Dim.DYNAMIC} if tensor.ndim == 2 and not tensor.is_floating_point() else {0: Dim.DYNAMIC}


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Hide the exporter's progress prints, warnings and graph dumps; a failure keeps its message."""
    loggers = [logging.getLogger(name) for name in ("torch", "onnxscript", "onnx_ir")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        with (
            contextlib.redirect_stdout(io.StringIO()),
            contextlib.redirect_stderr(io.StringIO()),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("ignore")  # the exporter's advice is for its developers, not for users
            yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def export_onnx(
    module: Any, example: Any, path: str | Path, *, label_names: Sequence[str] | None = None, opset: int | None = None
) -> Path:
    """Export ``module`` to a single ``.onnx`` file with dynamic batch (and sequence) axes.

    Parameters
    ----------
    module : torch.nn.Module
        The classifier (its output may be a tensor or have ``.logits``); in eval mode.
    example : torch.Tensor or mapping of str to torch.Tensor
        One preprocessed batch (at least 2 examples, so the batch axis is not fixed to 1).
    path : str or Path
        The file to write.
    label_names : sequence of str, optional
        Stored in the file's metadata (``h2h.label_names``).
    opset : int, optional
        ONNX opset; the exporter's default when ``None``.

    Returns
    -------
    Path

    Raises
    ------
    ExportError
        The exporter failed (an operator it cannot convert, data-dependent control flow …).
    """
    import onnx
    import torch

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    names = list(example) if isinstance(example, Mapping) else None
    args = tuple(example[n] for n in names) if names else (example,)
    dynamic = (tuple(_dynamic_axes(a) for a in args),)
    kwargs = {"opset_version": opset} if opset else {}
    try:
        with _quiet():
            torch.onnx.export(
                _Logits.build(module, names),
                args,
                str(path),
                dynamo=True,
                external_data=False,
                dynamic_shapes=dynamic,
                input_names=names or ["input"],
                output_names=["logits"],
                verbose=False,
                report=False,
                **kwargs,
            )
    except Exception as exc:  # torch.export / onnxscript raise many types; the cell records the reason
        raise ExportError(f"ONNX export failed ({type(exc).__name__}: {_summary(exc)})") from exc
    if label_names:
        proto = onnx.load(str(path))
        entry = proto.metadata_props.add()
        entry.key, entry.value = LABELS_METADATA_KEY, json.dumps(list(label_names))
        onnx.save(proto, str(path))
    return path


def check_against_torch(
    session: Any, reference: Callable[[Any], Any], batches: Sequence[Any], *, atol: float, rtol: float, model: str
) -> OnnxCheck:
    """Compare ONNX Runtime's logits with PyTorch's on the same preprocessed ``batches``.

    Parameters
    ----------
    session : onnxruntime.InferenceSession
    reference : callable
        The PyTorch forward pass (preprocessed batch → logits).
    batches : sequence
        Preprocessed batches (tensors or mappings of tensors), ideally of several shapes.
    atol, rtol : float
        A logit passes when ``|onnx − torch| ≤ atol + rtol·|torch|``.
    model : str
        For messages.

    Returns
    -------
    OnnxCheck
    """
    output = session.get_outputs()[0].name
    max_abs, worst, shapes = 0.0, -np.inf, []
    for batch in batches:
        expected = scores_to_numpy(reference(batch))
        got = np.asarray(session.run([output], session_feed(session, batch, model=model))[0], dtype=np.float64)
        if got.shape != expected.shape:
            raise ExportError(f"the ONNX graph returned shape {got.shape} where PyTorch returned {expected.shape}")
        diff = np.abs(got - expected)
        max_abs = max(max_abs, float(diff.max(initial=0.0)))
        worst = max(worst, float((diff - (atol + rtol * np.abs(expected))).max(initial=-np.inf)))
        first = next(iter(batch.values())) if isinstance(batch, Mapping) else batch
        shapes.append(tuple(int(d) for d in first.shape))
    if not np.isfinite(max_abs):
        worst = np.inf
    return OnnxCheck(
        max_abs_diff=max_abs, worst_excess=float(worst), n_batches=len(batches), shapes=shapes, atol=atol, rtol=rtol
    )


def quantize_onnx_int8(source: str | Path, target: str | Path) -> Path:
    """ONNX Runtime's dynamic int8 quantisation of ``source`` (weights int8, activations quantised on the fly).

    The dynamo exporter stores shape annotations (``value_info``) that the quantiser's own
    shape inference contradicts; they are dropped first (ONNX Runtime infers shapes again
    when it loads the file).

    Raises
    ------
    ExportError
        The quantiser failed.
    """
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    target = Path(target)
    proto = onnx.load(str(source))
    del proto.graph.value_info[:]
    with tempfile.TemporaryDirectory(prefix="h2h-quant-") as tmp:
        plain = Path(tmp) / "plain.onnx"
        onnx.save(proto, str(plain))
        logging.disable(logging.WARNING)  # "consider pre-processing" advice, printed on the root logger
        try:
            quantize_dynamic(str(plain), str(target), weight_type=QuantType.QInt8)
        except Exception as exc:  # the quantiser's failures are a cell's reason, not a crash
            raise ExportError(f"ONNX Runtime int8 quantisation failed ({type(exc).__name__}: {_summary(exc)})") from exc
        finally:
            logging.disable(logging.NOTSET)
    return target


def _summary(exc: BaseException) -> str:
    text = str(exc)
    for marker in ("Exception summary", "## Exception summary"):
        if marker in text:  # the exporter wraps the real cause in a long report
            text = text.split(marker, 1)[1]
    lines = [line.strip(" #") for line in text.strip().splitlines() if line.strip(" #")]
    return lines[0][:240] if lines else type(exc).__name__
