"""What a `fast` answer shows of the passages it cites, and what it asks of them.

- `shown_passage`: a passage on one line, or a table a row a line with its figures beside its label.
- `with_list`: a cited passage that opens a list runs on through the list's short items (passages split
  a list item by item, so the item after the introducing line would otherwise be the whole answer).
- `asks_quantity` / `states_number`: a how-many or how-much question is answered only by a passage that
  states a number ("How many retail stores?" is not answered by "the retail stores face risks").
"""

from __future__ import annotations

import re

from hti_git.text import MONTH, PIPE_ROW, is_table_row, row_cells

# A list's item as a line starts: a bullet (•iPad Air), a dash or asterisk and a space, or "(a) "
_LIST_ITEM = re.compile(r"[ \t]*(?:[•·▪‣◦]|[-–*][ \t]|\([a-zA-Z0-9]{1,4}\)[ \t])\s*\S")
LIST_ITEM_CHARS = 300  # a longer line is a paragraph of its own, not an item of the list being shown
_QUANTITY = re.compile(r"\s*(?:how\s+(?:many|much)|what\s+(?:percentage|share|proportion|number|amount))\b", re.I)
# a figure, a number written out, or one redacted ("[***]": the passage states it, the filing hides it)
_NUMBER = re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|"
                     r"forty|fifty|sixty|ninety|hundred|thousand|million|billion|half|twice|double)\b|\*{3}|\bredacted\b",
                     re.I)
# ... but not a date or a year ("June 29, 2024", "fiscal 2024"), nor a clause's number ("Item 7.", "2.1 ")
_DATE_OR_YEAR = re.compile(rf"\b{MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+(?:19|20)\d\d)?|\b(?:19|20)\d\d\b", re.I)
_CLAUSE_NUMBER = re.compile(r"(?m)^\s*(?:(?:item|section|article|clause|part)\s+)?[\dIVX]+[A-Z]?(?:\.\d+)*[.)]?(?=\s)",
                            re.I)


def shown_passage(passage: str) -> str:
    """A passage as the answer shows it: on one line, or, when it holds a table (two rows or more,
    `text.is_table_row`), each row on a line of its own with its spaces collapsed, so the figures stay beside
    their row's label, and the prose between rows on one line."""
    lines = [line for line in passage.splitlines() if line.strip()]
    rows = [is_table_row(line) for line in lines]
    if sum(rows) < 2:
        return " ".join(" ".join(line.split()) for line in lines)
    out: list[str] = []
    prose = False  # whether out[-1] is prose that the next prose line continues
    for line, row in zip(lines, rows):
        if PIPE_ROW.match(line):  # a Markdown table's row: its cells, without the empty ones
            cells = row_cells(line)
            if not cells:
                continue  # the |:---|---:| line under a table's header
            line = " | ".join(cells)
        line = " ".join(line.split())
        if not row and prose:
            out[-1] += " " + line
        else:
            out.append(line)
        prose = not row
    return "\n".join(out)


def with_list(text: str, start: int, end: int, max_span: int) -> int:
    """Where a cited passage ends when it introduces a list (its last line ends with ":") or ends in a
    list's item: after the list's short items right after it, within `max_span` of its start. The passages
    split a list item by item, so the passage "...announced the following updates: •iPad Air®;" is
    shown on through "•iPad Pro®;" and "•iOS 18, macOS Sequoia, ...", the rest of the answer."""
    lines = text[start:end].rstrip().splitlines()
    if not lines or not (lines[-1].rstrip().endswith(":") or _LIST_ITEM.match(lines[-1])):
        return end
    at = end
    while True:
        line_start = len(text) - len(text[at:].lstrip())
        line_end = text.find("\n", line_start)
        line_end = len(text) if line_end < 0 else line_end
        line = text[line_start:line_end]
        if not _LIST_ITEM.match(line) or len(line) > LIST_ITEM_CHARS or line_end - start > max_span:
            return at
        at = line_end


def asks_quantity(question: str) -> bool:
    """Whether the question asks how many, how much or what share: its answer is a number."""
    return bool(_QUANTITY.match(question))


def states_number(passage: str) -> bool:
    """Whether the passage states a quantity: a number that is not a date, a year or a clause's number."""
    return bool(_NUMBER.search(_CLAUSE_NUMBER.sub(" ", _DATE_OR_YEAR.sub(" ", passage))))
