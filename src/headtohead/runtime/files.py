"""Files that survive crashes: every file headtohead writes goes through an atomic write here.

A temporary file in the same folder, ``fsync``, then a rename: a crash, a full disk or a
kill mid-write leaves either the previous file or the new one, never half of one.
"""

from __future__ import annotations

import errno
import os
import secrets
from pathlib import Path

from headtohead.errors import ResultsError

__all__ = ["write_bytes_atomic", "write_text_atomic"]


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file and a rename.

    A crash, a full disk or a kill mid-write leaves the previous file intact; an
    interrupt (``KeyboardInterrupt``, SIGTERM) removes the temporary file too. The file
    gets the permissions an ordinary ``open()`` would give it (``0o666`` minus the umask).

    Raises
    ------
    ResultsError
        The folder cannot be created or written, or the disk is full (one line with the fix).
    """
    path = Path(path)
    tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    except OSError as exc:
        raise ResultsError(
            f"{path.parent}: cannot write results there ({exc.strerror or exc}); {_fix_for(exc)}"
        ) from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise ResultsError(
                f"{path}: writing failed ({exc.strerror or exc}); the previous file, if any, is "
                f"unchanged; {_fix_for(exc)}"
            ) from exc
        raise
    _fsync_folder(path.parent)


def _fix_for(exc: OSError) -> str:
    """How to get past an OSError met while writing results."""
    if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", -1)):
        return "free some disk space or choose another --out folder"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "choose another --out folder or fix its permissions"
    if exc.errno in (errno.ENOTDIR, errno.EEXIST):
        return "a file is in the way of the output folder; choose another --out folder"
    return "check the disk and choose another --out folder if it persists"


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where folders cannot be opened (Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_text_atomic(path: Path, text: str) -> None:
    """Write UTF-8 ``text`` atomically (see :func:`write_bytes_atomic`)."""
    write_bytes_atomic(path, text.encode("utf-8"))
