"""Strip download artifacts from extracted text, page by page, keeping the page map (paper §3.3).

Rules, each removing only what a download adds, never document wording:
- characters: CRLF/CR newlines, form feeds, NBSP, zero-width marks, pdfium's U+FFFE hyphen, tabs,
  Unicode canonical twins (NFC);
- EDGAR banners: `Source: COMPANY, 10-K, 3/1/2020` lines, `<PAGE>` markers, SGML tag lines,
  `Table of Contents` running links (the first one is kept: it may be the real heading);
- running headers/footers: a line seen near the top or bottom of a page and on most pages
  (digits ignored, so `Page 3 of 10` matches `Page 4 of 10`); its first occurrence is kept;
- bare page-number lines (`3`, `- 3 -`, `Page 3 of 10`) as a page's first or last line, next to
  a removed header or banner, or counting up a page apart through the text (re-flowed EDGAR pages);
- hyphenation split across a line end (`agree-\\nment` -> `agreement`), lowercase on both sides,
  unless the hyphen is real (`non-\\nexclusive`, or the hyphenated word occurs elsewhere);
- runs of blank lines collapse to one blank line.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Sequence

__all__ = ["clean_pages", "clean_text", "split_pages"]

# Lines in the first/last EDGE non-blank lines of a page are where headers and footers live.
EDGE = 3
# Folios of re-flowed pages are at least this many non-blank lines apart; table cells are closer.
FOLIO_GAP = 15

_CHAR_FIXES = str.maketrans({
    "\r": "\n",
    "\f": "\n",
    "\v": "\n",
    "\u00a0": " ",
    "\u2028": "\n",
    "\u2029": "\n",
    "\u200b": None,
    "\u200c": None,
    "\u200d": None,
    "\ufeff": None,
    # pdfium reports some hyphen glyphs as U+FFFE (or U+0002); in CUAD PDFs they are real hyphens.
    "\ufffe": "-",
    "\x02": "-",
})
_SOFT_HYPHEN_AT_EOL = re.compile("\u00ad(?=\n)")

_PAGE_NUMBER = re.compile(
    r"(?:(?i:page)\s*)?[-\u2013\u2014]?\s*(?:\d{1,4}|(?=[ivxlc])c{0,3}(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3}))"
    r"\s*[-\u2013\u2014]?"
    r"(?:\s*(?:(?i:of)|/)\s*\d{1,4})?"
)
# Forms that cannot be a sentence or a list item, so they go wherever they stand.
_PAGE_NUMBER_ANYWHERE = re.compile(
    r"(?i:page)\s+\d{1,4}(?:\s+(?i:of)\s+\d{1,4})?|[-\u2013\u2014]\s*\d{1,4}\s*[-\u2013\u2014]"
)
_EDGAR_SOURCE = re.compile(r"Source:\s+\S.*,\s+[A-Z0-9][A-Z0-9/\-. ]*,\s+\d{1,2}/\d{1,2}/\d{4}")
_EDGAR_TAG = re.compile(
    r"(?i:</?(?:PAGE|DOCUMENT|TEXT|TABLE|CAPTION|S|C|FN|PRE)>\s*\d*"
    r"|<(?:TYPE|SEQUENCE|FILENAME|DESCRIPTION)>.*)"
)
_TOC_LINK = re.compile(r"(?i:(?:back\s+to|return\s+to)\s+(?:the\s+)?table\s+of\s+contents)")
_TOC = re.compile(r"(?i:table\s+of\s+contents)")
_EDGAR_PAGE_SPLIT = re.compile(r"^[ \t]*<PAGE>[ \t]*\d*[ \t]*$", re.MULTILINE | re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")

_HYPHEN_EOL = re.compile(r"(?<=[a-z])-\n[ \t]*(?=[a-z])")
_WORD_BEFORE = re.compile(r"[A-Za-z]+$")
_WORD_AFTER = re.compile(r"[a-z]+")
_HYPHENATED = re.compile(r"[A-Za-z]+-[a-z]+")
_WORD = re.compile(r"[A-Za-z]+")
# A line-end hyphen after these is a compound's hyphen (non-exclusive, self-insured), not a break.
_COMPOUND_PREFIXES = frozenset(
    "non self co ex cross multi third well anti semi sub pre post inter intra over under full part "
    "long short high low end re de pro quasi counter first second so one two".split()
)
_TRAILING_SPACE = re.compile(r"[ \t]+$", re.MULTILINE)
_BLANK_RUN = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")


def split_pages(text: str) -> list[str]:
    """Split plain text into pages at form feeds and EDGAR `<PAGE>` markers (markers are dropped)."""
    return [page for part in text.split("\f") for page in _EDGAR_PAGE_SPLIT.split(part)]


def clean_text(text: str) -> str:
    """Clean a text without a page map (HTML, DOCX, plain text); form feeds still split pages."""
    pages = split_pages(text)
    # Without page breaks there is no page edge, so a number on the first or last line is content.
    cleaned, _ = clean_pages(pages, edge_numbers=len(pages) > 1)
    return cleaned


def clean_pages(pages: Sequence[str], *, edge_numbers: bool = True) -> tuple[str, tuple[int, ...]]:
    """Clean page texts and join them; return the text and the offset where each page starts.

    The result ends with one newline (or is empty) and `len(starts) == len(pages)`; a page left
    empty by cleaning starts where the next one does. `edge_numbers=False` keeps a bare number on a
    page's first or last line.
    """
    page_lines = [_normalise_chars(page).split("\n") for page in pages]
    page_lines = _drop_artifact_lines(page_lines, edge_numbers)
    text, starts = _join(page_lines)
    text, starts = _sub_tracked(_HYPHEN_EOL, _hyphen_joiner(text), text, starts)
    text, starts = _sub_tracked(_BLANK_RUN, lambda m: "\n\n", text, starts)
    return _strip_tracked(text, starts)


def _normalise_chars(page: str) -> str:
    page = page.replace("\r\n", "\n")
    page = _SOFT_HYPHEN_AT_EOL.sub("-", page).replace("\u00ad", "")
    page = page.translate(_CHAR_FIXES)
    # NFC folds canonical twins: pdfium reports ';' as U+037E GREEK QUESTION MARK, which breaks search.
    if not unicodedata.is_normalized("NFC", page):
        page = unicodedata.normalize("NFC", page)
    if "\t" in page:
        page = "\n".join(line.expandtabs() for line in page.split("\n"))
    return _TRAILING_SPACE.sub("", page)


def _drop_artifact_lines(page_lines: list[list[str]], edge_numbers: bool) -> list[list[str]]:
    """Remove banner, running header/footer and page-number lines; keep everything else."""
    drop = [[False] * len(lines) for lines in page_lines]
    edges = [_edge_indexes(lines, EDGE) for lines in page_lines]
    folio_lines = [_edge_indexes(lines, 1) if edge_numbers else set() for lines in page_lines]
    running = _running_lines(page_lines, edges)
    seen_running: set[str] = set()
    toc_seen = False
    for p, lines in enumerate(page_lines):
        for i, line in enumerate(lines):
            stripped = line.strip()
            if not stripped:
                continue
            if _EDGAR_SOURCE.fullmatch(stripped) or _EDGAR_TAG.fullmatch(stripped):
                drop[p][i] = True
            elif _TOC_LINK.fullmatch(stripped):
                drop[p][i] = True
            elif _TOC.fullmatch(stripped):
                drop[p][i] = toc_seen
                toc_seen = True
            elif _PAGE_NUMBER_ANYWHERE.fullmatch(stripped):
                drop[p][i] = True
            elif i in folio_lines[p] and _PAGE_NUMBER.fullmatch(stripped):
                drop[p][i] = True
            else:
                key = _line_key(stripped)
                if key in running:
                    drop[p][i] = key in seen_running
                    seen_running.add(key)
    for p, lines in enumerate(page_lines):
        _drop_numbers_beside_dropped(lines, drop[p])
    _drop_folio_runs(page_lines, drop)
    return [
        [line for line, gone in zip(lines, dropped, strict=True) if not gone]
        for lines, dropped in zip(page_lines, drop, strict=True)
    ]


def _edge_indexes(lines: list[str], depth: int) -> set[int]:
    nonblank = [i for i, line in enumerate(lines) if line.strip()]
    return set(nonblank[:depth]) | set(nonblank[-depth:])


def _line_key(stripped: str) -> str:
    return _SPACES.sub(" ", _DIGITS.sub("#", stripped.lower()))


def _running_lines(page_lines: list[list[str]], edges: list[set[int]]) -> set[str]:
    """Keys of lines found at some page's edge and on most pages: running headers and footers."""
    n = len(page_lines)
    if n < 3:
        return set()
    at_edge: set[str] = set()
    numbers: dict[str, list[tuple[str, ...]]] = {}
    for lines, edge in zip(page_lines, edges, strict=True):
        seen = set()
        for i, line in enumerate(lines):
            stripped = line.strip()
            if len(stripped) < 4 or _PAGE_NUMBER.fullmatch(stripped):
                continue
            key = _line_key(stripped)
            if i in edge:
                at_edge.add(key)
            if key not in seen:
                seen.add(key)
                numbers.setdefault(key, []).append(tuple(_DIGITS.findall(stripped)))
    need = max(3, math.ceil(n / 2))
    return {key for key in at_edge if len(numbers[key]) >= need and _numbers_like_a_folio(numbers[key])}


def _numbers_like_a_folio(numbers: list[tuple[str, ...]]) -> bool:
    """True if the digits in a repeated line are fixed except one counting up, like a page number.

    "Clause 2.1 ... lot 2" on page 2 and "Clause 3.1 ... lot 3" on page 3 vary in two places:
    that is numbered content, not a running header.
    """
    varying = [column for column in zip(*numbers, strict=True) if len(set(column)) > 1]
    if not varying:
        return True
    if len(varying) > 1:
        return False
    values = [int(v) for v in varying[0]]
    return all(a < b for a, b in zip(values, values[1:], strict=False))


def _drop_numbers_beside_dropped(lines: list[str], drop: list[bool]) -> None:
    """A bare number next to a removed header or banner is a page number (EDGAR joins pages, so a
    footer number and the next header number can sit together: up to two numbers in a row go)."""
    nonblank = [i for i, line in enumerate(lines) if line.strip()]
    number = {i for i in nonblank if _PAGE_NUMBER.fullmatch(lines[i].strip())}
    anchors = {i for i in nonblank if drop[i] and i not in number}
    for _ in range(2):
        found = set()
        for k, i in enumerate(nonblank):
            if i in number and not drop[i]:
                neighbours = nonblank[max(k - 1, 0):k] + nonblank[k + 1:k + 2]
                if any(j in anchors for j in neighbours):
                    found.add(i)
        for i in found:
            drop[i] = True
        anchors = found


def _drop_folio_runs(page_lines: list[list[str]], drop: list[list[bool]]) -> None:
    """Drop bare numbers that count up through the text a page apart (2 ... 3 ... 4): the folios of
    an original whose pages were re-flowed into other pages, so they sit mid-page, even mid-sentence."""
    chains: list[list[tuple[int, int, int, int]]] = []  # (value, position, page, line)
    position = 0
    for p, lines in enumerate(page_lines):
        for i, line in enumerate(lines):
            stripped = line.strip()
            if not stripped or drop[p][i]:
                continue
            position += 1
            if not stripped.isdigit() or len(stripped) > 4:
                continue
            value = int(stripped)
            for chain in chains:
                last_value, last_position = chain[-1][0], chain[-1][1]
                if 1 <= value - last_value <= 2 and position - last_position >= FOLIO_GAP:
                    chain.append((value, position, p, i))
                    break
            else:
                chains.append([(value, position, p, i)])
    for chain in chains:
        if len(chain) >= 3:
            for _, _, p, i in chain:
                drop[p][i] = True


def _join(page_lines: list[list[str]]) -> tuple[str, list[int]]:
    parts: list[str] = []
    starts: list[int] = []
    offset = 0
    for lines in page_lines:
        starts.append(offset)
        page = "\n".join(lines).strip("\n")
        if page:
            parts.append(page + "\n")
            offset += len(page) + 1
    return "".join(parts), starts


def _hyphen_joiner(text: str) -> Callable[[re.Match[str]], str]:
    hyphenated = {w.lower() for w in _HYPHENATED.findall(text)}
    words = {w.lower() for w in _WORD.findall(text)}

    def join(m: re.Match[str]) -> str:
        left_m = _WORD_BEFORE.search(text, max(0, m.start() - 60), m.start())
        right_m = _WORD_AFTER.match(text, m.end())
        left = left_m.group(0).lower() if left_m else ""
        right = right_m.group(0) if right_m else ""
        if f"{left}-{right}" in hyphenated:
            return m.group(0)
        if f"{left}{right}" in words:
            return ""
        return m.group(0) if left in _COMPOUND_PREFIXES else ""

    return join


def _sub_tracked(
    pattern: re.Pattern[str], repl: Callable[[re.Match[str]], str], text: str, offsets: list[int]
) -> tuple[str, list[int]]:
    """re.sub that also moves `offsets` (sorted) so each still points at the same kept character."""
    out: list[str] = []
    new_offsets: list[int] = []
    last = 0
    shift = 0
    k = 0
    for m in pattern.finditer(text):
        new = repl(m)
        while k < len(offsets) and offsets[k] <= m.start():
            new_offsets.append(offsets[k] + shift)
            k += 1
        # An offset inside a replaced span lands where the replacement ends.
        while k < len(offsets) and offsets[k] < m.end():
            new_offsets.append(m.start() + shift + min(offsets[k] - m.start(), len(new)))
            k += 1
        out.append(text[last:m.start()])
        out.append(new)
        shift += len(new) - (m.end() - m.start())
        last = m.end()
    out.append(text[last:])
    new_offsets.extend(o + shift for o in offsets[k:])
    return "".join(out), new_offsets


def _strip_tracked(text: str, offsets: list[int]) -> tuple[str, tuple[int, ...]]:
    lead = len(text) - len(text.lstrip("\n"))
    body = text.strip("\n")
    cleaned = body + "\n" if body else ""
    return cleaned, tuple(min(max(o - lead, 0), len(cleaned)) for o in offsets)
