"""The shared data beside the checkout (CUAD contracts), which some tests compile.

CI provides it, so there a missing folder is a failure; elsewhere those tests skip, and say why
(pytest prints skip reasons: `-rs` is in addopts).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("HTI_SHARED", REPO_ROOT.parent / "shared"))
CONTRACTS = SHARED / "data" / "cuad" / "contracts"


def require_shared(path: Path = CONTRACTS) -> Path:
    """`path` when it exists; else fail under CI (CI=true or HTI_REQUIRE_SHARED=1), skip elsewhere."""
    if path.exists():
        return path
    why = f"shared data not found at {path}; set HTI_SHARED to the folder holding data/cuad/contracts"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes") or os.environ.get("HTI_REQUIRE_SHARED") == "1":
        pytest.fail(f"{why} (CI must provide it)", pytrace=False)
    pytest.skip(why)
