"""The PyTorch transformations that make variants: pruning, int8 quantisation, and their size.

Each works on a module the caller owns (a copy when the parent must stay unchanged) and
raises :class:`VariantError` with the stage and a one-line reason when it cannot.
"""

from __future__ import annotations

import warnings
from typing import Any

__all__ = ["VariantError", "prune_module", "quantize_int8", "state_numbers", "INT8_API"]

#: The API that makes PyTorch int8 variants (docs/sweeps.md says why not torchao's ``quantize_``).
INT8_API = "torch.ao.quantization.quantize_dynamic (Linear layers, qint8 weights, dynamic activations)"


class VariantError(Exception):
    """A variant could not be built. ``stage`` says where, ``reason`` why (one line)."""

    def __init__(self, stage: str, reason: str) -> None:
        super().__init__(f"{stage}: {reason}")
        self.stage = stage
        self.reason = reason


def state_numbers(module: Any) -> tuple[int, int]:
    """``(values, bytes)`` of a module's state: int8 packed weights count too (they are not Parameters)."""
    count = size = 0

    def add(value: Any) -> None:
        nonlocal count, size
        if hasattr(value, "numel") and hasattr(value, "element_size"):
            count += int(value.numel())
            size += int(value.numel()) * int(value.element_size())
        elif isinstance(value, (tuple, list)):
            for item in value:
                add(item)

    for value in getattr(module, "_orig_mod", module).state_dict().values():
        add(value)
    return count, size


def prune_module(module: Any, amount: float) -> tuple[int, int]:
    """Zero the ``amount`` smallest-magnitude weights of every Linear/Conv layer, in place.

    L1 unstructured pruning per layer (``torch.nn.utils.prune.l1_unstructured``), made
    permanent (``prune.remove``), so the weights are ordinary dense tensors with zeros.

    Returns
    -------
    zeros, total : int
        Zero weights and all weights of the pruned layers afterwards.

    Raises
    ------
    VariantError
        The module has no Linear/Conv layer.
    """
    import torch
    from torch.nn.utils import prune

    kinds = (torch.nn.Linear, torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d)
    layers = [m for m in module.modules() if isinstance(m, kinds) and getattr(m, "weight", None) is not None]
    if not layers:
        raise VariantError("build", "sparsity prunes Linear/Conv weights, and this model has none")
    zeros = total = 0
    with torch.no_grad():
        for layer in layers:
            prune.l1_unstructured(layer, "weight", amount=amount)
            prune.remove(layer, "weight")
            zeros += int((layer.weight == 0).sum())
            total += layer.weight.numel()
    return zeros, total


def quantize_int8(module: Any) -> Any:
    """A copy of ``module`` with its Linear layers dynamically quantised to int8 (CPU).

    ``torch.ao.quantization`` warns that it is deprecated in favour of torchao; the warning
    is silenced here because the choice is deliberate (docs/sweeps.md) and recorded in the
    results. If a future torch removes the API, the cell fails with that reason.
    """
    import torch

    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message=r".*torch\.ao\.quantization is deprecated", category=DeprecationWarning
        )
        warnings.filterwarnings("ignore", message=r".*quantized tensor creation functions", category=UserWarning)
        try:
            from torch.ao.quantization import quantize_dynamic
        except ImportError as exc:
            raise VariantError(
                "build", f"torch.ao.quantization.quantize_dynamic is not available in torch {torch.__version__} ({exc})"
            ) from exc
        return quantize_dynamic(module, {torch.nn.Linear}, dtype=torch.qint8)
