"""Split a source text into overlapping chunks (paper §3.3: ~30,000 chars, 2,000 overlap)."""

from __future__ import annotations

from hti_git.errors import UsageError
from hti_git.sources.types import Chunk


def chunk_text(text: str, size: int = 30_000, overlap: int = 2_000) -> list[Chunk]:
    """Chunks covering `text`; each ends at a paragraph or sentence break near `size` when it can."""
    if size <= 0 or overlap < 0 or overlap >= size:
        raise UsageError(f"invalid chunking: size={size}, overlap={overlap} (need 0 <= overlap < size)")
    chunks: list[Chunk] = []
    start = 0
    n = len(text)
    while start < n:
        end = min(start + size, n)
        if end < n:
            end = _soft_break(text, start + size // 2, end)
        chunks.append(Chunk(len(chunks), start, end, text[start:end]))
        if end >= n:
            break
        start = max(end - overlap, start + 1)
        # Start the next chunk on a word boundary so no token is cut in two.
        while start < end and not text[start - 1].isspace():
            start += 1
    return chunks


def _soft_break(text: str, lo: int, hi: int) -> int:
    """The best break in text[lo:hi]: a blank line, else a sentence end, else a space, else hi."""
    for sep in ("\n\n", ". ", "\n", " "):
        at = text.rfind(sep, lo, hi)
        if at != -1:
            return at + len(sep)
    return hi
