"""Safe path segments: whatever a document or a model says, a slug cannot escape its folder."""

from __future__ import annotations

import re
import unicodedata

_NON_WORD = re.compile(r"[^a-z0-9]+")
RESERVED = {"index", "source", "schema", "templates", "con", "nul", "prn", "aux"}


def slugify(text: str, max_len: int = 60, fallback: str = "item") -> str:
    """Lower-case ASCII words joined by '-': no dots, slashes or empty segments."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = _NON_WORD.sub("-", ascii_text.lower()).strip("-")
    slug = slug[:max_len].rstrip("-") or fallback
    if slug in RESERVED:
        slug = f"{slug}-1"
    return slug


def unique_slug(text: str, taken: set[str], max_len: int = 60, fallback: str = "item") -> str:
    """A slug of `text` not yet in `taken` (suffixes -2, -3, ...); adds it to `taken`."""
    base = slugify(text, max_len, fallback)
    slug, n = base, 2
    while slug in taken:
        slug = f"{base}-{n}"
        n += 1
    taken.add(slug)
    return slug


def doc_slug(file_name: str) -> str:
    """The index folder name for a source file name (extension dropped)."""
    stem = file_name.rsplit(".", 1)[0] if "." in file_name.lstrip(".") else file_name
    return slugify(stem, max_len=80, fallback="document")
