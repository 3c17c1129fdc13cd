"""Extraction (paper §3.3): per chunk, the model fills the schema with the subjects it finds.

The prompt for a chunk depends only on the chunk's text, the schema and the template, never on
the chunk's position, so an unchanged chunk of an edited document is answered from the response
cache. Every value comes with a verbatim quote, located in the source within the chunk's span:
the value stored is the document's own text at that span (so `verify` can check it), and a value
whose evidence cannot be found is kept, flagged `unverified`, with no span.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from hti_git.compile.quotes import QuoteLocator, normalise
from hti_git.compile.schema import CategorySpec, Schema
from hti_git.index.model import FieldValue
from hti_git.index.slug import slugify
from hti_git.llm.client import ModelClient
from hti_git.llm.prompts import Template
from hti_git.query.evidence import fence
from hti_git.sources.types import Chunk
from hti_git.tokens import estimate_tokens

NAME_CHARS = 160
SUMMARY_CHARS = 300
MAX_SUBJECTS_PER_CHUNK = 200
MIN_SELF_EVIDENT_CHARS = 12  # a value found verbatim may stand as its own evidence only if this long

EXTRACT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "subjects": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "category": {"type": "string"},
                    "name": {"type": "string"},
                    "aliases": {"type": "array", "items": {"type": "string"}},
                    "summary": {"type": "string"},
                    "fields": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "field": {"type": "string"},
                                "value": {"type": "string"},
                                "quote": {"type": "string"},
                            },
                            "required": ["field", "value", "quote"],
                            "additionalProperties": False,
                        },
                    },
                },
                "required": ["category", "name", "aliases", "summary", "fields"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["subjects"],
    "additionalProperties": False,
}


@dataclass
class Extracted:
    """One subject as one chunk saw it: category key, name, aliases, summary and located values."""

    category: str
    name: str
    aliases: list[str] = field(default_factory=list)
    summary: str = ""
    values: list[tuple[str, FieldValue]] = field(default_factory=list)  # (field name, value)
    chunk: int = 0


def clean_line(value: Any, limit: int) -> str:
    """Model text made safe for a listing line: one line, no Markdown link brackets, bounded."""
    text = " ".join(str(value if value is not None else "").split())
    text = "".join(ch for ch in text if ch.isprintable()).replace("[", "(").replace("]", ")")
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def extraction_messages(template: Template, schema: Schema, chunk_text: str) -> list[dict]:
    """The request for one chunk: schema and fenced text only (no offsets, no chunk number)."""
    return template.messages(schema=schema.prompt_text(), document=fence(chunk_text))


async def extract_chunk(client: ModelClient, template: Template, schema: Schema, chunk: Chunk,
                        locator: QuoteLocator, max_value_tokens: int, notes: list[str]) -> list[Extracted]:
    """The subjects the model finds in `chunk`, with their values located in the source."""
    completion = await client.complete("extract", extraction_messages(template, schema, chunk.text), EXTRACT_SCHEMA,
                                       label=f"chunk {chunk.index + 1}")
    return parse_extraction(completion.json, schema, chunk, locator, max_value_tokens, notes)


class CategoryMatcher:
    """Maps the category a model names to a schema key: exact key, slug, last segment or name."""

    def __init__(self, schema: Schema):
        self.keys = {k: c for k, c in schema.keyed().items() if c.fields}
        self.aliases: dict[str, str | None] = {}
        for key, c in self.keys.items():
            for alias in {key, slugify(key.replace("/", " ")), key.rsplit("/", 1)[-1], slugify(c.name)}:
                # an alias two categories share is ambiguous: it maps to neither
                self.aliases[alias] = None if alias in self.aliases and self.aliases[alias] != key else key

    def match(self, given: str) -> str | None:
        given = str(given or "").strip().strip("/")
        if given in self.keys:
            return given
        for probe in (slugify(given.replace("/", " ")), slugify(given.rsplit("/", 1)[-1])):
            hit = self.aliases.get(probe)
            if hit:
                return hit
        return None


def _field_lookup(category: CategorySpec) -> dict[str, str]:
    return {slugify(f.name): f.name for f in category.fields}


def parse_extraction(data: Any, schema: Schema, chunk: Chunk, locator: QuoteLocator,
                     max_value_tokens: int, notes: list[str]) -> list[Extracted]:
    """Validated subjects from one reply; anything unusable is dropped with a note, never guessed."""
    where = f"chunk {chunk.index + 1}"
    items = data.get("subjects") if isinstance(data, dict) else None
    if not isinstance(items, list):
        notes.append(f"extract: {where}: the reply had no subject list; nothing taken from this chunk")
        return []
    if len(items) > MAX_SUBJECTS_PER_CHUNK:
        notes.append(f"extract: {where}: {len(items)} subjects, only the first {MAX_SUBJECTS_PER_CHUNK} kept")
        items = items[:MAX_SUBJECTS_PER_CHUNK]
    matcher = CategoryMatcher(schema)
    unknown: dict[str, int] = {}
    dropped_fields: dict[str, int] = {}
    out: list[Extracted] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        key = matcher.match(item.get("category", ""))
        if key is None:
            label = clean_line(item.get("category", ""), 60) or "(none)"
            unknown[label] = unknown.get(label, 0) + 1
            continue
        name = clean_line(item.get("name", ""), NAME_CHARS)
        if not normalise(name)[0].strip(" .-'\""):
            continue
        aliases = [a for a in (clean_line(x, NAME_CHARS) for x in item.get("aliases") or [] if isinstance(x, str))
                   if a and a != name]
        subject = Extracted(key, name, list(dict.fromkeys(aliases)), clean_line(item.get("summary", ""), SUMMARY_CHARS),
                            chunk=chunk.index)
        fields = _field_lookup(matcher.keys[key])
        for entry in item.get("fields") or []:
            if not isinstance(entry, dict):
                continue
            field_name = fields.get(slugify(str(entry.get("field", ""))))
            if field_name is None:
                label = clean_line(entry.get("field", ""), 40) or "(none)"
                dropped_fields[label] = dropped_fields.get(label, 0) + 1
                continue
            value = locate_value(str(entry.get("value") or ""), str(entry.get("quote") or ""), chunk, locator)
            if value is None:
                continue
            subject.values += [(field_name, piece) for piece in split_value(value, locator.text, max_value_tokens)]
        out.append(subject)
    for label, count in sorted(unknown.items()):
        notes.append(f"extract: {where}: dropped {count} subject(s) in unknown category {label!r}")
    for label, count in sorted(dropped_fields.items()):
        notes.append(f"extract: {where}: dropped {count} value(s) of unknown field {label!r}")
    return out


def locate_value(value: str, quote: str, chunk: Chunk, locator: QuoteLocator) -> FieldValue | None:
    """A FieldValue whose text is the source's own text at a located span, or unverified without one.

    The quote is looked for within the chunk. If the value occurs inside the quote's span, the value
    (in the document's spelling) is kept with the quote's span as evidence; otherwise the quote
    itself is the value. Without the quote, a long enough value found verbatim is its own evidence.
    """
    value, quote = value.strip(), quote.strip()
    if not value and not quote:
        return None
    text = locator.text
    span = locator.find(quote, chunk.start, chunk.end) if quote else None
    if span is not None:
        inner = locator.find(value, span[0], span[1]) if value else None
        if inner is not None:
            return FieldValue(text[inner[0]:inner[1]], [span])
        return FieldValue(text[span[0]:span[1]], [span])
    if len(normalise(value)[0]) >= MIN_SELF_EVIDENT_CHARS:
        own = locator.find(value, chunk.start, chunk.end)
        if own is not None:
            return FieldValue(text[own[0]:own[1]], [own])
    return FieldValue(" ".join((value or quote).split()), [], unverified=True)


_SENTENCE_END = re.compile(r"(?<=[.;:!?])[\"”’')]*\s+|\n\s*\n")


def split_value(value: FieldValue, text: str, max_tokens: int) -> list[FieldValue]:
    """A value over `max_tokens` as consecutive pieces (sentence breaks, else spaces), none cut
    mid-word, each with its own span; layout then moves pieces whole onto continuation pages."""
    if estimate_tokens(value.text) <= max_tokens:
        return [value]
    pieces: list[FieldValue] = []
    if value.spans and len(value.spans) == 1 and text[value.spans[0][0]:value.spans[0][1]].find(value.text) != -1:
        s0, e0 = value.spans[0]
        offset = s0 + text[s0:e0].find(value.text)
        for a, b in _pieces(value.text, max_tokens):
            pieces.append(FieldValue(value.text[a:b], [(offset + a, offset + b)]))
        return pieces
    return [FieldValue(value.text[a:b], [], unverified=True) for a, b in _pieces(value.text, max_tokens)]


def _pieces(text: str, max_tokens: int) -> list[tuple[int, int]]:
    cuts = [m.end() for m in _SENTENCE_END.finditer(text)]
    out: list[tuple[int, int]] = []
    start = 0
    while start < len(text):
        end = len(text)
        if estimate_tokens(text[start:end]) > max_tokens:
            # the longest run of whole sentences that fits; else of whole words; else hard
            limit = start + max(1, max_tokens * 4)
            fits = [c for c in cuts if start < c <= limit and estimate_tokens(text[start:c]) <= max_tokens]
            if fits:
                end = fits[-1]
            else:
                space = text.rfind(" ", start + 1, limit)
                end = space + 1 if space > start else min(limit, len(text))
        a, b = start, end
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if b > a:
            out.append((a, b))
        start = end
    return out
