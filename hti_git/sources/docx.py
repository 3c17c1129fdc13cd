"""DOCX to text with python-docx: body paragraphs and tables in document order, headings as `#`."""

from __future__ import annotations

import io
import re
from pathlib import Path

import docx
from docx.table import Table
from docx.text.paragraph import Paragraph

from hti_git.errors import SourceError

_HEADING_STYLE = re.compile(r"Heading (\d)")


def docx_text(path: Path, data: bytes) -> str:
    """Text of the DOCX `data` (read from `path`): a blank line between blocks; SourceError if corrupt."""
    try:
        document = docx.Document(io.BytesIO(data))
    # A damaged file fails in zipfile, lxml or python-docx itself, each with its own exception type.
    except Exception as exc:  # noqa: BLE001
        raise SourceError(path, f"corrupt DOCX ({type(exc).__name__}: {exc})") from None
    blocks: list[str] = []
    for item in document.iter_inner_content():
        if isinstance(item, Paragraph):
            text = _paragraph(item)
        else:
            text = _table(item)
        if text.strip():
            blocks.append(text)
    return "\n\n".join(blocks) + "\n" if blocks else ""


def _paragraph(paragraph: Paragraph) -> str:
    text = paragraph.text.strip()
    if not text:
        return ""
    style = paragraph.style.name if paragraph.style is not None else ""
    if style == "Title":
        return f"# {text}"
    match = _HEADING_STYLE.fullmatch(style or "")
    if match:
        return f"{'#' * min(int(match.group(1)), 6)} {text}"
    return text


def _table(table: Table) -> str:
    rows = []
    for row in table.rows:
        cells = []
        previous = None
        for cell in row.cells:
            # A merged cell is reported once per grid column it spans; write it once.
            if previous is not None and cell._tc is previous:
                continue
            previous = cell._tc
            cells.append(" ".join(cell.text.split()))
        if any(cells):
            rows.append(" | ".join(cells))
    return "\n".join(rows)
