"""Ingestion: turn a document file into a cleaned SourceText."""

from __future__ import annotations

import hashlib
from pathlib import Path

from hti_git.errors import SourceError
from hti_git.sources.text import decode_text, normalise_text
from hti_git.sources.types import Chunk, SourceText

__all__ = ["Chunk", "SourceText", "load_source", "SUPPORTED_SUFFIXES"]

SUPPORTED_SUFFIXES = {".txt": "text/plain", ".md": "text/markdown", ".markdown": "text/markdown"}


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
    data = path.read_bytes()
    if not data.strip():
        raise SourceError(path, "file is empty")
    text = decode_text(data)
    if text is None:
        raise SourceError(path, "looks like a binary file, not text")
    text = normalise_text(text)
    if not text.strip():
        raise SourceError(path, "no text after cleaning")
    if len(text.encode("utf-8")) > max_text_bytes:
        raise SourceError(path, f"text is larger than the {max_text_bytes:,}-byte limit (max_text_bytes)")
    return SourceText(
        name=path.name,
        text=text,
        media_type=media_type,
        raw_sha256=hashlib.sha256(data).hexdigest(),
        raw_bytes=len(data),
    )
