"""Locate gold evidence strings in a cleaned source text, tolerant of whitespace, case and quotes."""

from __future__ import annotations

import re

_FOLD = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "–": "-", "—": "-", "\u00a0": " "})


def _normalise(text: str) -> tuple[str, list[int]]:
    """Lower-cased, quote-folded text with single spaces, and each character's original offset."""
    out: list[str] = []
    offsets: list[int] = []
    last_space = True
    for i, ch in enumerate(text.translate(_FOLD)):
        if ch.isspace():
            if not last_space:
                out.append(" ")
                offsets.append(i)
            last_space = True
            continue
        out.append(ch.lower())
        offsets.append(i)
        last_space = False
    return "".join(out), offsets


class EvidenceLocator:
    """Finds where evidence strings occur in one source text."""

    def __init__(self, text: str):
        self.norm, self.offsets = _normalise(text)

    def find(self, evidence: str) -> list[tuple[int, int]]:
        """Every [start, end) span of `evidence` in the source ([] when absent).

        CUAD marks elided text with '<omitted>'; each part is located on its own.
        """
        spans: list[tuple[int, int]] = []
        for part in re.split(r"\s*<omitted>\s*", evidence):
            needle, _ = _normalise(part.strip())
            needle = needle.strip()
            if len(needle) < 3:
                continue
            start = self.norm.find(needle)
            while start != -1:
                end = start + len(needle) - 1
                spans.append((self.offsets[start], self.offsets[end] + 1))
                start = self.norm.find(needle, start + 1)
        return spans


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]
