"""Fixtures for ingestion tests: a tiny hand-written PDF writer (text, encrypted) and the CUAD fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CUAD_PDF = FIXTURES / "alcostoresinc-12-14-2005-ex-10-26-agency-agreement.pdf"


from tests.support.pdfgen import pdf_bytes  # noqa: E402,F401  (re-exported for the tests here)


@pytest.fixture
def cuad_pdf() -> Path:
    """A real 3-page contract from CUAD (see tests/fixtures/README.md)."""
    return CUAD_PDF


@pytest.fixture
def make_pdf(tmp_path):
    """Write `pdf_bytes(pages, ...)` to a file in tmp_path and return its path."""

    def make(pages: list[list[str]], name: str = "doc.pdf", **kwargs) -> Path:
        path = tmp_path / name
        path.write_bytes(pdf_bytes(pages, **kwargs))
        return path

    return make
