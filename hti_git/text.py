"""Small text helpers every layer shares: canonical JSON and its hash, one-line text, column gaps.

No package imports, so any module may use them without an import cycle.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

# Three or more spaces between words: a table's column gap, or a line break a text export kept when it
# joined a page's lines into one
GAP = re.compile(r"(?<=\S)[ \t]{3,}(?=\S)")


def canonical_json(value: Any) -> str:
    """Sorted-key, compact, UTF-8 JSON: the one serialisation every hash in hti-git is taken over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_sha256(value: Any) -> str:
    """'sha256:<hex>' of the canonical JSON of `value`."""
    return "sha256:" + hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def one_line(text: Any, limit: int) -> str:
    """Whitespace collapsed and cut to `limit` characters (with an ellipsis)."""
    text = " ".join(str(text if text is not None else "").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def clean_line(value: Any, limit: int) -> str:
    """Model or document text made safe for a listing line: one line, printable, no Markdown link
    brackets, bounded."""
    text = " ".join(str(value if value is not None else "").split())
    text = "".join(ch for ch in text if ch.isprintable()).replace("[", "(").replace("]", ")")
    return one_line(text, limit)
