"""DOCX to text with python-docx: body paragraphs and tables in document order, headings as `#`."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import docx
from docx.table import Table
from docx.text.paragraph import Paragraph

from hti_git.errors import SourceError
from hti_git.text import CELL_SEP

_HEADING_STYLE = re.compile(r"Heading (\d)")
# python-docx unpacks every part into memory, so a small zip bomb would cost gigabytes. The zip
# directory's sizes are checked first; zipfile never inflates an entry past its declared size.
MAX_UNPACKED_BYTES = 512_000_000
MAX_PARTS = 10_000


def docx_text(path: Path, data: bytes) -> str:
    """Text of the DOCX `data` (read from `path`): a blank line between blocks; SourceError if corrupt."""
    _check_unpacked_size(path, data)
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


def _check_unpacked_size(path: Path, data: bytes) -> None:
    """Refuse a DOCX whose parts would unpack past MAX_UNPACKED_BYTES, or that has too many parts."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError):
        return  # not a zip: python-docx reports it as a corrupt DOCX
    if len(infos) > MAX_PARTS:
        raise SourceError(path, f"DOCX has {len(infos):,} parts, over the {MAX_PARTS:,}-part limit")
    total = sum(info.file_size for info in infos)
    if total > MAX_UNPACKED_BYTES:
        raise SourceError(path, f"DOCX unpacks to {total:,} bytes, over the {MAX_UNPACKED_BYTES:,}-byte limit "
                          "(a zip bomb?)")


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
            rows.append(CELL_SEP.join(cells))
    return "\n".join(rows)
