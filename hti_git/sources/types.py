"""Values that flow out of ingestion: the cleaned source text and its chunks."""

from __future__ import annotations

import bisect
import hashlib
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SourceText:
    """Cleaned text of one document; every offset in the system points into `text`.

    `page_starts[i]` is the offset where PDF page `i + 1` begins (empty for formats without
    pages). `raw_sha256` is the hash of the file as given, `sha256` the hash of `text`.
    """

    name: str
    text: str
    media_type: str
    raw_sha256: str
    raw_bytes: int
    page_starts: tuple[int, ...] = ()
    warnings: tuple[str, ...] = field(default=(), compare=False)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    @property
    def page_count(self) -> int:
        return len(self.page_starts)

    def page_span(self, page: int) -> tuple[int, int]:
        """The [start, end) offsets of 1-based PDF page `page` in `text`; IndexError if out of range."""
        if not 1 <= page <= len(self.page_starts):
            raise IndexError(f"page {page} not in 1..{len(self.page_starts)}")
        end = self.page_starts[page] if page < len(self.page_starts) else len(self.text)
        return self.page_starts[page - 1], end

    def pages_for(self, start: int, end: int) -> list[int]:
        """1-based PDF page numbers that the span [start, end) touches; [] without a page map."""
        return pages_for(self.page_starts, start, end)


def pages_for(page_starts: tuple[int, ...] | list[int], start: int, end: int) -> list[int]:
    """1-based page numbers that the span [start, end) touches, given where each page starts."""
    if not page_starts:
        return []
    first = bisect.bisect_right(page_starts, start) - 1
    last = bisect.bisect_right(page_starts, max(start, end - 1)) - 1
    return list(range(max(first, 0) + 1, max(last, 0) + 2))


@dataclass(frozen=True)
class Chunk:
    """A window of the source text: `text == source.text[start:end]`."""

    index: int
    start: int
    end: int
    text: str
