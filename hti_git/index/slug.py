"""Safe path segments: whatever a document or a model says, a slug cannot escape its folder."""

from __future__ import annotations

import re
import unicodedata

_NON_WORD = re.compile(r"[^a-z0-9]+")
RESERVED = {"index", "source", "schema", "templates", "con", "nul", "prn", "aux"}
DOC_RESERVED = RESERVED | {"catalog"}  # top-level folders hti-git writes itself (the catalogue's shards)


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
    return name_slug(stem, max_len=80, fallback="document")


def name_slug(text: str, max_len: int = 80, fallback: str = "document", max_bytes: int = 200) -> str:
    """A document folder name that keeps letters and digits of every script, lower-cased, '-'-joined.

    Latin letters with accents lose them, exactly as `slugify` does ("Café" -> "cafe"), so ASCII and
    accented names are unchanged; letters with no ASCII form (契約, договор, हिन्दी) are kept, so names
    in any script stay distinct instead of all becoming `fallback`. Only letters, marks, digits and
    '-' survive: no dots, slashes, controls or bidi overrides, so the name cannot leave its folder.
    """
    out: list[str] = []
    after_ascii = False
    for ch in unicodedata.normalize("NFKD", text):
        if ch.isascii():
            after_ascii = ch.isalnum()
            out.append(ch.lower() if after_ascii else "-")
            continue
        kind = unicodedata.category(ch)[0]
        if kind == "M" and after_ascii:
            continue  # an accent on a Latin letter: dropped, as slugify drops it
        if kind in "LMN":
            after_ascii = False
            out.append(ch.lower())
        # any other non-ASCII character (curly quotes, symbols, bidi controls) is dropped, as slugify drops it
    slug = re.sub(r"-+", "-", unicodedata.normalize("NFC", "".join(out))).strip("-")
    slug = slug[:max_len].rstrip("-")
    while len(slug.encode("utf-8")) > max_bytes:  # file systems limit names to 255 bytes
        slug = slug[:-1].rstrip("-")
    slug = slug or fallback
    if slug in DOC_RESERVED:
        slug = f"{slug}-1"
    return slug
