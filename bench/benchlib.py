"""What every benchmark needs: the repository on sys.path, the shared CUAD data, a Git identity."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SHARED = Path(os.environ.get("HTI_SHARED", ROOT.parent / "shared"))
CUAD = SHARED / "data" / "cuad"


def require_cuad() -> Path:
    """The CUAD folder, or exit with a one-line hint when the shared data is not there."""
    if not (CUAD / "qa.jsonl").exists():
        sys.exit(f"shared CUAD data not found at {CUAD}; set HTI_SHARED to the shared folder")
    return CUAD


def bench_identity(name: str = "bench") -> None:
    """A Git identity for the commits a benchmark makes (kept if the user has one set)."""
    for key, value in {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": f"{name}@example.com",
                       "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": f"{name}@example.com"}.items():
        os.environ.setdefault(key, value)
