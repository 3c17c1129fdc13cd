"""The evaluation's own cache: answers and judge rulings by key, so an interrupted run resumes.

It stores what answering *cost the first time* (the model's response cache would report a re-run as
free), under `.git/hti/eval/answers.sqlite`. Keys are sha256 over canonical JSON of everything that
decides the result: system, commit or source hash, question, method, model, prompts, budgets.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from hti_git.text import canonical_sha256

CACHE_FILE = "answers.sqlite"


def eval_key(**parts: Any) -> str:
    """"sha256:<hex>" of the canonical JSON of `parts`."""
    return canonical_sha256(parts)


class EvalCache:
    """A key -> JSON store in SQLite (WAL, so two evals can share it); disabled when path is None."""

    def __init__(self, path: Path | None):
        self._db: sqlite3.Connection | None = None
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, timeout=30, isolation_level=None)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
        except sqlite3.OperationalError:
            pass  # another process is switching it right now; the default journal still works
        self._db.execute("CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value TEXT NOT NULL)")

    def get(self, key: str) -> Any | None:
        if self._db is None:
            return None
        row = self._db.execute("SELECT value FROM entries WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, value: Any) -> None:
        if self._db is None:
            return
        self._db.execute("INSERT OR REPLACE INTO entries (key, value) VALUES (?, ?)",
                         (key, json.dumps(value, sort_keys=True, ensure_ascii=False)))

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
