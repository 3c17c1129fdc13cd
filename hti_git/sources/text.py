"""Plain text and Markdown: decode (BOMs, utf-8, cp1252 fallback), refuse binary, normalise."""

from __future__ import annotations

import re

_BOMS = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


def decode_text(data: bytes) -> str | None:
    """Decoded text, or None when the bytes look binary (NULs or control noise)."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data[len(bom):].decode(encoding)
            except UnicodeDecodeError:
                return None
    if b"\x00" in data[:65536]:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("cp1252", errors="replace")
    sample = text[:65536]
    if sample:
        control = sum(1 for ch in sample if ord(ch) < 32 and ch not in "\n\r\t\f")
        if control / len(sample) > 0.01 or sample.count("\ufffd") / len(sample) > 0.01:
            return None
    return text


_TRAILING_SPACE = re.compile(r"[ \t\u00a0]+\n")
_BLANK_RUNS = re.compile(r"\n{3,}")


def normalise_text(text: str) -> str:
    """Unix newlines, no trailing spaces, at most one blank line in a row, ends with one newline."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
    text = text.replace("\u00a0", " ").replace("\u200b", "")
    text = _TRAILING_SPACE.sub("\n", text)
    text = _BLANK_RUNS.sub("\n\n", text)
    text = text.strip("\n")
    return text + "\n" if text else ""
