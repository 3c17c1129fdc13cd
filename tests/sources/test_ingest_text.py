"""Text and Markdown ingestion (encodings, newlines) and the bad-input cases common to every format."""

from __future__ import annotations

import pytest

from hti_git.errors import SourceError
from hti_git.sources import SUPPORTED_SUFFIXES, load_source

WORDS = "Caf\u00e9 \u201cquoted\u201d \u2014 na\u00efve r\u00e9sum\u00e9\n"


@pytest.mark.parametrize(
    "name, data",
    [
        ("utf8.txt", WORDS.encode("utf-8")),
        ("bom.txt", b"\xef\xbb\xbf" + WORDS.encode("utf-8")),
        ("utf16le.txt", b"\xff\xfe" + WORDS.encode("utf-16-le")),
        ("utf16be.md", b"\xfe\xff" + WORDS.encode("utf-16-be")),
        ("legacy.txt", WORDS.encode("cp1252")),
    ],
)
def test_encodings(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    assert load_source(path).text == WORDS


def test_newlines_and_media_type(tmp_path):
    path = tmp_path / "notes.md"
    path.write_bytes(b"# Notes\r\n\r\n\r\n\r\nline one  \rline two\r\n")
    source = load_source(path)
    assert source.text == "# Notes\n\nline one\nline two\n"
    assert source.media_type == "text/markdown"
    assert source.page_starts == () and source.pages_for(0, 5) == []


def test_text_form_feeds_are_pages_for_cleaning_only(tmp_path):
    pages = [f"ANNUAL REPORT 2020\nPart {n}: the {w} section.\n{n}" for n, w in enumerate(["risk", "tax", "law"], 1)]
    path = tmp_path / "filing.txt"
    path.write_text("\f".join(pages))
    source = load_source(path)
    assert source.text == "ANNUAL REPORT 2020\nPart 1: the risk section.\nPart 2: the tax section.\nPart 3: the law section.\n"
    assert source.page_starts == ()


def test_missing_file(tmp_path):
    path = tmp_path / "absent.pdf"
    with pytest.raises(SourceError) as err:
        load_source(path)
    assert str(err.value) == f"{path}: no such file"
    assert err.value.path == str(path) and err.value.reason == "no such file"


def test_directory(tmp_path):
    with pytest.raises(SourceError, match="is a directory"):
        load_source(tmp_path)


@pytest.mark.parametrize("data", [b"", b"  \n\r\n\t "])
def test_empty_file(tmp_path, data):
    path = tmp_path / "empty.txt"
    path.write_bytes(data)
    with pytest.raises(SourceError, match=r"empty\.txt: file is empty"):
        load_source(path)


@pytest.mark.parametrize("name", ["setup.exe", "scan.png", "photo.JPG", "README"])
def test_unsupported_type_names_supported_ones(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"MZ\x90\x00\x03binary")
    with pytest.raises(SourceError) as err:
        load_source(path)
    message = str(err.value)
    assert message.startswith(f"{path}: unsupported file type")
    assert all(suffix in message for suffix in SUPPORTED_SUFFIXES)


def test_binary_named_txt(tmp_path):
    path = tmp_path / "image.txt"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4)
    with pytest.raises(SourceError, match=r"image\.txt: looks like a binary file, not text"):
        load_source(path)


def test_control_noise_named_txt(tmp_path):
    path = tmp_path / "noise.txt"
    path.write_bytes(bytes(range(1, 32)) * 50)
    with pytest.raises(SourceError, match="binary"):
        load_source(path)


def test_text_over_the_size_limit(tmp_path):
    path = tmp_path / "big.txt"
    path.write_text("All work and no play. " * 100)
    with pytest.raises(SourceError) as err:
        load_source(path, max_text_bytes=1000)
    assert str(err.value).startswith(f"{path}: text is 2,200 bytes, over the 1,000-byte limit")
    assert load_source(path, max_text_bytes=10_000).text.startswith("All work")
