"""What this machine can run: precisions, backends and compilation per device, and OOM detection.

Each check answers ``None`` when the option is available and otherwise the *reason* it is
not, in words a user can act on; the sweep records that reason on the cell and moves on.
torch and onnxruntime are imported inside the functions, so the module is light to import.
"""

from __future__ import annotations

import shutil

from headtohead.runtime.devices import get_backend, is_cuda
from headtohead.runtime.extras import extra_for

__all__ = ["precision_unsupported", "backend_unsupported", "compile_unsupported", "is_out_of_memory", "release_memory"]

# What torch's CPU allocator and ONNX Runtime say when memory runs out (not RuntimeError-typed in ORT).
_OOM_MARKERS = (
    "out of memory",
    "can't allocate memory",
    "cannot allocate memory",
    "failed to allocate memory",
    "bad_alloc",
)


def precision_unsupported(precision: str, device: str, backend: str = "pytorch") -> str | None:
    """Why ``precision`` cannot run on ``device`` with ``backend``, or ``None`` when it can.

    Examples
    --------
    >>> precision_unsupported("fp32", "cpu") is None
    True
    >>> precision_unsupported("fp16", "cpu")
    'fp16 autocast runs on CUDA here, not on cpu; use bf16 on the CPU'
    """
    if precision == "fp32":
        return None
    if backend == "onnxruntime":
        if precision == "int8":
            return None  # ONNX Runtime's own dynamic quantisation of the exported graph
        return (
            f"{precision} is not available with the onnxruntime backend (the export is float32; int8 uses "
            f"ONNX Runtime's dynamic quantisation)"
        )
    if precision == "fp16":
        return None if is_cuda(device) else f"fp16 autocast runs on CUDA here, not on {device}; use bf16 on the CPU"
    if precision == "bf16":
        if is_cuda(device):
            import torch

            index = int(device.split(":", 1)[1]) if ":" in device else 0
            with torch.cuda.device(index):
                if not torch.cuda.is_bf16_supported():
                    return f"{get_backend().cuda_device_name(index)} does not support bf16; use fp16"
            return None
        return None if device == "cpu" else f"bf16 autocast is not supported on {device} here; use fp32"
    if precision == "int8":
        if device != "cpu":
            return (
                f"int8 dynamic quantisation (torch.ao) runs on the CPU only, not on {device}; sweep int8 with "
                f"eval.device: cpu or backend onnxruntime"
            )
        import torch

        if torch.backends.quantized.engine in (None, "none"):
            return "this torch build has no quantized CPU engine (fbgemm/x86/qnnpack); int8 cannot run"
        return None
    return f"unknown precision '{precision}'"


def backend_unsupported(backend: str, device: str) -> str | None:
    """Why ``backend`` cannot run on ``device``, or ``None`` when it can.

    Examples
    --------
    >>> backend_unsupported("pytorch", "cpu") is None
    True
    """
    if backend == "pytorch":
        return None
    if backend != "onnxruntime":
        return f"unknown backend '{backend}'"
    try:
        import onnxruntime
    except ImportError:
        return f'onnxruntime is not installed; pip install "headtohead[{extra_for("onnxruntime")}]"'
    for package in ("onnx", "onnxscript"):
        try:
            __import__(package)
        except ImportError:
            return f'exporting to ONNX needs the {package} package; pip install "headtohead[{extra_for(package)}]"'
    if is_cuda(device) and "CUDAExecutionProvider" not in onnxruntime.get_available_providers():
        return "this onnxruntime has no CUDA provider; install onnxruntime-gpu to run it on the GPU"
    if device not in ("cpu",) and not is_cuda(device):
        return f"ONNX Runtime has no provider for {device} here"
    return None


def compile_unsupported(device: str) -> str | None:
    """Why ``torch.compile`` cannot be used on ``device``, or ``None`` when it can be tried.

    Inductor generates C++ on the CPU, so a C++ compiler must be on ``PATH``; other problems
    only show when compiling, and the sweep reports them then.
    """
    if device == "cpu" and not any(shutil.which(cc) for cc in ("g++", "c++", "clang++")):
        return "torch.compile on the CPU needs a C++ compiler (g++ or clang++) on PATH"
    return None


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is an out-of-memory error: :func:`headtohead.runtime.faults.is_out_of_memory`'s cases
    (``MemoryError``, CUDA/MPS ``OutOfMemoryError``) plus the CPU allocator's and ONNX Runtime's messages.

    Examples
    --------
    >>> is_out_of_memory(RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"))
    True
    >>> is_out_of_memory(ValueError("shapes do not match"))
    False
    """
    from headtohead.runtime.faults import is_out_of_memory as host_or_device_oom

    if host_or_device_oom(exc):
        return True
    text = str(exc).lower()
    return any(marker in text for marker in _OOM_MARKERS)


def release_memory(device: str) -> None:
    """Collect garbage and, on CUDA, return cached blocks, so the next try starts from a clean allocator."""
    import gc

    gc.collect()
    if is_cuda(device):
        import torch

        torch.cuda.empty_cache()
