"""Response cache: SQLite (WAL) keyed by the sha256 of the canonical request.

Safe under concurrent writers: each thread gets its own connection, WAL lets readers run
beside one writer, and a busy timeout makes writers from other processes wait their turn.
A cache is an optimisation, so a locked or unreadable entry is a miss, never a failed compile.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from hti_git.llm.provider import Completion, Usage
from hti_git.text import canonical_json

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL
)
"""


CACHE_FILE = "cache.sqlite"  # the response cache, under the repository's .git/hti/


def cache_key(model: str, messages: list[dict], schema: dict | None, params: dict[str, Any]) -> str:
    """"sha256:<hex>" of the request; the API key and base URL are deliberately not part of it."""
    payload = {"model": model, "messages": messages, "schema": schema, "params": params}
    return "sha256:" + hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


class ResponseCache:
    """get/put/clear/stats over one SQLite file; `ResponseCache.disabled()` for --no-cache."""

    def __init__(self, path: Path | str | None, *, busy_timeout: float = 30.0):
        self.path = Path(path) if path is not None else None
        self.busy_timeout = busy_timeout
        self.errors = 0  # lookups or writes skipped because the database was busy or unreadable
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = self._conn()
            self._retry_busy(lambda: conn.execute("PRAGMA journal_mode=WAL"))
            self._retry_busy(lambda: conn.execute(_SCHEMA))

    def _retry_busy(self, action) -> None:
        """Run a setup statement, retrying while another process holds the lock.

        Switching to WAL needs an exclusive lock and SQLite reports SQLITE_BUSY for it at once
        instead of calling the busy handler, so several processes opening a new cache together
        must retry by hand.
        """
        deadline = time.monotonic() + self.busy_timeout
        while True:
            try:
                action()
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    @classmethod
    def disabled(cls) -> ResponseCache:
        """A cache that never hits and never stores (--no-cache)."""
        return cls(None)

    @property
    def enabled(self) -> bool:
        return self.path is not None

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            # autocommit: every put is its own short transaction, so writers never hold locks long
            conn = sqlite3.connect(
                self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
            )
            conn.execute(f"PRAGMA busy_timeout={int(self.busy_timeout * 1000)}")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    def get(self, key: str) -> Completion | None:
        """The cached Completion for `key` (marked cached=True), or None."""
        if self.path is None:
            return None
        try:
            row = self._conn().execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            data = json.loads(row[0])
            return Completion(
                text=data["text"],
                json=data.get("json"),
                usage=Usage(**data.get("usage", {})),
                model=data.get("model", ""),
                cached=True,
            )
        except (sqlite3.Error, ValueError, KeyError, TypeError):
            self.errors += 1
            return None

    def put(self, key: str, completion: Completion) -> None:
        """Store `completion` under `key` (last writer wins; identical requests give equal values)."""
        if self.path is None:
            return
        data = {
            "text": completion.text,
            "json": completion.json,
            "usage": asdict(completion.usage),
            "model": completion.model,
        }
        try:
            self._conn().execute(
                "INSERT OR REPLACE INTO responses (key, model, response) VALUES (?, ?, ?)",
                (key, completion.model, canonical_json(data)),
            )
        except sqlite3.Error:
            self.errors += 1

    def clear(self) -> int:
        """Delete every entry; returns how many were removed."""
        if self.path is None:
            return 0
        conn = self._conn()
        removed = conn.execute("DELETE FROM responses").rowcount
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")
        return removed

    def stats(self) -> dict[str, Any]:
        """{"enabled", "path", "entries", "bytes", "models": {model: entries}, "errors"}."""
        if self.path is None:
            return {"enabled": False, "path": None, "entries": 0, "bytes": 0, "models": {}, "errors": 0}
        conn = self._conn()
        rows = conn.execute("SELECT model, COUNT(*) FROM responses GROUP BY model ORDER BY model").fetchall()
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())
        return {
            "enabled": True,
            "path": str(self.path),
            "entries": sum(n for _, n in rows),
            "bytes": size,
            "models": {model: n for model, n in rows},
            "errors": self.errors,
        }

    def close(self) -> None:
        """Close every connection this cache opened (in any thread)."""
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
