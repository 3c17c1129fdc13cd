"""Find a model's verbatim quote in the source: tolerant of whitespace, case, curly quotes and
dashes, and of elisions ("..."), but never fuzzy. A quote that is not there is not found.

Offsets map back one-for-one to the cleaned source text (which keeps its curly quotes), so the
text at a returned span is the document's own text.
"""

from __future__ import annotations

import bisect
import re

# One-for-one folds, so an offset in the folded text is an offset in the original.
_FOLD = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "`": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
    "\u00a0": " ", "\u2007": " ", "\u202f": " ",
})
_ELISION = re.compile(r"\s*(?:\.\s*\.\s*\.|…|\[\s*(?:\.\.\.|…)\s*\]|<omitted>)\s*")
_WRAP = "\"'“”‘’«»"
MIN_CHARS = 2


def normalise(text: str) -> tuple[str, list[int]]:
    """Folded, lower-cased text with single spaces, and each character's offset in `text`."""
    out: list[str] = []
    offsets: list[int] = []
    last_space = True
    for i, ch in enumerate(text.translate(_FOLD)):
        if ch.isspace():
            if not last_space:
                out.append(" ")
                offsets.append(i)
            last_space = True
            continue
        out.append(ch.lower())
        offsets.append(i)
        last_space = False
    return "".join(out), offsets


def _needle(text: str) -> str:
    return normalise(text)[0].strip()


class QuoteLocator:
    """Locates quotes in one text, optionally restricted to a [start, end) range of it."""

    def __init__(self, text: str):
        self.text = text
        self.norm, self.offsets = normalise(text)

    def _range(self, start: int, end: int | None) -> tuple[int, int]:
        lo = bisect.bisect_left(self.offsets, start)
        hi = len(self.offsets) if end is None else bisect.bisect_left(self.offsets, end)
        return lo, hi

    def _find_parts(self, parts: list[str], lo: int, hi: int) -> tuple[int, int] | None:
        at, first = lo, None
        for part in parts:
            i = self.norm.find(part, at, hi)
            if i == -1:
                return None
            first = i if first is None else first
            at = i + len(part)
        if first is None:
            return None
        return self.offsets[first], self.offsets[at - 1] + 1

    def find(self, quote: str, start: int = 0, end: int | None = None) -> tuple[int, int] | None:
        """The [start, end) span of the first occurrence of `quote` within the range, else None.

        An elided quote ("the Company shall ... pay") matches when its parts occur in order; the
        span runs from the first part to the last. Wrapping quote marks and a trailing full stop
        the model added are tolerated.
        """
        lo, hi = self._range(start, end)
        candidates = [quote]
        stripped = quote.strip().strip(_WRAP).rstrip(".,;:").strip().strip(_WRAP)
        if stripped != quote.strip():
            candidates.append(stripped)
        for candidate in candidates:
            parts = [p for p in (_needle(x) for x in _ELISION.split(candidate)) if p]
            if not parts or sum(len(p) for p in parts) < MIN_CHARS:
                continue
            span = self._find_parts(parts, lo, hi)
            if span is not None:
                return span
        return None
