"""Ingestion: turn a document file into a cleaned, page-mapped SourceText."""

from __future__ import annotations

import hashlib
from pathlib import Path

from hti_git.errors import SourceError
from hti_git.sources.types import Chunk, SourceText

# The format readers (PDFium, lxml, docx) are imported when a document is read, not when a page
# or SourceText is: `ls`, `show`, `ask` and `verify` never read a source file and start faster.

__all__ = ["Chunk", "SourceText", "load_source", "SUPPORTED_SUFFIXES"]

SUPPORTED_SUFFIXES = {
    ".pdf": "application/pdf",
    ".html": "text/html",
    ".htm": "text/html",
    ".xhtml": "application/xhtml+xml",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".txt": "text/plain",
    ".text": "text/plain",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
}


def load_source(path: str | Path, max_text_bytes: int = 50_000_000) -> SourceText:
    """Read and clean the document at `path`; raise SourceError naming the file and the reason."""
    path = Path(path)
    if not path.exists():
        raise SourceError(path, "no such file")
    if path.is_dir():
        raise SourceError(path, "is a directory")
    suffix = path.suffix.lower()
    media_type = SUPPORTED_SUFFIXES.get(suffix)
    if media_type is None:
        supported = ", ".join(sorted(SUPPORTED_SUFFIXES))
        raise SourceError(path, f"unsupported file type '{suffix or '(none)'}' (supported: {supported})")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SourceError(path, f"cannot read ({exc.strerror or exc})") from None
    if not data.strip():
        raise SourceError(path, "file is empty")

    from hti_git.sources.clean import clean_pages, clean_text
    from hti_git.sources.text import decode_text

    page_starts: tuple[int, ...] = ()
    warnings: list[str] = []
    if media_type == "application/pdf":
        from hti_git.sources.pdf import pdf_pages


        pages = pdf_pages(path, data)
        blank = [number for number, page in enumerate(pages, 1) if not page.strip()]
        if len(blank) == len(pages):
            raise SourceError(path, "no text layer; OCR is needed (scanned PDF?)")
        if blank:
            warnings.append(f"pages without a text layer (OCR would be needed): {_ranges(blank)}")
        text, page_starts = clean_pages(pages)
    elif suffix == ".docx":
        from hti_git.sources.docx import docx_text

        text = clean_text(docx_text(path, data))
    else:
        decoded = decode_text(data)
        if decoded is None:
            raise SourceError(path, "looks like a binary file, not text")
        if suffix in (".html", ".htm", ".xhtml"):
            from hti_git.sources.html import html_to_text

            decoded = html_to_text(decoded)
        text = clean_text(decoded)
    if not text.strip():
        raise SourceError(path, "no text after cleaning")
    size = len(text.encode("utf-8"))
    if size > max_text_bytes:
        raise SourceError(path, f"text is {size:,} bytes, over the {max_text_bytes:,}-byte limit (max_text_bytes)")
    return SourceText(
        name=path.name,
        text=text,
        media_type=media_type,
        raw_sha256=hashlib.sha256(data).hexdigest(),
        raw_bytes=len(data),
        page_starts=page_starts,
        warnings=tuple(warnings),
    )


def _ranges(numbers: list[int]) -> str:
    """'1-3, 7' for [1, 2, 3, 7]."""
    spans: list[list[int]] = []
    for n in numbers:
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)
