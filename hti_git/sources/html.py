"""HTML to text with the stdlib parser: drop chrome and code, keep blocks, <pre> layout and tables."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from hti_git.text import CELL_SEP

_SKIP = frozenset({"script", "style", "nav", "header", "footer", "noscript", "head", "template", "svg",
                   "iframe", "object", "button", "select",
                   "ix:header"})  # an inline-XBRL filing's machine-readable facts (EDGAR's 10-K and 10-Q)
_BLOCK = frozenset({
    "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details", "div",
    "dl", "dt", "fieldset", "figcaption", "figure", "form", "h1", "h2", "h3", "h4", "h5", "h6", "hr",
    "html", "legend", "li", "main", "ol", "p", "pre", "section", "summary", "table", "tbody", "tfoot",
    "thead", "tr", "ul",
})
# Blocks that stand as paragraphs get a blank line around them; other blocks just a line break.
_PARAGRAPH = frozenset({"blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "ol", "p", "pre", "table", "ul"})
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
                   "source", "track", "wbr"})
_HEADING = {f"h{level}": level for level in range(1, 7)}
_SPACE_RUN = re.compile(r"\s+")
_BREAK_BEFORE = re.compile(r"page-break-before\s*:\s*always|break-before\s*:\s*page", re.IGNORECASE)
_BREAK_AFTER = re.compile(r"page-break-after\s*:\s*always|break-after\s*:\s*page", re.IGNORECASE)
_HIDDEN = re.compile(r"(?:^|;)\s*display\s*:\s*none\b", re.IGNORECASE)


@dataclass
class _Row:
    """A table's row being read: its cells so far, and where in the output the open cell began."""

    cells: list[str] = field(default_factory=list)
    cell_start: int | None = None


_BEFORE = frozenset({"$", "US$", "€", "£", "¥"})  # a cell that is only a currency sign belongs to the next
_AFTER = frozenset({")", "%", ")%", "%)"})  # ... and a closing parenthesis or a per cent sign to the one before


def table_cells(cells: list[str]) -> list[str]:
    """A row's cells as a reader sees them: empty ones (a filing's spacer columns) dropped, a currency
    sign joined to its figure and a closing parenthesis or per cent sign to the figure before it, as
    EDGAR's tables split them: `$ | 391,035`, `(269 | )`, `46.2 | %` read `$391,035`, `(269)`, `46.2%`."""
    out: list[str] = []
    sign = ""
    for cell in cells:
        if not cell:
            continue
        if cell in _BEFORE:
            sign += cell
        elif cell in _AFTER and out and not sign:
            out[-1] += cell
        else:
            out.append(sign + cell)
            sign = ""
    if sign:
        out.append(sign)
    return out


def html_to_text(markup: str) -> str:
    """Visible text of an HTML page: one line per block, `# ` headings, cells joined by ' | '.

    CSS page breaks (EDGAR filings) become form feeds, which cleaning treats as page ends.
    """
    parser = _TextParser()
    parser.feed(markup)
    parser.close()
    parser.end_tables()
    return "".join(parser.out)


class _TextParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.skip_depth = 0
        self.pre_depth = 0
        self.tables: list[_Row] = []  # per open table, the row being read
        self.breaks_after: dict[str, int] = {}
        self.hidden: list[str] = []  # tags of the open elements styled display:none (nothing in them shows)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            if tag not in _VOID:
                self.skip_depth += 1
            return
        if self.skip_depth:
            return
        style = next((value or "" for name, value in attrs if name == "style"), "")
        hides = style and _HIDDEN.search(style) or any(name == "hidden" for name, _ in attrs)
        if tag not in _VOID and (self.hidden and tag == self.hidden[-1] or hides):
            self.hidden.append(tag)  # a hidden element, or one of its tag nested in it: ends at its end tag
            return
        if self.hidden:
            return
        if style and _BREAK_BEFORE.search(style):
            self._newline("\f")
        if tag in _BLOCK:
            self._newline(2 if tag in _PARAGRAPH else 1)
        if tag == "br":
            self.out.append("\n")
        elif tag == "pre":
            self.pre_depth += 1
        elif tag in _HEADING:
            self.out.append("#" * _HEADING[tag] + " ")
        elif tag == "table":
            self.tables.append(_Row())
        elif tag == "tr" and self.tables:
            self._end_row()
        elif tag in ("td", "th") and self.tables:
            row = self.tables[-1]
            self._end_cell(row)
            row.cell_start = len(self.out)  # the cell's text is taken out of `out` when it ends
        if style and _BREAK_AFTER.search(style):
            if tag in _VOID:
                self._newline("\f")
            else:
                self.breaks_after[tag] = self.breaks_after.get(tag, 0) + 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            if tag not in _VOID and self.skip_depth:
                self.skip_depth -= 1
            return
        if self.skip_depth:
            return
        if self.hidden:
            if tag == self.hidden[-1]:
                self.hidden.pop()
            return
        if tag == "pre" and self.pre_depth:
            self.pre_depth -= 1
        elif tag == "table" and self.tables:
            self._end_row()
            self.tables.pop()
        elif tag == "tr" and self.tables:
            self._end_row()
        elif tag in ("td", "th") and self.tables:
            self._end_cell(self.tables[-1])
        if tag in _BLOCK:
            self._newline(2 if tag in _PARAGRAPH else 1)
        if self.breaks_after.get(tag):
            self.breaks_after[tag] -= 1
            self._newline("\f")

    def handle_data(self, data: str) -> None:
        if self.skip_depth or self.hidden or not data:
            return
        if self.pre_depth:
            self.out.append(data)
            return
        data = _SPACE_RUN.sub(" ", data)
        if not self.out or self.out[-1].endswith(("\n", "\f")):
            data = data.lstrip(" ")
        if data:
            self.out.append(data)

    def end_tables(self) -> None:
        """Write the rows of the tables the page never closed: their cells are text too."""
        while self.tables:
            self._end_row()
            self.tables.pop()

    def _end_cell(self, row: _Row) -> None:
        if row.cell_start is not None:
            row.cells.append(" ".join("".join(self.out[row.cell_start:]).split()))
            del self.out[row.cell_start:]
            row.cell_start = None

    def _end_row(self) -> None:
        """Write the row being read as one line of its cells (`table_cells`), if it has any."""
        row = self.tables[-1]
        self._end_cell(row)
        cells = table_cells(row.cells)
        row.cells = []
        if cells:
            self._newline(1)
            self.out.append(CELL_SEP.join(cells))
            self._newline(1)

    def _newline(self, lines: int | str = 1) -> None:
        """End the current line; `lines=2` leaves a blank line; "\f" marks a page end."""
        if lines == "\f":
            self.out.append("\n\f")
            return
        tail = "".join(self.out[-2:])
        have = len(tail) - len(tail.rstrip("\n"))
        if self.out and have < lines:
            self.out.append("\n" * (lines - have))
