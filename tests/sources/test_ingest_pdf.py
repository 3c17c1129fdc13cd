"""PDF ingestion: text and page map from real and generated PDFs, and each way a PDF can be bad."""

from __future__ import annotations

import pypdfium2 as pdfium
import pytest

from hti_git.errors import SourceError
from hti_git.sources import load_source

PARTS = ["Definitions", "Appointment", "Delivery", "Payment", "Term"]


def generated_pages() -> list[list[str]]:
    return [
        ["Master Supply Agreement", f"{n}. {part}", f"The {part.lower()} terms on page {n} are these.", f"Page {n} of 5"]
        for n, part in enumerate(PARTS, 1)
    ]


def test_real_contract_text_and_page_map(cuad_pdf):
    source = load_source(cuad_pdf)
    assert source.media_type == "application/pdf"
    assert source.page_count == 3
    assert source.page_starts[0] == 0
    assert source.text.startswith("Exhibit 10.26\nAGENCY AGREEMENT\n")
    # pdfium's NBSPs and GREEK QUESTION MARKs are gone; the wording is intact.
    assert "\u00a0" not in source.text and "\u037e" not in source.text
    assert "Section 1.01 Appointment." in source.text
    assert "the Company hereby agrees to accept such appointment" in " ".join(source.text.split())
    for start in source.page_starts[1:]:
        assert source.text[start - 1] == "\n"
    assert source.text[source.page_starts[1]:].startswith("The Company additionally agrees")
    at = source.text.index("The Company additionally agrees")
    assert source.pages_for(at, at + 20) == [2]
    assert source.raw_bytes == cuad_pdf.stat().st_size and len(source.raw_sha256) == 64


def test_page_k_starts_at_page_starts(make_pdf):
    source = load_source(make_pdf(generated_pages()))
    assert source.page_count == 5
    # The running title stays once; the "Page n of 5" footers go.
    assert source.text.count("Master Supply Agreement") == 1
    assert "of 5" not in source.text
    for n, part in enumerate(PARTS, 1):
        start = source.page_starts[n - 1]
        expected = "Master Supply Agreement" if n == 1 else f"{n}. {part}"
        assert source.text[start:].startswith(expected)
        at = source.text.index(f"The {part.lower()} terms")
        assert source.pages_for(at, at + 10) == [n]
        start, end = source.page_span(n)
        assert f"The {part.lower()} terms on page {n} are these." in source.text[start:end]
    assert source.page_span(5)[1] == len(source.text)
    with pytest.raises(IndexError):
        source.page_span(6)
    span_start = source.text.index("The payment terms")
    span_end = source.text.index("The term terms") + 5
    assert source.pages_for(span_start, span_end) == [4, 5]


def test_truncated_pdf(tmp_path, cuad_pdf):
    data = cuad_pdf.read_bytes()
    path = tmp_path / "cut.pdf"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(SourceError, match=r"cut\.pdf: truncated or corrupt PDF"):
        load_source(path)


def test_corrupt_pdf(tmp_path):
    path = tmp_path / "junk.pdf"
    path.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 20 + b"\n%%EOF\n")
    with pytest.raises(SourceError, match=r"junk\.pdf: corrupt PDF"):
        load_source(path)


def test_not_a_pdf(tmp_path):
    path = tmp_path / "letter.pdf"
    path.write_text("Dear reader, this is plain text.\n")
    with pytest.raises(SourceError, match=r"letter\.pdf: not a PDF file"):
        load_source(path)


def test_encrypted_pdf(make_pdf):
    path = make_pdf([["secret terms"]], name="locked.pdf", encrypted=True)
    with pytest.raises(SourceError) as err:
        load_source(path)
    assert str(err.value) == f"{path}: encrypted PDF (password required)"


def test_scanned_pdf_without_text_layer(tmp_path):
    doc = pdfium.PdfDocument.new()
    doc.new_page(612, 792)
    doc.new_page(612, 792)
    path = tmp_path / "scan.pdf"
    doc.save(path)
    doc.close()
    with pytest.raises(SourceError, match=r"scan\.pdf: no text layer; OCR is needed"):
        load_source(path)


def test_some_pages_without_text_give_a_warning(make_pdf):
    source = load_source(make_pdf([["Cover terms here."], [], [], ["Signature page."]]))
    assert source.page_count == 4
    assert source.warnings == ("pages without a text layer (OCR would be needed): 2-3",)
    assert source.pages_for(source.text.index("Signature"), len(source.text)) == [4]


def test_error_messages_are_one_line(tmp_path, cuad_pdf):
    path = tmp_path / "cut.pdf"
    path.write_bytes(cuad_pdf.read_bytes()[:5000])
    with pytest.raises(SourceError) as err:
        load_source(path)
    assert "\n" not in str(err.value)
