"""The merged record that compile methods produce and layout turns into pages."""

from __future__ import annotations

from dataclasses import dataclass, field

Span = tuple[int, int]


@dataclass
class FieldValue:
    """One value of a field with the source spans that support it (never a bare string)."""

    text: str  # the document's own text at `spans` (a whole sentence or clause), or the model's if unverified
    spans: list[Span] = field(default_factory=list)
    unverified: bool = False  # the evidence quote could not be located in the source
    value: str = ""  # the model's reading of `text` ("5 years"), when it differs from the text itself


@dataclass
class Subject:
    """A specific thing the document talks about: a clause, a party, a defined term, a scene."""

    name: str
    slug: str
    summary: str = ""
    aliases: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    fields: dict[str, list[FieldValue]] = field(default_factory=dict)

    @property
    def spans(self) -> list[Span]:
        return sorted({s for values in self.fields.values() for v in values for s in v.spans})


@dataclass
class Category:
    """A broad area of the document, holding subjects and/or sub-categories."""

    name: str
    slug: str
    summary: str = ""
    subjects: list[Subject] = field(default_factory=list)
    children: list[Category] = field(default_factory=list)


@dataclass
class Record:
    """All categories and subjects of one document, plus the root overview."""

    title: str
    overview: str
    categories: list[Category] = field(default_factory=list)
