"""Where a Hugging Face model comes from: local folder or hub id, offline mode, the hub cache.

Shared by the transformers adapter (and anything else that loads from the hub), so the
rules — a local folder wins, offline fails fast with a fix — live in one place.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from headtohead.config.schema import ModelConfig
from headtohead.runtime.offline import offline_requested

__all__ = ["hub_offline", "looks_like_path", "hub_cache", "quiet_transformers", "hub_kwargs"]


def hub_offline() -> bool:
    """Whether downloads are switched off (env read now, so a late ``HF_HUB_OFFLINE=1`` counts too)."""
    from huggingface_hub import constants

    return offline_requested() or bool(constants.HF_HUB_OFFLINE)


def looks_like_path(source: str) -> bool:
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(source)  # "name" or "org/name"; refuses "./x", "a/b/c", "C:\\x" …
    except HFValidationError:
        return True
    return os.path.isabs(source) or source.startswith("~")


def hub_cache(config: ModelConfig) -> Any:
    """The cached ``config.json`` of a hub model (a path string), or something else when not cached."""
    from huggingface_hub import try_to_load_from_cache

    return try_to_load_from_cache(
        config.source, "config.json", cache_dir=config.model_args.get("cache_dir"), revision=config.revision
    )


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """Hide transformers' progress bars and load reports; what matters is kept via ``warn``."""
    from transformers.utils import logging as hf_logging

    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


def hub_kwargs(config: ModelConfig, offline: bool) -> dict[str, Any]:
    optional = {"revision": config.revision, "cache_dir": config.model_args.get("cache_dir")}
    return {
        "trust_remote_code": config.trust_remote_code,
        "local_files_only": offline,
        **{k: v for k, v in optional.items() if v is not None},
    }
