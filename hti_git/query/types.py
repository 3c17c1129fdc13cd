"""The values a question produces: an answer, its citations, its cost and its path."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Citation:
    """Evidence for an answer: a page (or source.txt on a fallback) and a span of source.txt."""

    doc: str
    page: str
    start: int
    end: int
    lines: tuple[int, int]
    pages: list[int] = field(default_factory=list)
    text: str = ""

    @property
    def source_link(self) -> str:
        return f"{self.doc}/source.txt#L{self.lines[0]}-L{self.lines[1]}"


@dataclass
class Step:
    """One move of navigation: which page, what was decided, and why."""

    page: str
    action: str  # read | open | follow | descend | jump | up | level-up | route | answer | fallback | skip | drop | stop
    score: float = 0.0
    note: str = ""
    tokens: int = 0  # model tokens of the step; on a `fast` "read", the tokens of the passage read


@dataclass
class Answer:
    question: str
    answer: str
    found: bool
    fallback: bool = False
    rev: str = "HEAD"
    commit: str | None = None
    method: str = "fast"
    citations: list[Citation] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=lambda: {"calls": 0, "cached_calls": 0, "input_tokens": 0, "output_tokens": 0})
    trace: list[Step] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for c in data["citations"]:
            c["lines"] = list(c["lines"])
        return data
