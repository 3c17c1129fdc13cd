"""Plain text and Markdown bytes to str: BOMs, utf-8, a cp1252 fallback; binary is refused."""

from __future__ import annotations

_BOMS = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
_SAMPLE = 65536


def decode_text(data: bytes) -> str | None:
    """Decoded text, or None when the bytes look binary (NULs or control noise)."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data[len(bom):].decode(encoding)
            except UnicodeDecodeError:
                return None
    if b"\x00" in data[:_SAMPLE]:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        # Old Windows exports (and many EDGAR filings) are cp1252; its 5 unmapped bytes become U+FFFD.
        text = data.decode("cp1252", errors="replace")
    sample = text[:_SAMPLE]
    if sample:
        control = sum(1 for ch in sample if ord(ch) < 32 and ch not in "\n\r\t\f")
        if control / len(sample) > 0.01 or sample.count("\ufffd") / len(sample) > 0.01:
            return None
    return text
