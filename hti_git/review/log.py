"""log: the compile history, read from commit trailers (HTI-Doc, HTI-Model, HTI-Tokens-In, ...).

Recompiles land on their own branches (`hti/<doc>/<label>`), so the history walks every local
branch by default and says which branches hold each compile.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hti_git.store import IndexRepo


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def compile_log(repo: IndexRepo, doc: str | None = None, rev: str | None = None,
                max_count: int = 200) -> list[dict[str, Any]]:
    """Compile commits (newest first) on `rev`, or on every local branch when `rev` is None."""
    revs = [rev] if rev else (repo.branch_names() or ["HEAD"])
    current = repo.current_branch()
    rows: dict[str, dict[str, Any]] = {}
    for name in revs:
        for commit in repo.log(name, paths=[doc] if doc else None, max_count=max_count):
            trailers = commit["trailers"]
            if "HTI-Doc" not in trailers or (doc and trailers["HTI-Doc"] != doc):
                continue
            row = rows.get(commit["sha"])
            if row is None:
                row = rows[commit["sha"]] = {
                    "sha": commit["sha"],
                    "date": commit["date"],
                    "author": commit["author"],
                    "subject": commit["subject"],
                    "doc": trailers["HTI-Doc"],
                    "method": trailers.get("HTI-Method"),
                    "model": trailers.get("HTI-Model"),
                    "source_sha256": _prefixed(trailers.get("HTI-Source-SHA256")),
                    "schema": trailers.get("HTI-Schema"),
                    "pages": _int(trailers.get("HTI-Pages")),
                    "calls": _int(trailers.get("HTI-Calls")),
                    "tokens_in": _int(trailers.get("HTI-Tokens-In")),
                    "tokens_out": _int(trailers.get("HTI-Tokens-Out")),
                    "branches": [],
                }
            if rev is None:
                row["branches"].append(name)
    for row in rows.values():
        # The checked-out branch first, then recompile branches, so "main" reads first when shared.
        row["branches"].sort(key=lambda b: (b != current, b))
    ordered = sorted(rows.values(), key=lambda r: datetime.fromisoformat(r["date"]), reverse=True)
    return ordered[:max_count]


def _prefixed(digest: str | None) -> str | None:
    """A hash as "sha256:<hex>" (earlier compile commits wrote the bare hex)."""
    if not digest:
        return digest
    return digest if digest.startswith("sha256:") else "sha256:" + digest
