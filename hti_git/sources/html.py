"""HTML to text with the stdlib parser: drop chrome and code, keep blocks, <pre> layout and tables."""

from __future__ import annotations

import re
from html.parser import HTMLParser

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


def html_to_text(markup: str) -> str:
    """Visible text of an HTML page: one line per block, `# ` headings, cells joined by ' | '.

    CSS page breaks (EDGAR filings) become form feeds, which cleaning treats as page ends.
    """
    parser = _TextParser()
    parser.feed(markup)
    parser.close()
    return "".join(parser.out)


class _TextParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.skip_depth = 0
        self.pre_depth = 0
        self.cells: list[int] = []  # cells seen in the current row, per open table
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
            self.cells.append(0)
        elif tag == "tr" and self.cells:
            self.cells[-1] = 0
        elif tag in ("td", "th"):
            if self.cells:
                if self.cells[-1]:
                    self.out.append(" | ")
                self.cells[-1] += 1
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
        elif tag == "table" and self.cells:
            self.cells.pop()
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

    def _newline(self, lines: int | str = 1) -> None:
        """End the current line; `lines=2` leaves a blank line; "\f" marks a page end."""
        if lines == "\f":
            self.out.append("\n\f")
            return
        tail = "".join(self.out[-2:])
        have = len(tail) - len(tail.rstrip("\n"))
        if self.out and have < lines:
            self.out.append("\n" * (lines - have))
