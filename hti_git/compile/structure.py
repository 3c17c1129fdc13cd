"""Find a document's own structure without a model: headings, sections, passages, names.

Everything here returns spans into the source text; nothing is rewritten.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import islice

from hti_git.compile.headings import Heading, find_headings
from hti_git.sentences import skip_space
from hti_git.sources.passages import SENTENCE_END

__all__ = ["Heading", "Section", "find_headings", "find_sections"]

_SCENE = re.compile(r"^[ \t]*((?:\d+[ \t]+)?(?:INT\.|EXT\.|INT/EXT\.?|I/E\.?)[^\n]{2,100})$", re.M)
_CUE = re.compile(r"^[ \t]{2,}([A-Z][A-Z .'\-]{1,30})(?:[ \t]*\((?:V\.O\.|O\.S\.|CONT'D|O\.C\.)\))?[ \t]*$", re.M)
_DEFINED = re.compile(r"[(\s][\"“]([A-Z][^\"”\n]{1,60}?)[\"”]")
_LOWER_WORD = re.compile(r"\b[a-z][a-z'’]+\b")
_PROPER = re.compile(r"\b([A-Z][a-z]+(?:[ \t]+(?:[A-Z][a-z]+|of|de|van|von))*(?:[ \t]+[A-Z][a-z]+)?)\b")


@dataclass
class Section:
    """A unit of text under one heading: [start, end) in the source, with its heading path."""

    title: str
    start: int
    end: int
    level: int
    number: str = ""
    parents: list[str] = field(default_factory=list)
    parent_starts: list[int] = field(default_factory=list)
    body: int = -1  # where the text under the heading starts
    annex: bool = False  # inside an exhibit, annex, schedule or appendix

    def __post_init__(self) -> None:
        if self.body < 0:
            self.body = self.start


def find_sections(text: str, headings: list[Heading] | None = None) -> list[Section]:
    """Split the text at its headings into consecutive sections covering all of it.

    Text before the first heading becomes a 'Preamble' section. A heading's section runs to the
    next heading of any level; its `parents` are the titles of the enclosing higher-level headings.
    """
    headings = find_headings(text, untitled=True) if headings is None else headings
    sections: list[Section] = []
    first = headings[0].start if headings else len(text)
    if text[:first].strip():
        sections.append(Section("Preamble", skip_space(text, 0), first, 1))
    stack: list[Heading] = []
    for i, h in enumerate(headings):
        end = headings[i + 1].start if i + 1 < len(headings) else len(text)
        while stack and stack[-1].level >= h.level:
            stack.pop()
        sections.append(
            Section(h.title, h.start, _trim_end(text, h.start, end), h.level, h.number,
                    [p.title for p in stack], [p.start for p in stack], _skip_body_start(text, min(h.body, end), end),
                    h.kind == "annex" or any(p.kind == "annex" for p in stack))
        )
        stack.append(h)
    return [s for s in sections if s.end > s.start]


def _skip_body_start(text: str, i: int, end: int) -> int:
    """Past the space and punctuation between a heading's title and its text."""
    while i < end and (text[i].isspace() or text[i] in ".:–—-"):
        i += 1
    return i


def _trim_end(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


def first_sentence(text: str, max_chars: int = 220) -> str:
    """The first sentence of `text`, shortened at a word boundary to `max_chars`."""
    flat = " ".join(text.split())
    m = SENTENCE_END.search(flat)
    sentence = flat[: m.start()] if m else flat
    if len(sentence) > max_chars:
        cut = sentence.rfind(" ", 0, max_chars - 1)
        sentence = sentence[: cut if cut > 0 else max_chars - 1].rstrip(",;: ") + "…"
    return sentence


def defined_terms(text: str) -> dict[str, list[int]]:
    """Quoted defined terms ("Licensee", “Effective Date”) -> offsets where each is defined."""
    terms: dict[str, list[int]] = {}
    for m in _DEFINED.finditer(text):
        term = " ".join(m.group(1).split())
        if len(term) < 2 or term.endswith((".", ",")) or len(term.split()) > 6:
            continue
        terms.setdefault(term, []).append(m.start(1) - 1)
    return terms


def scene_headings(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(1), m.end(1), m.group(1).strip()) for m in _SCENE.finditer(text)]


def character_cues(text: str) -> Counter:
    """Screenplay character names from indented all-caps cue lines, with counts."""
    return Counter(m.group(1).strip() for m in _CUE.finditer(text))


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


def proper_names(text: str, min_count: int = 3, limit: int = 60) -> list[tuple[str, int]]:
    """Recurring capitalised names that are not just sentence-initial words."""
    counts: Counter = Counter()
    for m in _PROPER.finditer(text):
        name = m.group(1)
        before = text[max(0, m.start() - 2): m.start()]
        if len(name) < 3 or (" " not in name and (m.start() == 0 or before.strip() in (".", "!", "?", "", "•", "|"))):
            continue  # a word that starts a sentence, a line, a list item or a table's cell ("Additionally, ...",
            # "| Accumulated deficit |") says nothing
        counts[name] += 1
    common = {"The", "This", "That", "Such", "Any", "All", "Each", "If", "In", "No", "Upon", "For", "Section", "Article",
              "Agreement", "Item", "Part", "Note", "Table", "Exhibit", "Schedule", "Annex", "Total", "Yes", "See", "As",
              "Page",
              *_MONTHS}
    ranked = [(n, c) for n, c in counts.most_common() if c >= min_count and n.split()[0] not in common]
    lower = Counter(_LOWER_WORD.findall(text))
    # A word written in lower case at least as often as capitalised is a common word that starts
    # sentences and table rows ("Our", "Net", "Item" in a filing), not a name.
    names = ((n, c) for n, c in ranked if (lower[n.lower()] if " " not in n else text.count(n.lower())) < c)
    return list(islice(names, limit))  # the text is scanned for the best names only, never all of them
