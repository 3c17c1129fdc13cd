"""Question sets: JSON Lines with `question`, `answer` (the reference) and optional `doc`, `evidence`.

    {"doc": "slingerbag...", "category": "Governing Law", "question": "Which state's law governs?",
     "answer": "New York", "evidence": ["...the laws of the State of New York..."], "kind": "value"}

`kind` (yes-no | value) is optional: a reference of exactly Yes or No is a yes/no question whatever
its kind says (CUAD files some Yes/No answers under value categories). A question the document does
not answer has a reference such as "Not stated in the filing" or "Not in the document", and no
evidence: "not found" is its right answer.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from hti_git.errors import UsageError


@dataclass(frozen=True)
class Question:
    """One question with its reference answer and, when known, the gold evidence passages."""

    question: str
    answer: str
    doc: str | None = None
    category: str = ""
    kind: str = "value"
    evidence: tuple[str, ...] = field(default_factory=tuple)
    line: int = 0

    @property
    def yes_no(self) -> bool:
        return self.answer.strip().lower().rstrip(".") in ("yes", "no")

    @property
    def id(self) -> str:
        """A stable id from doc and question text (line numbers move when a file is edited)."""
        raw = json.dumps([self.doc, self.question], ensure_ascii=False)
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:12]


def parse_questions(text: str, name: str = "questions") -> list[Question]:
    """Questions from JSON Lines text; UsageError names the first bad line."""
    out: list[Question] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise UsageError(f"{name}:{number}: not JSON ({exc})") from None
        if not isinstance(row, dict):
            raise UsageError(f"{name}:{number}: expected a JSON object")
        question, answer = row.get("question"), row.get("answer")
        if not isinstance(question, str) or not question.strip():
            raise UsageError(f"{name}:{number}: 'question' must be a non-empty string")
        if not isinstance(answer, str):
            raise UsageError(f"{name}:{number}: 'answer' (the reference) must be a string")
        evidence = row.get("evidence") or []
        if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
            raise UsageError(f"{name}:{number}: 'evidence' must be a list of strings")
        doc = row.get("doc")
        if doc is not None and (not isinstance(doc, str) or not doc.strip()):
            raise UsageError(f"{name}:{number}: 'doc' must be a document name")
        kind = str(row.get("kind") or ("yes-no" if answer.strip().lower() in ("yes", "no") else "value"))
        out.append(Question(question.strip(), answer.strip(), doc, str(row.get("category") or ""), kind,
                            tuple(evidence), number))
    if not out:
        raise UsageError(f"{name}: no questions")
    return out


def load_questions(path: str | Path) -> list[Question]:
    """Questions from a JSON Lines file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    return parse_questions(text, path.name)
