"""DOCX ingestion: paragraphs and tables in order, headings as Markdown headings, corrupt files refused."""

from __future__ import annotations

import zipfile

import docx
import pytest

from hti_git.errors import SourceError
from hti_git.sources import load_source


@pytest.fixture
def contract_docx(tmp_path):
    document = docx.Document()
    document.add_heading("Consulting Agreement", level=0)
    document.add_paragraph("This agreement is made between Acme Ltd and Jane Roe.")
    document.add_heading("1. Services", level=1)
    document.add_paragraph("The Consultant shall advise the Company.")
    table = document.add_table(rows=2, cols=3)
    for cell, value in zip(table.rows[0].cells, ["Phase", "Fee", "Due"], strict=True):
        cell.text = value
    for cell, value in zip(table.rows[1].cells, ["Design", "$5,000", "1 May"], strict=True):
        cell.text = value
    document.add_heading("1.1 Standards", level=2)
    document.add_paragraph("")
    document.add_paragraph("Work meets industry standards.")
    path = tmp_path / "consulting.docx"
    document.save(path)
    return path


def test_docx_text_in_document_order(contract_docx):
    source = load_source(contract_docx)
    assert source.media_type.endswith("wordprocessingml.document")
    assert source.page_starts == ()
    assert source.text == (
        "# Consulting Agreement\n\n"
        "This agreement is made between Acme Ltd and Jane Roe.\n\n"
        "# 1. Services\n\n"
        "The Consultant shall advise the Company.\n\n"
        "Phase | Fee | Due\nDesign | $5,000 | 1 May\n\n"
        "## 1.1 Standards\n\n"
        "Work meets industry standards.\n"
    )


def test_merged_cells_are_written_once(tmp_path):
    document = docx.Document()
    table = document.add_table(rows=2, cols=2)
    merged = table.cell(0, 0).merge(table.cell(0, 1))
    merged.text = "Schedule A"
    table.cell(1, 0).text = "left"
    table.cell(1, 1).text = "right"
    path = tmp_path / "merged.docx"
    document.save(path)
    assert load_source(path).text == "Schedule A\nleft | right\n"


def test_corrupt_docx_not_a_zip(tmp_path):
    path = tmp_path / "broken.docx"
    path.write_bytes(b"PK\x03\x04 this is not really a zip archive" * 10)
    with pytest.raises(SourceError, match=r"broken\.docx: corrupt DOCX"):
        load_source(path)


def test_corrupt_docx_zip_without_document(tmp_path):
    path = tmp_path / "hollow.docx"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("hello.txt", "no word document in here")
    with pytest.raises(SourceError, match=r"hollow\.docx: corrupt DOCX"):
        load_source(path)


def test_truncated_docx(tmp_path, contract_docx):
    path = tmp_path / "cut.docx"
    path.write_bytes(contract_docx.read_bytes()[:2000])
    with pytest.raises(SourceError) as err:
        load_source(path)
    assert str(err.value).startswith(f"{path}: corrupt DOCX") and "\n" not in str(err.value)


def test_docx_without_text(tmp_path):
    path = tmp_path / "blank.docx"
    docx.Document().save(path)
    with pytest.raises(SourceError, match=r"blank\.docx: no text after cleaning"):
        load_source(path)
