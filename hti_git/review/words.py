"""Compact word diffs: what changed in a sentence, with a little context and the rest elided."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

ELLIPSIS = "…"
# Words (keeping "7.12", "don't", "non-compete" whole) and single punctuation marks, so "Law" and
# "Law;" share the word and only the semicolon differs.
_TOKEN = re.compile(r"\w(?:[\w.'’-]*\w)?|[^\w\s]")
_NO_SPACE_BEFORE = set(",.;:)]}!?%")
_NO_SPACE_AFTER = set("([{$")


def tokens(text: str) -> list[str]:
    """Word and punctuation tokens of `text`."""
    return _TOKEN.findall(text)


def join(words: list[str]) -> str:
    """Tokens back to readable text (no space before closing punctuation or after opening)."""
    out = ""
    for w in words:
        if out and w not in _NO_SPACE_BEFORE and out[-1] not in _NO_SPACE_AFTER:
            out += " "
        out += w
    return out


def word_diff(a: str, b: str, context: int = 4) -> list[list[str]]:
    """[[op, text], ...] with op '=' (kept), '-' (only in a), '+' (only in b).

    Long kept runs keep `context` words at each side and an ellipsis in between.
    """
    wa, wb = tokens(a), tokens(b)
    out: list[list[str]] = []
    ops = SequenceMatcher(None, wa, wb, autojunk=False).get_opcodes()
    for n, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag == "equal":
            words = wa[i1:i2]
            first, last = n == 0, n == len(ops) - 1
            keep_head = 0 if first else context
            keep_tail = 0 if last else context
            if not (first and last) and len(words) > keep_head + keep_tail + 1:
                head, tail = words[:keep_head], words[len(words) - keep_tail:] if keep_tail else []
                words = head + [ELLIPSIS] + tail
            out.append(["=", join(words)])
            continue
        if tag in ("delete", "replace"):
            out.append(["-", join(wa[i1:i2])])
        if tag in ("insert", "replace"):
            out.append(["+", join(wb[j1:j2])])
    return out


def similarity(a: str, b: str) -> float:
    """Word-level similarity ratio in [0, 1]."""
    if not a and not b:
        return 1.0
    return SequenceMatcher(None, a.split(), b.split(), autojunk=False).ratio()


def glue(pieces: list[tuple[str, str]]) -> str:
    """Join rendered diff segments: (raw text, rendered) pairs, no space before closing punctuation."""
    out = ""
    for raw, rendered in pieces:
        if not raw:
            continue
        if out and raw[0] not in _NO_SPACE_BEFORE:
            out += " "
        out += rendered
    return out


def plain(diff: list[list[str]]) -> str:
    """The diff in git's --word-diff=plain notation: [-removed-]{+added+}."""
    return glue([(text, text if op == "=" else f"[-{text}-]" if op == "-" else f"{{+{text}+}}")
                 for op, text in diff])
