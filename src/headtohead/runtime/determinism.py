"""``--deterministic``: torch's deterministic algorithms on, and every op that refuses named.

See ``docs/architecture.md``, the section of this title.
"""

from __future__ import annotations

import contextlib
import os
import re
import warnings
from collections.abc import Iterator

__all__ = ["deterministic_algorithms", "recording_refusals", "refused_op", "refusal_warning", "REFUSAL_PREFIX"]

# torch: "put_ does not have a deterministic implementation, but you set 'torch.use_deterministic_algorithms(...)'"
_REFUSAL = re.compile(r"^\s*(?P<op>\S+?)\s+does not have a deterministic implementation")
# cuBLAS needs a fixed workspace to be deterministic on CUDA >= 10.2; it must be set before cuBLAS starts.
_CUBLAS_ENV = ("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

#: Start of the model warning that names a refusing op (reports look for it).
REFUSAL_PREFIX = "--deterministic:"


def refused_op(message: str) -> str | None:
    """The op named in torch's "does not have a deterministic implementation" message, else ``None``.

    Examples
    --------
    >>> refused_op("put_ does not have a deterministic implementation, but you set ...")
    'put_'
    >>> refused_op("something else") is None
    True
    """
    match = _REFUSAL.match(message)
    return match.group("op") if match else None


def refusal_warning(model: str, op: str) -> str:
    """The warning stored with a model whose pass used ``op`` under ``--deterministic``."""
    return (
        f"{REFUSAL_PREFIX} model '{model}' used {op}, which has no deterministic implementation; its results "
        f"may differ between runs (replace the op, or run on the CPU)"
    )


@contextlib.contextmanager
def deterministic_algorithms() -> Iterator[None]:
    """Turn on torch's deterministic algorithms (warn-only) and deterministic cuDNN; restore on exit."""
    import torch

    cudnn = torch.backends.cudnn
    previous = (
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
        cudnn.deterministic,
        cudnn.benchmark,
    )
    set_env = _CUBLAS_ENV[0] not in os.environ
    if set_env:
        os.environ[_CUBLAS_ENV[0]] = _CUBLAS_ENV[1]
    torch.use_deterministic_algorithms(True, warn_only=True)
    cudnn.deterministic, cudnn.benchmark = True, False
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(previous[0], warn_only=previous[1])
        cudnn.deterministic, cudnn.benchmark = previous[2], previous[3]
        if set_env:
            os.environ.pop(_CUBLAS_ENV[0], None)


@contextlib.contextmanager
def recording_refusals(active: bool = True) -> Iterator[list[str]]:
    """Collect the names of ops that refused to be deterministic while the block runs.

    Other warnings raised in the block are passed on unchanged once it ends.

    Parameters
    ----------
    active : bool
        When ``False`` nothing is recorded (the list stays empty).

    Yields
    ------
    list of str
        Op names, each once, filled when the block ends.
    """
    refused: list[str] = []
    if not active:
        yield refused
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield refused
        finally:
            others = []
            for item in caught:
                op = refused_op(str(item.message))
                if op is None:
                    others.append(item)
                elif op not in refused:
                    refused.append(op)
    for item in others:  # outside catch_warnings: the caller's filters apply again
        warnings.warn_explicit(item.message, item.category, item.filename, item.lineno, source=item.source)
