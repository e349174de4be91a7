"""Which ``pip install "headtohead[…]"`` extra brings an optional dependency, and the one-line error saying so.

The base install compares prediction files and scikit-learn models, computes every statistic,
runs the gate and writes every report, without torch, transformers or timm. Model families
that need more come as extras: ``torch`` (torch models, GPU telemetry), ``text``
(transformers), ``vision`` (timm, torchvision), ``onnx``, ``skops``, ``hf`` (datasets),
``ray``, ``mlflow``, ``llm`` (httpx, for ``kind: openai``); ``all`` is every torch family (what ``make demo`` installs).
"""

from __future__ import annotations

import importlib.util

from headtohead.errors import ModelError

__all__ = ["EXTRAS", "extra_for", "installed", "missing_dependency"]

#: Top-level module → the extra that installs it.
EXTRAS: dict[str, str] = {
    "torch": "torch",
    "safetensors": "torch",
    "pynvml": "torch",
    "transformers": "text",
    "tokenizers": "text",
    "timm": "vision",
    "torchvision": "vision",
    "onnxruntime": "onnx",
    "onnx": "onnx",
    "onnxscript": "onnx",
    "skops": "skops",
    "datasets": "hf",
    "ray": "ray",
    "mlflow": "mlflow",
    "httpx": "llm",
    "inspect_ai": "inspect",
}


def extra_for(module: str | None) -> str | None:
    """The extra that installs ``module`` (``"torch.nn"`` → ``"torch"``), or ``None`` for others.

    Examples
    --------
    >>> extra_for("transformers.models.bert"), extra_for("numpy")
    ('text', None)
    """
    return EXTRAS.get((module or "").split(".")[0])


def missing_dependency(exc: ModuleNotFoundError, what: str, family_extra: str | None = None) -> ModelError | None:
    """One line naming the extra to install when ``exc`` is an optional dependency missing; ``None`` otherwise.

    Parameters
    ----------
    exc : ModuleNotFoundError
    what : str
        What needed it (``"model 'bert' (kind transformers)"``).
    family_extra : str, optional
        The extra of the model family that needed it (its registry row's). When that extra is
        not installed, it is named for torch and for any module no extra names (``huggingface_hub``,
        which transformers brings): a new user installs the family once, not one module at a time.

    Examples
    --------
    >>> str(missing_dependency(ModuleNotFoundError("No module named 'timm'", name="timm"), "model 'r' (kind timm)"))
    'model \\'r\\' (kind timm) needs timm, which is not installed; install it with: pip install "headtohead[vision]"'
    """
    extra = extra_for(exc.name)
    if family_extra is not None and extra in (None, "torch") and not installed(family_extra):
        extra = family_extra
    if extra is None or exc.name is None:
        return None
    return ModelError(
        f"{what} needs {exc.name.split('.')[0]}, which is not installed; install it with: "
        f'pip install "headtohead[{extra}]"'
    )


def installed(extra: str) -> bool:
    """Every module that ``extra`` is named for can be imported (found, not imported)."""
    for module, named in EXTRAS.items():
        if named != extra:
            continue
        try:
            if importlib.util.find_spec(module) is None:
                return False
        except (ImportError, ValueError):  # ValueError: a module set to None in sys.modules
            return False
    return True
