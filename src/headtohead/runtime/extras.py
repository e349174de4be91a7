"""Which ``pip install "headtohead[…]"`` extra brings an optional dependency, and the one-line error saying so.

The base install compares prediction files and scikit-learn models, computes every statistic,
runs the gate and writes every report, without torch, transformers or timm. Model families
that need more come as extras: ``torch`` (torch models, GPU telemetry), ``text``
(transformers), ``vision`` (timm, torchvision), ``onnx``, ``skops``, ``hf`` (datasets),
``ray``, ``mlflow``, ``llm`` (httpx, for ``kind: openai``); ``all`` is every torch family (what ``make demo`` installs).
"""

from __future__ import annotations

from headtohead.errors import ModelError

__all__ = ["EXTRAS", "KIND_EXTRAS", "extra_for", "missing_dependency"]

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
}

#: Model kind → the extra that installs its whole family (``text`` brings torch too, so a
#: transformers model without torch is told to install ``text``, not ``torch`` and then ``text``).
KIND_EXTRAS: dict[str, str] = {"transformers": "text", "timm": "vision", "torchvision": "vision"}


def extra_for(module: str | None) -> str | None:
    """The extra that installs ``module`` (``"torch.nn"`` → ``"torch"``), or ``None`` for others.

    Examples
    --------
    >>> extra_for("transformers.models.bert"), extra_for("numpy")
    ('text', None)
    """
    return EXTRAS.get((module or "").split(".")[0])


def missing_dependency(exc: ModuleNotFoundError, what: str, kind: str | None = None) -> ModelError | None:
    """One line naming the extra to install when ``exc`` is an optional dependency missing; ``None`` otherwise.

    Parameters
    ----------
    exc : ModuleNotFoundError
    what : str
        What needed it (``"model 'bert' (kind transformers)"``).
    kind : str, optional
        The model kind that needed it: a family whose extra includes torch is named for the
        whole family (``KIND_EXTRAS``).

    Examples
    --------
    >>> str(missing_dependency(ModuleNotFoundError("No module named 'timm'", name="timm"), "model 'r' (kind timm)"))
    'model \\'r\\' (kind timm) needs timm, which is not installed; install it with: pip install "headtohead[vision]"'
    """
    extra = extra_for(exc.name)
    if extra is None or exc.name is None:
        return None
    if extra == "torch" and kind in KIND_EXTRAS:
        extra = KIND_EXTRAS[kind]
    return ModelError(
        f"{what} needs {exc.name.split('.')[0]}, which is not installed; install it with: "
        f'pip install "headtohead[{extra}]"'
    )
