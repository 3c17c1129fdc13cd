"""Fixtures for `hti-git eval`: a real index repository (fast compile) and CUAD questions for it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DOC = "slingerbaginc-05-27-2020-ex-10-7-consulting-agreement"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "eval"


def cuad_questions(doc: str = DOC) -> list[dict]:
    """The CUAD questions for `doc` shipped in examples/eval/qa.jsonl (CC BY 4.0)."""
    rows = [json.loads(line) for line in (EXAMPLES / "qa.jsonl").read_text().splitlines() if line.strip()]
    return [r for r in rows if r["doc"] == doc]


def write_questions(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def repo(compiled_repo):
    return compiled_repo


@pytest.fixture
def questions_file(tmp_path) -> Path:
    """Eight CUAD questions on the fixture contract: four values, two Yes, two No."""
    rows = cuad_questions()
    pick = {"Parties", "Agreement Date", "Governing Law", "Expiration Date", "Anti-Assignment",
            "Termination For Convenience", "Non-Compete", "Audit Rights"}
    return write_questions(tmp_path / "qa.jsonl", [r for r in rows if r["category"] in pick])
