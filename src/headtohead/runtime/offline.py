"""Offline mode: ``--offline`` or ``HF_HUB_OFFLINE=1`` means no network attempt at all.

See ``docs/architecture.md``, the section of this title.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import socket
import sys
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

__all__ = ["NetworkBlocked", "offline_mode", "offline_requested", "unreachable", "OFFLINE_ENV"]

log = logging.getLogger("headtohead")

#: Environment switches set while offline (read by huggingface_hub, transformers, datasets).
OFFLINE_ENV: dict[str, str] = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
}

_TRUE = {"1", "true", "yes", "on"}
_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}


def unreachable(url: str, timeout: float = 3.0) -> str | None:
    """Why ``url``'s host accepts no TCP connection within ``timeout`` seconds, in a few words; ``None`` when it does.

    One short probe before a download, so that a machine without network fails in seconds instead
    of waiting through the download libraries' retries (most of a minute for the Hub).
    """
    parts = urlsplit(url)
    host = parts.hostname
    if not host:
        return f"no host in {url!r}"
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except socket.gaierror:
        return f"the name {host} does not resolve"
    except TimeoutError:
        return f"no answer from {host} in {timeout:g} s"
    except OSError as exc:
        return f"{exc.strerror or type(exc).__name__} connecting to {host}:{port}"


class NetworkBlocked(ConnectionRefusedError):
    """A network lookup or connection was attempted while offline mode was on."""


def offline_requested(environ: dict[str, str] | None = None) -> bool:
    """Whether the environment asks for offline mode (``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE`` set true).

    Examples
    --------
    >>> offline_requested({"HF_HUB_OFFLINE": "1"}), offline_requested({})
    (True, False)
    """
    env = os.environ if environ is None else environ
    return any(env.get(name, "").strip().lower() in _TRUE for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def _is_local_host(host: Any) -> bool:
    if host is None or host in ("", b""):
        return True
    text = host.decode() if isinstance(host, bytes) else str(host)
    if text.lower() in _LOCAL_NAMES:
        return True
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])  # strip an IPv6 zone id
    except ValueError:
        return False
    return address.is_loopback


def _is_local_address(family: int, address: Any) -> bool:
    if family == getattr(socket, "AF_UNIX", object()):
        return True
    if isinstance(address, tuple) and address:
        return _is_local_host(address[0])
    return not isinstance(address, tuple)  # other families (netlink …) are not the internet


class _Guard:
    """Wraps the name lookups of :mod:`socket` and ``socket.socket.connect``/``connect_ex``; :meth:`remove` restores them."""

    _LOOKUPS = ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr")

    def __init__(self) -> None:
        self.blocked: list[str] = []
        self._originals: dict[str, Any] = {}
        self._own_names = {socket.gethostname().lower()}  # this machine's name resolves locally (/etc/hosts)

    def _refuse(self, what: str) -> NetworkBlocked:
        if what not in self.blocked:
            self.blocked.append(what)
            log.warning("offline mode: blocked a network attempt (%s); a library ignored HF_HUB_OFFLINE", what)
        return NetworkBlocked(f"offline mode (--offline / HF_HUB_OFFLINE=1): network access to {what} is blocked")

    def _local(self, host: Any) -> bool:
        name = host.decode() if isinstance(host, bytes) else host
        return _is_local_host(host) or (isinstance(name, str) and name.lower() in self._own_names)

    def _lookup(self, name: str) -> Any:
        original = self._originals[name]

        def lookup(host: Any, *args: Any, **kwargs: Any) -> Any:
            if not self._local(host):
                raise self._refuse(f"lookup of {host}")
            return original(host, *args, **kwargs)

        return lookup

    def _connect(self, name: str) -> Any:
        original = self._originals[name]

        def connect(sock: socket.socket, address: Any) -> Any:
            if not (_is_local_address(sock.family, address) or self._local(address[0])):
                raise self._refuse(f"connection to {address[0]}:{address[1]}")
            return original(sock, address)

        return connect

    def install(self) -> None:
        self._originals = {name: getattr(socket, name) for name in self._LOOKUPS}
        self._originals.update(connect=socket.socket.connect, connect_ex=socket.socket.connect_ex)
        for name in self._LOOKUPS:
            setattr(socket, name, self._lookup(name))
        socket.socket.connect = self._connect("connect")  # type: ignore[method-assign]
        socket.socket.connect_ex = self._connect("connect_ex")  # type: ignore[method-assign]

    def remove(self) -> None:
        if not self._originals:
            return
        for name in self._LOOKUPS:
            setattr(socket, name, self._originals[name])
        socket.socket.connect = self._originals["connect"]  # type: ignore[method-assign]
        socket.socket.connect_ex = self._originals["connect_ex"]  # type: ignore[method-assign]


def _patch_constants() -> list[tuple[Any, str, Any]]:
    """Set the offline flags of hub modules imported before the environment was changed."""
    targets = [
        ("huggingface_hub.constants", "HF_HUB_OFFLINE"),
        ("datasets.config", "HF_DATASETS_OFFLINE"),
        ("datasets.config", "HF_HUB_OFFLINE"),
        ("huggingface_hub.constants", "HF_HUB_DISABLE_TELEMETRY"),
    ]
    changed: list[tuple[Any, str, Any]] = []
    for module_name, attribute in targets:
        module = sys.modules.get(module_name)
        if module is not None and hasattr(module, attribute):
            changed.append((module, attribute, getattr(module, attribute)))
            setattr(module, attribute, True)
    return changed


@contextlib.contextmanager
def offline_mode() -> Iterator[list[str]]:
    """No network while the block runs; everything is restored afterwards.

    Yields
    ------
    list of str
        The network attempts that were blocked (empty when every library obeyed the switches).

    Examples
    --------
    >>> with offline_mode() as blocked:
    ...     try:
    ...         socket.getaddrinfo("example.com", 443)
    ...     except NetworkBlocked:
    ...         pass
    >>> blocked
    ['lookup of example.com']
    """
    saved_env = {name: os.environ.get(name) for name in OFFLINE_ENV}
    os.environ.update(OFFLINE_ENV)
    constants = _patch_constants()
    guard = _Guard()
    guard.install()
    try:
        yield guard.blocked
    finally:
        guard.remove()
        for module, attribute, value in constants:
            setattr(module, attribute, value)
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
