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


# -- whole sentences around located words -----------------------------------------------------------

MAX_SENTENCE_CHARS = 800  # a "sentence" longer than this narrows to its clause around the anchor
# Ends of sentences, paragraphs and list items. A full stop counts only before a capital, a digit
# or an opening bracket/quote, and not after an abbreviation (checked in _is_end).
_BOUNDARY = re.compile(
    r"[.!?][\"”’')\]]*\s+(?=[\"“‘(\[]?[A-Z0-9])"
    r"|\n[ \t]*\n"
    r"|\n(?=[ \t]*(?:\([a-zA-Z0-9]{1,4}\)|[a-z]\.|\d{1,2}(?:\.\d{1,3})*\.?|(?:Section|SECTION|Article|ARTICLE)\b"
    r"|[•·▪‣◦\-–])[ \t])"
)
_CLAUSE = re.compile(r"[;:][ \t\n]+")
_ABBREVIATIONS = {
    "inc", "co", "corp", "ltd", "llc", "l.l.c", "lp", "l.p", "plc", "no", "nos", "mr", "mrs", "ms", "dr", "st",
    "sec", "art", "u.s", "e.g", "i.e", "etc", "vs", "v", "jr", "sr", "p", "pp", "para", "approx", "dept",
    "fig", "incl", "n.a", "s.a", "n.v", "b.v", "ave", "mt",
}


def _is_end(text: str, m: re.Match) -> bool:
    """False for a full stop after an abbreviation, an initial or a short section number."""
    if text[m.start()] != ".":
        return True
    word_start = m.start()
    while word_start > 0 and not text[word_start - 1].isspace() and text[word_start - 1] not in "(\"“":
        word_start -= 1
    word = text[word_start:m.start()].lower().strip("(\"“")
    if word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
        return False
    return not (word.isdigit() and len(word) <= 2)  # "Section 7. Term" or a list number


def _end_of(m: re.Match) -> int:
    """Where the text before boundary `m` ends (keeping its full stop and closing quote)."""
    return m.start() + len(m.group().rstrip())


def widen_to_sentence(text: str, start: int, end: int, limit: int = MAX_SENTENCE_CHARS) -> tuple[int, int]:
    """The span of the sentence (or list item, or clause of an over-long sentence) holding
    text[start:end]; never cut mid-word, at most about `limit` characters beyond the words given."""
    lo, hi = max(0, start - limit), min(len(text), end + limit)
    s = None
    for m in _BOUNDARY.finditer(text, lo, min(len(text), start + 8)):
        if m.end() <= start and _is_end(text, m):
            s = m.end()
    e = None
    for m in _BOUNDARY.finditer(text, max(start, end - 2), hi):
        if _is_end(text, m):
            e = _end_of(m)
            break
    if s is None:
        s = _word_start(text, lo) if lo > 0 else 0
    if e is None:
        e = _word_end(text, hi) if hi < len(text) else len(text)
    if e - s > limit + (end - start):
        # an over-long sentence: the clause (between ; or :) around the words, else a window of words
        for m in _CLAUSE.finditer(text, s, start):
            s = m.end()
        m = _CLAUSE.search(text, end, e)
        if m:
            e = m.start() + 1
        if e - s > limit + (end - start):
            half = limit // 2
            s = max(s, _word_start(text, start - half))
            e = min(e, _word_end(text, end + half))
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return min(s, start), max(e, end)


def _word_start(text: str, at: int) -> int:
    at = max(0, at)
    while 0 < at < len(text) and not text[at - 1].isspace():
        at += 1
    return at


def _word_end(text: str, at: int) -> int:
    at = min(len(text), at)
    while 0 < at < len(text) and not text[at].isspace():
        at -= 1
    return at
