"""Hugging Face ``transformers`` sequence classifiers (``kind: transformers``).

See ``docs/api/adapters.md``, the section of this title.
"""

from __future__ import annotations

import inspect
import os
import pickle
import re
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, cast

from headtohead.adapters.base import LoadContext, ModelAdapter
from headtohead.adapters.hf_hub import (
    download_command,
    hub_cache,
    hub_kwargs,
    hub_offline,
    hub_reachable_or_cached,
    looks_like_path,
    quiet_transformers,
)
from headtohead.adapters.hf_text import FALLBACK_MAX_LENGTH, NO_TOKENIZER_LIMIT, split_pairs, token_counter
from headtohead.adapters.weights import error_summary, read_checkpoint
from headtohead.config.models.transformers import TransformersSettings
from headtohead.config.schema import ModelConfig
from headtohead.errors import ModelError

__all__ = ["TransformersAdapter", "position_limit"]

# Keys of model_args that would bypass a field of the model's config with the same job.
_RESERVED_ARGS = {
    "trust_remote_code": "trust_remote_code",
    "revision": "revision",
    "weights_only": "allow_pickle",
    "use_safetensors": "allow_pickle",
    "local_files_only": "source",
    "output_loading_info": None,
    "state_dict": None,
}
_SAFETENSORS_FILES = ("model.safetensors", "model.safetensors.index.json")
_BIN_FILES = ("pytorch_model.bin", "pytorch_model.bin.index.json")
_UNSUPPORTED_GLOBAL = re.compile(r"Unsupported global: GLOBAL (\S+)")
_WEIGHTS_UNPICKLER = re.compile(r"WeightsUnpickler error:\s*([^\n]+)")


class TransformersAdapter(ModelAdapter):
    """An ``AutoModelForSequenceClassification`` with its own ``AutoTokenizer``.

    Attributes
    ----------
    tokenizer : transformers tokenizer
    max_length : int
        Truncation length used by :meth:`preprocess`.
    input_names : tuple of str
        The tokenizer outputs the model's ``forward`` accepts (others are dropped).
    """

    kind: ClassVar[str] = "transformers"
    load_imports: ClassVar[tuple[str, ...]] = (
        "torch",
        "transformers.modeling_utils",
        "transformers.models.auto.modeling_auto",
        "transformers.models.auto.tokenization_auto",
    )

    def __init__(self, config: ModelConfig, context: LoadContext) -> None:
        super().__init__(config, context)
        self.tokenizer: Any = None
        self.max_length: int = FALLBACK_MAX_LENGTH
        self.input_names: tuple[str, ...] = ()

    @classmethod
    def load(cls, config: ModelConfig, context: LoadContext) -> TransformersAdapter:
        """Load tokenizer and model from ``config.source`` onto ``context.device``, in eval mode.

        Parameters
        ----------
        config : ModelConfig
            ``source`` (folder or hub id), ``revision``, ``max_length``, ``label_names``,
            ``model_args`` (passed to ``from_pretrained``, e.g. ``{num_labels: 2}``),
            ``allow_pickle``, ``trust_remote_code``.
        context : LoadContext
            Device, seed (for a freshly initialised classification head), base folder.

        Returns
        -------
        TransformersAdapter

        Raises
        ------
        ModelError
            Missing folder or files, hub id while offline, corrupt weights, pickled weights without
            ``allow_pickle``, ``max_length`` beyond the position limit, wrong ``label_names`` length.
        """
        import torch

        assert isinstance(config, TransformersSettings)  # the registry builds this adapter for its kind only
        self = cls(config, context)
        _check_model_args(config)
        source, folder, offline = _locate(config, context)
        with quiet_transformers():
            self.tokenizer = _load_tokenizer(config, source, offline)
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(context.seed)  # a fresh head is initialised from this seed
                model, info = _load_model(config, source, folder, offline)
        model.to(context.device)
        model.eval()
        self.module = model
        self._note_fresh_weights(info)
        self._ensure_padding()
        self.label_names = _label_names(config, model.config)
        self.max_length = _max_length(config, self.tokenizer, model, self.warn)
        accepted = inspect.signature(model.forward).parameters
        self.input_names = tuple(k for k in ("input_ids", "attention_mask", "token_type_ids") if k in accepted)
        return self

    def preprocess(self, examples: Sequence[Any]) -> dict[str, Any]:
        """Tokenise texts (``str``) or text pairs (``(text, pair)``), padded to the batch's longest.

        Parameters
        ----------
        examples : sequence of str or of (str, str)
            One batch.

        Returns
        -------
        dict of str to torch.Tensor
            ``input_ids``, ``attention_mask`` and, when the model takes it, ``token_type_ids``;
            each of shape ``(batch, longest_in_batch)`` with ``longest_in_batch <= max_length``.
        """
        first, second = split_pairs(examples, self.name)
        encoded = self.tokenizer(
            first, second, truncation=True, max_length=self.max_length, padding="longest", return_tensors="pt"
        )
        return {k: encoded[k] for k in self.input_names if k in encoded}

    @classmethod
    def length_counter(cls, config: ModelConfig, context: LoadContext) -> Any:
        """Token counts (truncated at ``max_length``) from this model's tokenizer, loaded alone."""
        assert isinstance(config, TransformersSettings)  # the registry builds this adapter for its kind only
        source, _, offline = _locate(config, context)
        with quiet_transformers():
            tokenizer = _load_tokenizer(config, source, offline)
        return token_counter(tokenizer, config.max_length, model=config.name)

    def forward(self, inputs: dict[str, Any]) -> Any:
        """Logits of shape ``(batch, num_labels)`` for a batch from :meth:`preprocess` (no grad)."""
        import torch

        with torch.inference_mode():
            return self.module(**inputs).logits

    def tokens_in_batch(self, inputs: dict[str, Any]) -> int:
        """Number of real (non-padding) tokens in a preprocessed batch, for tokens/s figures."""
        mask = inputs.get("attention_mask")
        real = mask if mask is not None else inputs["input_ids"] != self.tokenizer.pad_token_id
        return int(real.sum().item())

    def _note_fresh_weights(self, info: dict[str, Any]) -> None:
        fresh = sorted(
            set(info.get("missing_keys") or ())
            | {str(k[0]) if isinstance(k, tuple) else str(k) for k in info.get("mismatched_keys") or ()}
        )
        if fresh:
            shown = ", ".join(fresh[:4]) + (f", … {len(fresh) - 4} more" if len(fresh) > 4 else "")
            self.warn(
                f"model '{self.name}': {len(fresh)} weights are not in the checkpoint and were initialised "
                f"at random (seed {self.context.seed}): {shown}; the classification head is untrained, so "
                f"expect chance-level predictions until the model is fine-tuned"
            )

    def _ensure_padding(self) -> None:
        """Dynamic padding needs a pad token; decoder-style tokenizers often lack one."""
        if self.tokenizer.pad_token is not None:
            return
        if self.tokenizer.eos_token is None:
            raise ModelError(
                f"model '{self.name}': its tokenizer has neither a pad nor an end-of-sequence token, so "
                f"batches cannot be padded; use a tokenizer that defines pad_token"
            )
        self.tokenizer.pad_token = self.tokenizer.eos_token
        self.module.config.pad_token_id = self.tokenizer.pad_token_id
        self.warn(
            f"model '{self.name}': its tokenizer has no pad token; padding with the end-of-sequence token "
            f"'{self.tokenizer.eos_token}'"
        )


def _check_model_args(config: TransformersSettings) -> None:
    for key, instead in _RESERVED_ARGS.items():
        if key in config.model_args:
            hint = f"set the model's {instead} field instead" if instead else "headtohead sets it itself"
            raise ModelError(
                f"model '{config.name}': model_args.{key} is not allowed for transformers models; remove it ({hint})"
            )


def _locate(config: TransformersSettings, context: LoadContext) -> tuple[str, Path | None, bool]:
    """Return ``(folder or hub id, the folder or None, offline)``; a local folder wins over a hub id."""
    path = context.resolve_path(config.source)
    offline = hub_offline()
    if path.exists():
        if not path.is_dir():
            raise ModelError(
                f"model '{config.name}': source {path} is a file; transformers models are read from "
                f"a folder written by save_pretrained (config.json, weights, tokenizer files)"
            )
        if not (path / "config.json").is_file():
            raise ModelError(
                f"model '{config.name}': folder {path} has no config.json; point source at the folder "
                f"written by save_pretrained"
            )
        if not any((path / name).is_file() for name in _SAFETENSORS_FILES + _BIN_FILES):
            raise ModelError(
                f"model '{config.name}': folder {path} has no weights file (expected "
                f"{' or '.join(_SAFETENSORS_FILES[:1] + _BIN_FILES[:1])}); save the model with "
                f"save_pretrained into this folder"
            )
        return str(path), path, offline
    if looks_like_path(config.source):
        raise ModelError(
            f"model '{config.name}': model folder {path} not found; check source (relative paths "
            f"are read from the experiment file's folder)"
        )
    if offline and not isinstance(hub_cache(config), str):
        raise ModelError(
            f"model '{config.name}': '{config.source}' is no folder here ({path.absolute()}) and hub "
            f"model '{config.source}' is not available offline: download it first "
            f"({download_command(config.source)}) or point source at a local folder"
        )
    return config.source, None, offline or hub_reachable_or_cached(config)


def _load_tokenizer(config: TransformersSettings, source: str, offline: bool) -> Any:
    from transformers import AutoTokenizer

    fix = "save the tokenizer next to the model with tokenizer.save_pretrained"
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, **hub_kwargs(config, offline))
    except (OSError, ValueError, KeyError, TypeError, ImportError) as exc:
        raise ModelError(
            f"model '{config.name}': cannot load its tokenizer from {source} ({error_summary(exc)}); "
            f"{fix}{_remote_code_hint(config, exc)}"
        ) from exc
    # Without vocabulary files transformers 5 quietly builds a tokenizer that knows only its
    # special tokens, and every word would become [UNK].
    if len(tokenizer) <= len(set(tokenizer.all_special_tokens)):
        raise ModelError(
            f"model '{config.name}': the tokenizer in {source} has no vocabulary (only "
            f"{len(tokenizer)} special tokens; tokenizer.json / vocab files are missing); {fix}"
        )
    return tokenizer


def _load_model(
    config: TransformersSettings, source: str, folder: Path | None, offline: bool
) -> tuple[Any, dict[str, Any]]:
    """``from_pretrained`` with safe weight reading; returns the model and transformers' loading info."""
    import torch
    from safetensors import SafetensorError
    from transformers import AutoModelForSequenceClassification

    # float32 unless the user chose a dtype (torch_dtype is transformers' older name for it).
    precision = {} if {"dtype", "torch_dtype"} & set(config.model_args) else {"dtype": torch.float32}
    kwargs = {
        **precision,
        **config.model_args,
        **hub_kwargs(config, offline),
        "weights_only": True,
        "output_loading_info": True,
    }
    if folder is not None:
        kwargs["use_safetensors"] = any((folder / name).is_file() for name in _SAFETENSORS_FILES)
    try:
        return cast("tuple[Any, dict[str, Any]]", AutoModelForSequenceClassification.from_pretrained(source, **kwargs))
    except pickle.UnpicklingError as exc:
        if "Weights only load failed" not in str(exc):
            raise ModelError(_corrupt(config, source, exc)) from exc
        if not config.allow_pickle:
            raise ModelError(_pickle_refused(config, source, exc)) from None
        if folder is None:
            raise ModelError(
                f"model '{config.name}': hub model '{source}' needs a full unpickle; download it "
                f"({download_command(source, local_dir='DIR')}) and point source at DIR"
            ) from None
        return _load_unpickled(config, folder, kwargs)
    except (OSError, SafetensorError, RuntimeError, EOFError) as exc:
        if "ignore_mismatched_sizes" in str(exc):
            raise ModelError(
                f"model '{config.name}': the checkpoint in {source} has a classifier of another size "
                f"than model_args asks for (num_labels={config.model_args.get('num_labels')}); add "
                f"ignore_mismatched_sizes: true to model_args to replace it with a fresh, untrained "
                f"head"
            ) from exc
        raise ModelError(_corrupt(config, source, exc)) from exc
    except (ValueError, KeyError, TypeError, ImportError) as exc:
        raise ModelError(
            f"model '{config.name}': transformers cannot build a sequence classifier from {source} "
            f"({error_summary(exc)}); check source and model_args{_remote_code_hint(config, exc)}"
        ) from exc


def _load_unpickled(config: TransformersSettings, folder: Path, kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """``allow_pickle``: unpickle the ``.bin`` shards here (transformers 5 reads them with ``weights_only=True``
    whatever it is told), rewrite them as safetensors in a temporary folder and load that."""
    import json

    from safetensors.torch import save_file
    from transformers import AutoModelForSequenceClassification

    index = folder / _BIN_FILES[1]
    shards = sorted(set(json.loads(index.read_text())["weight_map"].values())) if index.is_file() else [_BIN_FILES[0]]
    state: dict[str, Any] = {}
    for shard in shards:
        state.update(read_checkpoint(folder / shard, model=config.name, allow_pickle=True).state_dict)
    # safetensors refuses tensors that share memory (tied weights): store an own copy of each.
    state = {k: v.detach().contiguous().clone() for k, v in state.items()}
    # mmap'ed weights outlive the file on POSIX; elsewhere a leftover temporary folder is harmless.
    with tempfile.TemporaryDirectory(prefix="h2h-unpickled-", ignore_cleanup_errors=True) as tmp:
        for item in folder.iterdir():
            if item.is_file() and not item.name.startswith(("pytorch_model", "model.safetensors")):
                shutil.copy2(item, tmp)
        save_file(state, os.path.join(tmp, "model.safetensors"), metadata={"format": "pt"})
        kwargs = {**kwargs, "use_safetensors": True, "local_files_only": True}
        kwargs.pop("revision", None)
        return cast("tuple[Any, dict[str, Any]]", AutoModelForSequenceClassification.from_pretrained(tmp, **kwargs))


def _pickle_refused(config: TransformersSettings, source: str, exc: BaseException) -> str:
    found, detail = _UNSUPPORTED_GLOBAL.search(str(exc)), _WEIGHTS_UNPICKLER.search(str(exc))
    what = (
        f"hold pickled Python objects (it contains {found.group(1)}), not just tensors"
        if found
        else f"are not plain tensors ({detail.group(1).strip() if detail else 'refused by weights_only=True'}): the "
        f"file is corrupt, or holds pickled Python objects"
    )
    return (
        f"model '{config.name}': the pytorch_model.bin weights in {source} {what}; unpickling can run arbitrary "
        f"code, so set allow_pickle: true only if you trust the files, or re-save them as safetensors"
    )


def _corrupt(config: TransformersSettings, source: str, exc: BaseException) -> str:
    return (
        f"model '{config.name}': cannot read the weights in {source}, a file is missing, corrupt or truncated "
        f"({type(exc).__name__}: {error_summary(exc)}); re-save or re-download the model"
    )


def _remote_code_hint(config: TransformersSettings, exc: BaseException) -> str:
    if "trust_remote_code" in str(exc) and not config.trust_remote_code:
        return "; the model ships its own code: set trust_remote_code: true only if you trust it"
    return ""


def _label_names(config: TransformersSettings, model_config: Any) -> tuple[str, ...]:
    n = int(model_config.num_labels)
    if config.label_names is not None:
        if len(config.label_names) != n:
            raise ModelError(
                f"model '{config.name}': label_names has {len(config.label_names)} entries "
                f"{list(config.label_names)} but the model has {n} outputs; give one name per output, "
                f"in output order"
            )
        return tuple(str(name) for name in config.label_names)
    id2label = {int(k): str(v) for k, v in (model_config.id2label or {}).items()}
    return tuple(id2label.get(i, f"LABEL_{i}") for i in range(n))


def position_limit(model: Any) -> int | None:
    """Longest input (in tokens) a transformers model's position embeddings allow, or ``None``.

    RoBERTa-style models number positions from ``padding_idx + 1``, so they read
    ``max_position_embeddings - padding_idx - 1`` tokens (514 - 2 = 512 for roberta-base).

    Parameters
    ----------
    model : transformers.PreTrainedModel

    Returns
    -------
    int or None
        ``None`` when the model has no absolute position limit.
    """
    cfg = model.config
    if getattr(cfg, "position_biased_input", True) is False:  # DeBERTa: relative positions only
        return None
    limit = getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None)
    if not isinstance(limit, int) or limit <= 0:
        return None
    embeddings = getattr(getattr(model, "base_model", model), "embeddings", None)
    padding_idx = getattr(embeddings, "padding_idx", None)
    # The RoBERTa family (RoBERTa, XLM-R, CamemBERT, MPNet, Longformer …) keeps padding_idx there.
    return limit - padding_idx - 1 if isinstance(padding_idx, int) else limit


def _max_length(config: TransformersSettings, tokenizer: Any, model: Any, warn: Any) -> int:
    limit = position_limit(model)
    if config.max_length is not None:
        if limit is not None and config.max_length > limit:
            raise ModelError(
                f"model '{config.name}': max_length {config.max_length} is beyond what the model can "
                f"read (its position embeddings allow {limit} tokens); set max_length to {limit} or less"
            )
        return config.max_length
    stated = getattr(tokenizer, "model_max_length", None)
    known = [n for n in (stated, limit) if isinstance(n, int) and n < NO_TOKENIZER_LIMIT]
    if known:
        return min(known)
    warn(
        f"model '{config.name}': neither the tokenizer nor the model states a maximum length; truncating at "
        f"{FALLBACK_MAX_LENGTH} tokens (set max_length to choose)"
    )
    return FALLBACK_MAX_LENGTH
