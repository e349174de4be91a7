"""Where a Hugging Face model comes from: local folder or hub id, offline mode, the hub cache.

Shared by the transformers adapter (and anything else that loads from the hub), so the
rules — a local folder wins, offline fails fast with a fix — live in one place.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
from collections.abc import Iterator
from typing import Any

from headtohead.config.models.keys import HubModel
from headtohead.errors import ModelError
from headtohead.runtime.offline import offline_requested, unreachable

__all__ = ["hub_offline", "looks_like_path", "hub_cache", "quiet_transformers", "hub_kwargs", "hub_reachable_or_cached"]
__all__ += ["download_command"]

#: The huggingface_hub release whose command line is ``hf`` (``huggingface-cli`` before it, and gone since 1.0).
HF_COMMAND_SINCE = (0, 34)
#: How long the hub may take to accept a connection before it counts as unreachable.
HUB_PROBE_SECONDS = 3.0
_PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "HTTP_PROXY", "http_proxy")


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


def hub_cache(config: HubModel) -> Any:
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


def hub_kwargs(config: HubModel, offline: bool) -> dict[str, Any]:
    optional = {"revision": config.revision, "cache_dir": config.model_args.get("cache_dir")}
    return {
        "trust_remote_code": config.trust_remote_code,
        "local_files_only": offline,
        **{k: v for k, v in optional.items() if v is not None},
    }


def hub_reachable_or_cached(config: HubModel) -> bool:
    """Whether a hub model must be read from the local cache only: the hub cannot be reached but the model is cached.

    Asked before the first download, so that a machine without network fails in seconds with
    one line, not after minutes of retries that end by blaming the tokenizer.

    Raises
    ------
    ModelError
        The hub cannot be reached and the model is not in the local cache.
    """
    reason = _hub_unreachable(_hub_endpoint())
    if reason is None:
        return False
    if isinstance(hub_cache(config), str):
        return True
    raise ModelError(
        f"model '{config.name}': the hub ({_hub_endpoint()}) cannot be reached from here ({reason}) and "
        f"'{config.source}' is not in the local cache; connect to the network, download it where there is one "
        f"({download_command(config.source)}) and copy the cache, or point source at a local folder"
    )


def download_command(source: str, *, local_dir: str | None = None) -> str:
    """The command line that downloads hub model ``source`` with the huggingface_hub installed here.

    ``hf download`` from huggingface_hub 0.34 on (its ``huggingface-cli`` was deprecated then and
    removed in 1.0), ``huggingface-cli download`` before; ``local_dir`` adds ``--local-dir``.

    Examples
    --------
    >>> download_command("org/model", local_dir="DIR").endswith("download org/model --local-dir DIR")
    True
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        release = tuple(int(part) for part in re.findall(r"\d+", version("huggingface_hub"))[:2])
    except PackageNotFoundError:  # not installed: the command a fresh install brings
        release = HF_COMMAND_SINCE
    program = "hf" if release >= HF_COMMAND_SINCE else "huggingface-cli"
    return f"{program} download {source}" + (f" --local-dir {local_dir}" if local_dir else "")


def _hub_endpoint() -> str:
    from huggingface_hub import constants

    return str(constants.ENDPOINT)


@functools.lru_cache(maxsize=8)
def _hub_unreachable(endpoint: str) -> str | None:
    """Why ``endpoint`` does not accept a connection, in a few words; ``None`` when it does (or behind a proxy)."""
    if any(os.environ.get(name) for name in _PROXY_VARIABLES):
        return None  # only the proxy knows; downloads go through it
    return unreachable(endpoint, HUB_PROBE_SECONDS)
