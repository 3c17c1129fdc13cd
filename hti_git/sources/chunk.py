"""Split a source text into overlapping chunks (paper §3.3: ~30,000 characters, 2,000 overlap).

Boundaries are content-defined, so an edit moves only the chunks it touches: a chunk ends at the
break in the last quarter of its window whose surrounding text hashes lowest. That choice depends
on the text near the break, not on where it sits, so after an insertion the same break (and every
later boundary) is found again unless the edit lands right next to it; unchanged chunks then hit
the model response cache. Sizes stay within 75-100% of `size`; each chunk after the first starts
`overlap` characters before the previous end, on a word boundary.
"""


from __future__ import annotations

import re
import zlib

from hti_git.errors import UsageError
from hti_git.sources.types import Chunk

WINDOW_START = 0.75  # a chunk ends between 75% and 100% of the size
_BREAKS = (re.compile(r"\n[ \t]*\n"), re.compile(r"\n"), re.compile(r"[.;:!?][\"”’')]*[ \t]+"), re.compile(r"[ \t]+"))
_CONTEXT = 40  # characters either side of a break that decide its hash


def chunk_text(text: str, size: int = 30_000, overlap: int = 2_000) -> list[Chunk]:
    """Overlapping chunks covering `text` whose boundaries depend on local content only."""
    if size <= 0 or overlap < 0 or overlap >= size:
        raise UsageError(f"invalid chunking: size={size}, overlap={overlap} (need 0 <= overlap < size)")
    chunks: list[Chunk] = []
    start, n = 0, len(text)
    while start < n:
        end = n if n - start <= size else _content_break(text, start + max(1, int(size * WINDOW_START)), start + size)
        chunks.append(Chunk(len(chunks), start, end, text[start:end]))
        if end >= n:
            break
        nxt = max(end - overlap, start + 1)
        while nxt < end and not text[nxt - 1].isspace():  # start on a word, never inside one
            nxt += 1
        start = nxt
    return chunks


def _content_break(text: str, lo: int, hi: int) -> int:
    """The break in text[lo:hi] of the strongest kind present whose neighbourhood hashes lowest."""
    for pattern in _BREAKS:
        best: tuple[int, int] | None = None
        for m in pattern.finditer(text, lo, hi):
            at = m.end()
            key = zlib.crc32(text[max(0, at - _CONTEXT): at + _CONTEXT].encode("utf-8"))
            if best is None or key < best[0]:
                best = (key, at)
        if best is not None:
            return best[1]
    return hi
