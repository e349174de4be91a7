"""Models built by the user's own Python code (``kind: python``).

See ``docs/api/adapters.md``, the section of this title.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from headtohead.adapters.base import LoadContext, ModelAdapter
from headtohead.adapters.weights import error_summary
from headtohead.config.models.python import PythonSettings
from headtohead.config.schema import ModelConfig
from headtohead.errors import ModelError, listing
from headtohead.runtime.faults import is_out_of_memory

__all__ = ["PythonAdapter", "import_factory"]

_DEFAULT_IMAGE_SIZE = 32


class PythonAdapter(ModelAdapter):
    """A model returned by a user factory: an ``nn.Module`` or a plain callable."""

    kind: ClassVar[str] = "python"
    config: PythonSettings

    def __init__(self, config: ModelConfig, context: LoadContext) -> None:
        super().__init__(config, context)
        self.model: Any = None
        self.is_module = False
        self._transform: Any = None

    @classmethod
    def load(cls, config: ModelConfig, context: LoadContext) -> PythonAdapter:
        """Import the factory, call it with ``model_args`` and check what it returned.

        A model given in memory (``context.objects``, :func:`headtohead.compare`) is taken as the
        factory's result.
        """
        assert isinstance(config, PythonSettings)  # the registry builds this adapter for its kind only
        adapter = cls(config, context)
        if config.name in context.objects:
            adapter._adopt(context.objects[config.name])
            return adapter
        factory = import_factory(config.source, model=config.name, search_dir=str(context.base_dir))
        try:
            made = factory(**config.model_args)
        except TypeError as exc:
            raise ModelError(
                f"model '{config.name}': calling {config.source} with model_args "
                f"{sorted(config.model_args)} failed ({error_summary(exc)}); match the factory's "
                f"parameters"
            ) from exc
        except Exception as exc:  # the user's code failed; report it as their model's problem
            raise ModelError(
                f"model '{config.name}': {config.source}(**model_args) raised "
                f"{type(exc).__name__}: {error_summary(exc)}"
            ) from exc
        adapter._adopt(made)
        return adapter

    def _adopt(self, made: Any) -> None:
        config = self.config
        self.output_kind = config.outputs
        self.label_names = _output_names(made, config.label_names)
        if _is_torch_module(made):
            if self.context.modality in ("text", "text_pair"):
                raise ModelError(
                    f"model '{self.name}': {config.source} returned an nn.Module, which cannot read "
                    f"raw text; return a callable that takes a list of str (and tokenises) instead"
                )
            self.is_module = True
            self.module = made.to(self.device).eval()
            if self.context.modality == "image":
                from headtohead.adapters.vision import plain_transform

                self._transform = plain_transform(config.image_size or _DEFAULT_IMAGE_SIZE)
        elif callable(made):
            self.model = made
        else:
            raise ModelError(
                f"model '{self.name}': {config.source} returned a {type(made).__name__}, which is "
                f"neither an nn.Module nor callable; return a model or a function of a list of examples"
            )

    def preprocess(self, examples: Sequence[Any]) -> Any:
        """A float tensor batch for a module; the raw examples as a list for a callable."""
        if not self.is_module:
            return list(examples)
        import torch

        if self.context.modality == "image":
            from headtohead.adapters.vision import images_to_batch

            return images_to_batch(examples, self._transform)
        return torch.as_tensor(np.asarray(examples, dtype=np.float32).reshape(len(examples), -1))

    def preprocess_function(self) -> Any:
        """For an image module: image decoding in worker processes (see :meth:`preprocess`)."""
        if not (self.is_module and self.context.modality == "image"):
            return None
        import functools

        from headtohead.adapters.vision import images_to_batch

        return functools.partial(images_to_batch, transform=self._transform)

    def forward(self, inputs: Any) -> Any:
        """Scores ``(batch, n_outputs)``: the module's output, or the callable's as a NumPy array."""
        if self.is_module:
            import torch

            with torch.inference_mode():
                return self.module(inputs)
        try:
            raw = self.model(inputs)
        except Exception as exc:  # the user's callable failed on this batch
            if is_out_of_memory(exc):
                raise  # not the model's fault: the runner says to lower the batch size and resume
            raise ModelError(
                f"model '{self.name}': {self.config.source} raised {type(exc).__name__} on a batch "
                f"of {len(inputs)} examples: {error_summary(exc)}"
            ) from exc
        scores = np.asarray(raw.detach().cpu() if hasattr(raw, "detach") else raw, dtype=np.float64)
        if scores.ndim != 2 or scores.shape[0] != len(inputs):
            raise ModelError(
                f"model '{self.name}': {self.config.source} returned scores of shape {scores.shape} "
                f"for {len(inputs)} examples; return one row per example, one column per class"
            )
        return scores


def _is_torch_module(made: Any) -> bool:
    """Whether ``made`` is a torch module, without importing torch for a plain callable."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(made, torch.nn.Module)


def import_factory(source: str, *, model: str, search_dir: str | None = None) -> Any:
    """Import ``"package.module:attribute"`` and return the attribute.

    Parameters
    ----------
    source : str
        ``module:attribute``; the attribute may be dotted (``module:Class.build``).
    model : str
        The model's name, for messages.
    search_dir : str, optional
        A folder put first on ``sys.path`` during the import (the experiment's folder).

    Returns
    -------
    object
        The attribute, which must be callable.

    Raises
    ------
    ModelError
        Malformed ``source``, module not found, import failure, missing or non-callable attribute.

    Examples
    --------
    >>> import_factory("headtohead.testing.models:tiny_mlp", model="m").__name__
    'tiny_mlp'
    """
    module_name, sep, attribute = source.partition(":")
    if not sep or not module_name or not attribute:
        raise ModelError(f"model '{model}': python source '{source}' must look like 'package.module:factory'")
    module = _import_module(module_name, model, search_dir)
    obj: Any = module
    for part in attribute.split("."):
        if not hasattr(obj, part):
            public = [n for n in dir(module) if not n.startswith("_")]
            raise ModelError(
                f"model '{model}': module '{module_name}' has no attribute '{attribute}' "
                f"(it has: {listing(public) or 'nothing public'}); check the name after ':'"
            )
        obj = getattr(obj, part)
    if not callable(obj):
        raise ModelError(f"model '{model}': '{source}' is a {type(obj).__name__}, not a callable factory")
    return obj


def _import_module(module_name: str, model: str, search_dir: str | None) -> Any:
    added = search_dir if search_dir and search_dir not in sys.path else None
    if added is not None:
        sys.path.insert(0, added)
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name != exc.name and not module_name.startswith(exc.name + "."):
            raise ModelError(
                f"model '{model}': importing '{module_name}' failed because it needs module "
                f"'{exc.name}', which is not installed; install it"
            ) from exc
        raise ModelError(
            f"model '{model}': module '{module_name}' not found; put it on PYTHONPATH (or beside "
            f"the experiment file) and check the spelling"
        ) from exc
    except Exception as exc:  # errors inside the user's module at import time
        raise ModelError(
            f"model '{model}': importing '{module_name}' raised {type(exc).__name__}: {error_summary(exc)}"
        ) from exc
    finally:
        if added is not None:
            sys.path.remove(added)


def _output_names(made: Any, configured: Sequence[str] | None) -> tuple[str, ...] | None:
    if configured:
        return tuple(str(n) for n in configured)
    for attribute in ("label_names", "classes_"):
        names = getattr(made, attribute, None)
        if names is not None and not callable(names):
            try:
                return tuple(str(n) for n in names)
            except TypeError:  # not iterable: not a list of names
                continue
    return None
