"""Sentences in legal and business text: where one ends, and the whole sentence around some words.

A full stop ends a sentence only before a capital, a digit or an opening bracket, and not after an
abbreviation ("Inc.", "U.S."), an initial or a short section number; paragraph breaks and list
items ("(a)", "7.10", "Section 4") end one too. In text whose lines are kept (PDF text has no blank
lines), a table's row is a sentence of its own and a filing's "Item 7." or "PART II" line starts one.
Imports only `hti_git.text` (no package module imports this one back): compile, query and sources use it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from hti_git.text import is_table_row

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
    s, e = _within_lines(text, s, e, start, end)
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
    s, e = strip_span(text, s, e)
    return min(s, start), max(e, end)


_LINE_STARTS_SECTION = re.compile(r"[ \t]*(?:ITEM|Item|PART|Part)[ \t]+(?:\d{1,2}[A-C]?|[IVX]{1,4})\b")


def _within_lines(text: str, s: int, e: int, start: int, end: int) -> tuple[int, int]:
    """[s, e) cut at the nearest line breaks around text[start:end] that a sentence does not cross:
    beside a table's row, or before a filing's "Item 7." / "PART II" line."""
    k = text.rfind("\n", s, start)
    while k != -1:
        if _breaks(text, k):
            s = k + 1
            break
        k = text.rfind("\n", s, k)
    k = text.find("\n", end, e)
    while k != -1:
        if _breaks(text, k):
            e = k
            break
        k = text.find("\n", k + 1, e)
    return s, e


def _breaks(text: str, k: int) -> bool:
    """Whether the line break at `k` ends a sentence whatever the punctuation says."""
    before = text[text.rfind("\n", 0, k) + 1:k]
    after_end = text.find("\n", k + 1)
    after = text[k + 1:after_end if after_end != -1 else len(text)]
    return is_table_row(before) or is_table_row(after) or bool(_LINE_STARTS_SECTION.match(after))


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


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int]]:
    """The [start, end) spans of the sentences (and list items, and lines of a paragraph break)
    in text[start:end], stripped of surrounding whitespace."""
    end = len(text) if end is None else end
    at = start
    for m in _BOUNDARY.finditer(text, start, min(len(text), end + 8)):
        if m.end() > end + 1 or not _is_end(text, m):
            continue
        s, e = strip_span(text, at, min(_end_of(m), end))
        if e > s:
            yield s, e
        at = m.end()
    s, e = strip_span(text, at, end)
    if e > s:
        yield s, e


def strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    """[start, end) without the whitespace at either edge of text[start:end]."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def skip_space(text: str, i: int) -> int:
    """The first offset at or after `i` that is not whitespace (len(text) when none is)."""
    while i < len(text) and text[i].isspace():
        i += 1
    return i
