"""An on-disk cache of an endpoint's answers (SQLite), so a re-run asks nothing already answered.

See ``docs/llm.md``, "Concurrency, faults and the cache".
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

__all__ = ["ResponseCache", "cache_key", "default_cache_path"]

_SCHEMA = """CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    body TEXT NOT NULL,
    latency_s REAL,
    stored_at REAL NOT NULL
)"""


def default_cache_path() -> Path:
    """Where the response cache lives (see the module docstring)."""
    if os.environ.get("H2H_CACHE_DIR"):
        return Path(os.environ["H2H_CACHE_DIR"]).expanduser() / "responses.sqlite"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "headtohead" / "responses.sqlite"


def cache_key(base_url: str, model: str, messages: list[dict[str, str]], sampling: dict[str, Any]) -> str:
    """The key of one request: base URL, model, every message and the sampling parameters."""
    payload = json.dumps(
        {"base_url": base_url.rstrip("/"), "model": model, "messages": messages, "sampling": sampling},
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ResponseCache:
    """Answers by key in one SQLite file (opened lazily; one connection per instance and thread).

    Parameters
    ----------
    path : Path
        The database file (its folder is created).
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._db: sqlite3.Connection | None = None

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(_SCHEMA)
            self._db = db
        return self._db

    def get_many(self, keys: list[str]) -> dict[str, tuple[dict[str, Any], float | None]]:
        """The stored ``(response body, latency)`` of the keys that have one."""
        found: dict[str, tuple[dict[str, Any], float | None]] = {}
        db = self._connection()
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT key, body, latency_s FROM answers WHERE key IN ({marks})"  # noqa: S608 - only ? marks
            for key, body, latency in db.execute(query, chunk):
                found[key] = (json.loads(body), latency)
        return found

    def put(self, key: str, body: dict[str, Any], latency_s: float) -> None:
        """Store (or replace) one answer, committed at once."""
        self._connection().execute(
            "INSERT OR REPLACE INTO answers (key, body, latency_s, stored_at) VALUES (?, ?, ?, ?)",
            (key, json.dumps(body), latency_s, time.time()),
        )

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
