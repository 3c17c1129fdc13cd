"""Small text helpers every layer shares: canonical JSON and its hash, one-line text, column gaps, table rows and
what a row needs to be read (its table's units and column headings).

No package imports, so any module may use them without an import cycle.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

# Three or more spaces between words: a table's column gap, or a line break a text export kept when it
# joined a page's lines into one
GAP = re.compile(r"(?<=\S)[ \t]{3,}(?=\S)")
PIPE_ROW = re.compile(r"^\s*\|.*\|\s*$")  # a Markdown table's row
CELL_SEP = " | "  # between the cells of a row of an HTML or Word table (sources/html.py, sources/docx.py)
_FIGURE = re.compile(r"\(?[-\u2212]?\$?\d[\d,]*(?:\.\d+)?\)?%?|[\u2014\u2013-]")  # 1,234 (56) -4 12.5% —
_UNIT = frozenset({"$", "%", ")%", "%)"})
MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"  # a month's name or abbreviation
_DATE = re.compile(rf"\b{MONTH}[ \t]+\d{{1,2}},?[ \t]+\d{{4}}\b", re.IGNORECASE)  # "April 26, 2016": one cell


def is_table_row(line: str) -> bool:
    """A table's row: of a pipe table, of three columns or more set apart by gaps, of cells joined by " | "
    (three or more, or a label and its figure) as HTML and Word tables are written, or as PDF text gives a
    row (columns one space apart): a label ending in two figures or more ("Net income $ 93,736 $ 96,995"),
    or a line of figures mostly ("2024 Change 2023 Change 2022"); not a line ending in a date."""
    if PIPE_ROW.match(line) or len(GAP.findall(line)) >= 2:
        return True
    cells = line.split(CELL_SEP)  # cells as an HTML or Word table's row is written: "iPad | 7,162 | 5,791"
    if len(cells) >= 3 or len(cells) == 2 and _FIGURE.fullmatch(cells[1].strip()):
        return True
    words = [w for w in _DATE.sub("date", line).split() if w not in _UNIT]
    figures = [bool(_FIGURE.fullmatch(w)) for w in words]
    trailing = next((i for i, f in enumerate(reversed(figures)) if not f), len(figures))
    return trailing >= 2 or (sum(figures) >= 2 and 2 * sum(figures) > len(words))


# A table's note of its units, in the caption above it: "(in millions)", "(dollars in millions)",
# "(In millions, except number of shares, which are reflected in thousands, and per-share amounts)"
_UNITS_NOTE = re.compile(r"\(([^()]{0,40}?\bin (?:millions|thousands|billions)\b[^()]{0,200})\)", re.IGNORECASE)
UNITS_REACH = 3_000  # characters above a row where its table's note may be


def table_units(text: str, row_start: int) -> str:
    """The units the table of the row at `row_start` states above it ("in millions, except number of
    shares, which are reflected in thousands"): the last note within UNITS_REACH characters before
    the row, else "". A row alone says "41,354" where the table means thousands of shares."""
    notes = list(_UNITS_NOTE.finditer(text, max(0, row_start - UNITS_REACH), row_start))
    return " ".join(notes[-1].group(1).split()) if notes else ""


# A word of a table's column headings: a period ("Three Months Ended", "June 29, 2024", "2024"), "Change", "%"
_HEADING_WORD = re.compile(rf"(?:{MONTH}|\d{{1,2}},?|(?:19|20)\d\d|ended|ending|months?|weeks?|years?|quarters?|"
                           r"three|six|nine|twelve|fiscal|change|%|\$|as|of|at|and|q[1-4])", re.IGNORECASE)
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_PERIOD = re.compile(r"\b(?:ended|ending|months|weeks|quarters?|years)\b", re.IGNORECASE)
_DATED = re.compile(rf"\b(?:{MONTH}|(?:19|20)\d\d|ended|ending)\b", re.IGNORECASE)  # a heading, not a row's small figures
COLUMNS_REACH = 60  # lines above a row where its table's column headings may be
COLUMNS_CHARS = 200  # the headings shown, at most
LABEL_WORDS = 5  # a line this short without figures, or one ending in ":", is a row's label, not prose


def table_columns(text: str, row_start: int) -> str:
    """The column headings of the table whose row is at `row_start`: the lines above its rows that name
    only periods ("Three Months Ended | Nine Months Ended", "June 29, 2024 | July 1, 2023 | Change",
    "2024 2023 2022"), rows of cells joined by " / " and a PDF's lines by a space, else "". A row alone
    says "19,744" where the table means the nine months ended June 29, 2024."""
    lines = text[max(0, row_start - COLUMNS_REACH * 200):row_start].splitlines()[-COLUMNS_REACH:]
    heading: list[list[str]] = []
    for line in reversed(lines):
        cells = row_cells(line)
        words = " ".join(cells).split()
        if not words:
            continue
        if _is_heading(words):  # a row of a table's cells, or a line of text
            heading.append(cells if PIPE_ROW.match(line) else [" ".join(words)])
            continue
        rest = " ".join(cells[1:])
        if rest and _is_heading(rest.split()) and _DATED.search(rest):  # "Net sales: | Years ended": a label, then headings
            heading.append(cells[1:] if PIPE_ROW.match(line) else [rest])
            continue
        if heading:
            break
        if is_table_row(line):
            continue  # a row of the table above the one asked about
        if len(words) > LABEL_WORDS and not line.rstrip().endswith(":"):
            break  # prose: the table starts below it
    said = " ".join(" ".join(cells) for cells in heading)
    if len(_YEAR.findall(said)) < 2 and not _PERIOD.search(said):
        return ""  # one date alone ("March 31, 2024" of "March 31, 2024 to May 4, 2024:") is a row's label
    out = ""
    for cells in reversed(heading):  # a row of cells after " / "; a PDF's line after a space
        out += (" / " if out and len(cells) > 1 else " " if out else "") + " | ".join(cells)
    return one_line(out, COLUMNS_CHARS)


def row_cells(line: str) -> list[str]:
    """A line's cells (of a Markdown row, a row written with " | ", or the line), without empty ones or a
    Markdown table's header rule."""
    cells = [" ".join(c.split()) for c in line.strip().strip("|").split("|")]
    return [c for c in cells if c and not re.fullmatch(r":?-+:?", c)]


def _is_heading(words: list[str]) -> bool:
    return all(_HEADING_WORD.fullmatch(w) for w in words)


def table_note(text: str, start: int, end: int, shown: str | None = None) -> str:
    """What a table's row in text[start:end] needs to be read: its table's units and column headings
    ("In millions; columns: Nine Months Ended / June 29, 2024 | July 1, 2023"), each unless `shown`
    (what is shown with the row; by default the span itself) holds it; "" for prose. The row "iPad |
    7,162 | 5,791 | 19,744 | 21,857" says which figure is the nine months' only with its headings."""
    rows, at = [], start  # the span's rows: the notes are those of its first row of figures, not of headings
    for line in text[start:end].splitlines(keepends=True):
        if is_table_row(line):
            rows.append(at)
            if not _is_heading(" ".join(row_cells(line)).split()):
                break
        at += len(line)
    if not rows:
        return ""
    row = rows[-1]
    seen = _words(text[start:end] if shown is None else shown)
    units = table_units(text, row)
    columns = table_columns(text, row)
    return "; ".join(n for n, words in ((units, units), (f"columns: {columns}", columns))
                     if words and _words(words) not in seen)


def _words(text: str) -> str:
    """Text's words as cells show them, for telling whether a note's words are shown already."""
    return " ".join(w for line in text.replace(" / ", " ").lower().splitlines() for w in " ".join(row_cells(line)).split())


def canonical_json(value: Any) -> str:
    """Sorted-key, compact, UTF-8 JSON: the one serialisation every hash in hti-git is taken over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_sha256(value: Any) -> str:
    """'sha256:<hex>' of the canonical JSON of `value`."""
    return "sha256:" + hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def one_line(text: Any, limit: int) -> str:
    """Whitespace collapsed and cut to `limit` characters (with an ellipsis)."""
    text = " ".join(str(text if text is not None else "").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def clean_line(value: Any, limit: int) -> str:
    """Model or document text made safe for a listing line: one line, printable, no Markdown link
    brackets, bounded."""
    text = " ".join(str(value if value is not None else "").split())
    text = "".join(ch for ch in text if ch.isprintable()).replace("[", "(").replace("]", ")")
    return one_line(text, limit)
