"""Locate gold evidence strings in a cleaned source text, tolerant of whitespace, case and quotes."""

from __future__ import annotations

import re

from hti_git.compile.quotes import normalise

# One normaliser for model quotes and gold evidence alike: whitespace, case, curly quotes, dashes.
_normalise = normalise


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
