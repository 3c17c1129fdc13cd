"""Counts in page text: "1 entry", "2 entries" — never "1 entries"."""

from __future__ import annotations


def singular(plural: str) -> str:
    """The singular of an English plural noun as pages use them (entries, parties, terms, mentions)."""
    head, _, last = plural.rpartition(" ")
    word = last
    lower = word.lower()
    if lower.endswith("ies") and len(word) > 3:
        word = word[:-3] + ("Y" if word[-3:].isupper() else "y")
    elif lower.endswith(("sses", "xes", "ches", "shes")):
        word = word[:-2]
    elif lower.endswith("s") and not lower.endswith("ss"):
        word = word[:-1]
    return f"{head} {word}" if head else word


def counted(n: int, plural: str) -> str:
    """'1 entry', '0 entries', '2 entries' for counted("entries")."""
    return f"{n} {singular(plural) if n == 1 else plural}"
