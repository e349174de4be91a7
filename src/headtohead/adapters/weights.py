"""Safe checkpoint files for torch modules: read, unwrap, fit to a module, and write.

See ``docs/api/adapters.md``, the section of this title.
"""

from __future__ import annotations

import json
import pickle
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from headtohead.errors import ModelError

__all__ = [
    "Checkpoint",
    "read_checkpoint",
    "read_checkpoint_labels",
    "read_checkpoint_extra",
    "save_checkpoint",
    "unwrap_state_dict",
    "apply_state_dict",
    "checkpoint_num_outputs",
    "output_layer_name",
    "error_summary",
    "LABELS_KEY",
    "EXTRA_KEY",
]

#: safetensors metadata key holding the JSON list of label names, in output order.
LABELS_KEY = "headtohead.label_names"
#: safetensors metadata key holding a JSON object of extra facts (training run, epochs …).
EXTRA_KEY = "headtohead.extra"
_FORMAT_KEY = "headtohead.format"

# Keys under which training scripts commonly nest the weights, most specific first.
_WRAPPER_KEYS = ("state_dict", "model_state_dict", "model", "module", "net", "network")
# Prefixes that DataParallel/DDP ("module.") and torch.compile ("_orig_mod.") add to every key.
_PREFIXES = ("module.", "_orig_mod.")
_UNSUPPORTED_GLOBAL = re.compile(r"Unsupported global: GLOBAL (\S+)")


@dataclass(frozen=True)
class Checkpoint:
    """The tensors of a checkpoint file and what it says about its outputs.

    Attributes
    ----------
    path : Path
    state_dict : dict of str to Tensor
        Unwrapped, with ``module.``/``_orig_mod.`` prefixes removed.
    label_names : tuple of str or None
        From headtohead's safetensors metadata or a ``label_names`` entry of a wrapper dict.
    extra : dict
        The ``extra`` mapping given to :func:`save_checkpoint` (empty otherwise).
    """

    path: Path
    state_dict: dict[str, Any]
    label_names: tuple[str, ...] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def read_checkpoint(path: str | Path, *, model: str, allow_pickle: bool = False) -> Checkpoint:
    """Read a weights file into an unwrapped state dict.

    Parameters
    ----------
    path : str or Path
        A ``.safetensors`` file, or any file ``torch.save`` wrote.
    model : str
        The model's name, for messages.
    allow_pickle : bool
        Allow a full unpickle when ``weights_only=True`` refuses the file.

    Returns
    -------
    Checkpoint

    Raises
    ------
    ModelError
        The file is missing, corrupt or truncated, needs ``allow_pickle``, or holds no tensors.
    """
    path = Path(path)
    if not path.is_file():
        raise ModelError(
            f"model '{model}': checkpoint {path} not found (checkpoint paths are read relative "
            f"to the experiment file's folder)"
        )
    if path.suffix.lower() == ".safetensors":
        return _read_safetensors(path, model)
    raw = _torch_load(path, model, allow_pickle)
    labels = _wrapper_labels(raw)
    return Checkpoint(path, unwrap_state_dict(raw, source=f"model '{model}': {path}"), labels)


def _read_safetensors(path: Path, model: str) -> Checkpoint:
    from safetensors.torch import load_file

    try:
        tensors = load_file(str(path))
        metadata = _safetensors_metadata(path)
    except Exception as exc:  # SafetensorError and OSError: the file cannot be decoded
        raise ModelError(
            f"model '{model}': {path} is not a readable safetensors file, it may be corrupt or "
            f"truncated ({error_summary(exc)}); re-save or re-download it"
        ) from exc
    labels, extra = _decode_metadata(metadata, path, model)
    return Checkpoint(path, _strip_prefixes(dict(tensors)), labels, extra)


def _torch_load(path: Path, model: str, allow_pickle: bool) -> Any:
    import torch

    try:
        return torch.load(path, map_location="cpu", weights_only=not allow_pickle)
    except pickle.UnpicklingError as exc:
        if not allow_pickle and "Weights only load failed" in str(exc):
            found = _UNSUPPORTED_GLOBAL.search(str(exc))
            what = f" (it contains {found.group(1)})" if found else ""
            raise ModelError(
                f"model '{model}': {path} holds pickled Python objects{what}, not just tensors; "
                f"unpickling can run arbitrary code, so set allow_pickle: true only if you trust "
                f"the file, or re-save it as a state dict / .safetensors"
            ) from None
        raise ModelError(
            f"model '{model}': {path} is not a readable torch checkpoint, it may be corrupt "
            f"({error_summary(exc)}); re-save or re-download it"
        ) from exc
    except Exception as exc:  # torch raises RuntimeError, KeyError, EOFError … for damaged files
        raise ModelError(
            f"model '{model}': {path} is not a readable torch checkpoint, it may be corrupt or "
            f"truncated ({type(exc).__name__}: {error_summary(exc)}); re-save or re-download it"
        ) from exc


def unwrap_state_dict(obj: Any, *, source: str = "checkpoint") -> dict[str, Any]:
    """Find the state dict inside what ``torch.load`` returned.

    Accepts a plain state dict, a whole ``nn.Module`` (its ``state_dict()``), and common
    wrappers such as ``{"state_dict": ...}`` or ``{"model": ...}`` (nested too). Key
    prefixes added by ``DataParallel`` (``module.``) and ``torch.compile`` (``_orig_mod.``)
    are removed.

    Parameters
    ----------
    obj : object
        The loaded object.
    source : str
        Names the file in messages.

    Returns
    -------
    dict of str to Tensor

    Raises
    ------
    ModelError
        No tensors were found.

    Examples
    --------
    >>> import torch
    >>> sorted(unwrap_state_dict({"epoch": 3, "state_dict": {"module.fc.weight": torch.zeros(2, 2)}}))
    ['fc.weight']
    """
    import torch

    for _ in range(4):  # wrappers nest at most a few levels in practice
        if isinstance(obj, torch.nn.Module):
            obj = obj.state_dict()
        if not isinstance(obj, Mapping):
            break
        if obj and all(isinstance(v, torch.Tensor) for v in obj.values()):
            return _strip_prefixes({str(k): v for k, v in obj.items()})
        inner = next(
            (obj[k] for k in _WRAPPER_KEYS if k in obj and isinstance(obj[k], (Mapping, torch.nn.Module))), None
        )
        if inner is None:
            # A state dict may carry a few non-tensor entries (e.g. "_metadata"); keep the tensors.
            tensors = {str(k): v for k, v in obj.items() if isinstance(v, torch.Tensor)}
            if tensors:
                return _strip_prefixes(tensors)
            break
        obj = inner
    keys = list(obj)[:5] if isinstance(obj, Mapping) else type(obj).__name__
    raise ModelError(
        f"{source}: no tensors found (top-level: {keys}); expected a state dict, "
        f"{{'state_dict': ...}} or {{'model': ...}}"
    )


def _strip_prefixes(state: dict[str, Any]) -> dict[str, Any]:
    for prefix in _PREFIXES:
        if state and all(k.startswith(prefix) for k in state):
            state = {k[len(prefix) :]: v for k, v in state.items()}
    return state


def _wrapper_labels(raw: Any) -> tuple[str, ...] | None:
    if isinstance(raw, Mapping):
        names = raw.get("label_names")
        if isinstance(names, (list, tuple)) and names and all(isinstance(n, str) for n in names):
            return tuple(names)
    return None


def _safetensors_metadata(path: Path) -> dict[str, str]:
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as handle:
        return dict(handle.metadata() or {})


def _decode_metadata(
    metadata: Mapping[str, str], path: Path, model: str
) -> tuple[tuple[str, ...] | None, dict[str, Any]]:
    try:
        labels = json.loads(metadata[LABELS_KEY]) if LABELS_KEY in metadata else None
        extra = json.loads(metadata[EXTRA_KEY]) if EXTRA_KEY in metadata else {}
    except json.JSONDecodeError as exc:
        raise ModelError(
            f"model '{model}': {path} has damaged headtohead metadata ({exc.msg}); re-save it with save_checkpoint"
        ) from exc
    if labels is not None:
        labels = tuple(str(n) for n in labels)
    return labels, extra if isinstance(extra, dict) else {}


def read_checkpoint_labels(path: str | Path) -> tuple[str, ...] | None:
    """Label names stored by :func:`save_checkpoint`, without reading the tensors.

    Parameters
    ----------
    path : str or Path
        A ``.safetensors`` file. Other files carry no headtohead metadata: ``None``.

    Returns
    -------
    tuple of str or None
        The names in output order, or ``None`` when the file does not record them.

    Raises
    ------
    ModelError
        The file cannot be read.
    """
    return _read_metadata(Path(path))[0]


def read_checkpoint_extra(path: str | Path) -> dict[str, Any]:
    """The ``extra`` mapping stored by :func:`save_checkpoint` (``{}`` when there is none)."""
    return _read_metadata(Path(path))[1]


def _read_metadata(path: Path) -> tuple[tuple[str, ...] | None, dict[str, Any]]:
    if path.suffix.lower() != ".safetensors":
        return None, {}
    try:
        metadata = _safetensors_metadata(path)
    except Exception as exc:  # missing, truncated or not safetensors at all
        raise ModelError(
            f"{path}: cannot read safetensors metadata ({error_summary(exc)}); check the path "
            f"and that the file is complete"
        ) from exc
    return _decode_metadata(metadata, path, path.stem)


def save_checkpoint(
    module: Any, path: str | Path, *, label_names: Sequence[str] | None = None, extra: Mapping[str, Any] | None = None
) -> Path:
    """Write a module's weights as ``.safetensors``, with label names in the metadata.

    The write is atomic (temporary file, then rename). Tensors that share memory (tied
    weights) are stored once each under every name, so the file loads with a plain
    ``load_state_dict``.

    Parameters
    ----------
    module : torch.nn.Module or mapping of str to Tensor
        The model (or its state dict).
    path : str or Path
        Target file; must end in ``.safetensors``.
    label_names : sequence of str, optional
        The classes, in output order; :func:`read_checkpoint_labels` returns them.
    extra : mapping, optional
        JSON-serialisable facts to keep with the weights (epochs, dataset fingerprint …).

    Returns
    -------
    Path
        ``path``.

    Examples
    --------
    >>> import torch, tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "m.safetensors"
    >>> _ = save_checkpoint(torch.nn.Linear(4, 2), target, label_names=["no", "yes"])
    >>> read_checkpoint_labels(target)
    ('no', 'yes')
    """
    import torch
    from safetensors.torch import save

    from headtohead.runtime.files import write_bytes_atomic

    path = Path(path)
    if path.suffix.lower() != ".safetensors":
        raise ModelError(f"{path}: checkpoints are saved as safetensors; use a file name ending in .safetensors")
    state = module.state_dict() if isinstance(module, torch.nn.Module) else dict(module)
    seen: set[int] = set()
    tensors: dict[str, Any] = {}
    for key, tensor in state.items():
        tensor = tensor.detach().to("cpu").contiguous()
        pointer = tensor.untyped_storage().data_ptr()
        # safetensors refuses aliased storage; a copy per alias keeps every key loadable.
        tensors[key] = tensor.clone() if pointer in seen else tensor
        seen.add(pointer)
    metadata = {_FORMAT_KEY: "1", EXTRA_KEY: json.dumps(dict(extra or {}), default=str)}
    if label_names is not None:
        metadata[LABELS_KEY] = json.dumps([str(n) for n in label_names])
    write_bytes_atomic(path, save(tensors, metadata=metadata))
    return path


def output_layer_name(module: Any, n_outputs: int) -> str | None:
    """Name of the layer that produces the ``n_outputs`` class scores, or ``None``.

    The last submodule (in registration order) with a matrix/conv weight of ``n_outputs``
    rows: the classifier of every timm and torchvision classification model.
    """
    for name, sub in reversed(list(module.named_modules())):
        weight = getattr(sub, "weight", None)
        if name and weight is not None and getattr(weight, "ndim", 0) >= 2 and weight.shape[0] == n_outputs:
            return cast(str, name)
    return None


def checkpoint_num_outputs(module: Any, state_dict: Mapping[str, Any], n_outputs: int) -> int | None:
    """How many classes a checkpoint's classifier has, read from its weight shape.

    Parameters
    ----------
    module : torch.nn.Module
        The architecture built with ``n_outputs`` classes.
    state_dict : mapping
        The checkpoint's tensors.
    n_outputs : int
        The number of classes ``module`` was built with.

    Returns
    -------
    int or None
        The checkpoint's class count, or ``None`` when its classifier cannot be found.
    """
    name = output_layer_name(module, n_outputs)
    weight = state_dict.get(f"{name}.weight") if name else None
    return int(weight.shape[0]) if weight is not None and getattr(weight, "ndim", 0) >= 2 else None


def apply_state_dict(module: Any, state_dict: Mapping[str, Any], *, model: str, source: str) -> None:
    """Load ``state_dict`` into ``module`` strictly, explaining any mismatch in one line.

    Raises
    ------
    ModelError
        Keys are missing or unexpected, or a tensor's shape differs; a few of each are named.
    """
    own = module.state_dict()
    missing = [k for k in own if k not in state_dict]
    unexpected = [k for k in state_dict if k not in own]
    mismatched = [
        f"{k}: checkpoint {tuple(state_dict[k].shape)} vs model {tuple(own[k].shape)}"
        for k in own
        if k in state_dict and tuple(state_dict[k].shape) != tuple(own[k].shape)
    ]
    problems = [
        f"{len(found)} {what} ({_few(found)})"
        for what, found in (
            ("missing keys", missing),
            ("unexpected keys", unexpected),
            ("shape mismatches", mismatched),
        )
        if found
    ]
    if problems:
        raise ModelError(
            f"model '{model}': checkpoint {source} does not fit architecture "
            f"'{type(module).__name__}': {'; '.join(problems)}; check that source and model_args "
            f"match the model the checkpoint was trained as"
        )
    module.load_state_dict(state_dict, strict=True)


def _few(items: Sequence[str], n: int = 3) -> str:
    shown = ", ".join(items[:n])
    return shown + (f", … {len(items) - n} more" if len(items) > n else "")


def error_summary(exc: BaseException) -> str:
    """The first line of an exception message (at most 200 characters), for one-line errors."""
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__
