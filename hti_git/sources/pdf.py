"""PDF text, page by page, through pypdfium2 (PDFium: fast, permissive licence, page-level text)."""

from __future__ import annotations

import threading
from pathlib import Path

import pypdfium2 as pdfium

from hti_git.errors import SourceError

# PDF readers accept the header and the end marker within this many bytes of the file's edges.
_MARKER_WINDOW = 1024
# A few kilobytes of PDF can declare millions of pages sharing one content stream; reading them all
# would take hours. Refuse before extracting any page. (50,000 pages is ~25x the longest filings.)
MAX_PAGES = 50_000
# PDFium is not thread-safe (pypdfium2 says so): two threads inside it at once crash the process or
# return garbage text. Every PDFium call in this process goes through this lock; batches that want
# more than one core for PDFs extract in worker processes instead (compile/batch.py).
PDFIUM_LOCK = threading.Lock()


def pdf_pages(path: Path, data: bytes) -> list[str]:
    """Raw text of each page of the PDF `data` (read from `path`); SourceError when unreadable."""
    if b"%PDF-" not in data[:_MARKER_WINDOW]:
        raise SourceError(path, "not a PDF file (no %PDF- header)")
    # PDFium silently rebuilds a truncated file from what is left, which would drop pages unseen.
    if b"%%EOF" not in data[-_MARKER_WINDOW:]:
        raise SourceError(path, "truncated or corrupt PDF (no %%EOF end marker)")
    with PDFIUM_LOCK:
        return _extract(path, data)


def _extract(path: Path, data: bytes) -> list[str]:
    try:
        doc = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise SourceError(path, "encrypted PDF (password required)") from None
        raise SourceError(path, f"corrupt PDF ({exc})") from None
    try:
        if len(doc) > MAX_PAGES:
            raise SourceError(path, f"PDF has {len(doc):,} pages, over the {MAX_PAGES:,}-page limit")
        pages = []
        for index in range(len(doc)):
            page = doc[index]
            textpage = page.get_textpage()
            try:
                pages.append(textpage.get_text_range())
            finally:
                textpage.close()
                page.close()
        return pages
    except pdfium.PdfiumError as exc:
        raise SourceError(path, f"corrupt PDF ({exc})") from None
    finally:
        doc.close()
