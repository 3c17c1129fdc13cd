"""Character offsets of source.txt -> line numbers and PDF page numbers, for citations."""

from __future__ import annotations

import bisect
import re

from hti_git.sources.types import pages_for


class LineMap:
    """Offsets -> 1-based line numbers of the source text, and PDF page numbers when it has pages."""

    def __init__(self, text: str, page_starts: tuple[int, ...] | list[int] = ()):
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.page_starts = tuple(page_starts)

    def pages(self, start: int, end: int) -> list[int]:
        return pages_for(self.page_starts, start, end)

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def lines(self, start: int, end: int) -> tuple[int, int]:
        return self.line(start), self.line(max(start, end - 1))
