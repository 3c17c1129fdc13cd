"""Extraction (paper §3.3): per chunk, the model fills the schema with the subjects it finds.

The prompt for a chunk depends only on the chunk's text, the schema and the template, never on
the chunk's position, so an unchanged chunk of an edited document is answered from the response
cache. Every value is the model's short reading ("5 years") plus a few anchor words copied from the
sentence that states it; the compile locates the anchor within the chunk and widens it to the whole
sentence or clause, which becomes the value's evidence text and span (so `verify` can check it and
a reader sees what the clause says). Short values (a date, an amount, a name, a table cell) are
located the same way. A value whose evidence cannot be found is kept, flagged `unverified`.
A reply cut off at the output-token limit is never used: the chunk is split in two and each half
extracted, down to a floor.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any

from hti_git.compile.quotes import QuoteLocator, normalise
from hti_git.compile.schema import CategorySpec, Schema
from hti_git.compile.sizing import MIN_CHUNK_CHARS, SUBJECT_REPLY_TOKENS
from hti_git.index.model import FieldValue
from hti_git.index.slug import slugify
from hti_git.llm.client import ModelClient
from hti_git.llm.prompts import Template, fence
from hti_git.llm.provider import TruncatedError
from hti_git.sentences import strip_span, widen_to_sentence
from hti_git.sources.types import Chunk
from hti_git.text import clean_line
from hti_git.tokens import estimate_tokens

NAME_CHARS = 160
SUMMARY_CHARS = 300
MAX_SUBJECTS_PER_CHUNK = 200
VALUE_CHARS = 300  # a reading longer than this is not compact; it is cut on a word
MIN_ANCHOR_CHARS = 3  # shorter anchors ("a", "7") match anywhere, so they locate nothing
_SPLIT_BREAKS = (re.compile(r"\n[ \t]*\n"), re.compile(r"\n"), re.compile(r"[.;:!?][\"”’')]*[ \t]+"), re.compile(r"[ \t]+"))

ANCHOR_WORDS = 12  # an anchor longer than this is still located, but the prompt asks for 3-10 words


def extract_schema(max_subjects: int) -> dict[str, Any]:
    """The reply shape for one chunk: at most `max_subjects` subjects of compact values."""
    return {
        "type": "object",
        "properties": {
            "subjects": {
                "type": "array",
                "maxItems": max_subjects,
                "items": {
                    "type": "object",
                    "properties": {
                        "category": {"type": "string"},
                        "name": {"type": "string"},
                        "aliases": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
                        "summary": {"type": "string"},
                        "fields": {
                            "type": "array",
                            "maxItems": 4,
                            "items": {
                                "type": "object",
                                "properties": {
                                    "field": {"type": "string"},
                                    "value": {"type": "string"},
                                    "anchor": {"type": "string"},
                                },
                                "required": ["field", "value", "anchor"],
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


def extraction_messages(template: Template, schema: Schema, chunk_text: str, max_subjects: int) -> list[dict]:
    """The request for one chunk: schema and fenced text only (no offsets, no chunk number)."""
    return template.messages(schema=schema.prompt_text(), document=fence(chunk_text), max_subjects=str(max_subjects),
                             reply_words=str(reply_words(max_subjects)))


def reply_words(max_subjects: int) -> int:
    """The reply length to ask for: the subject cap's share of the output limit, in words (a JSON
    reply runs about two tokens a word), rounded to hundreds."""
    return max(100, int(round(max_subjects * SUBJECT_REPLY_TOKENS / 2, -2)))  # 1400, not 1400.0


async def extract_chunk(client: ModelClient, template: Template, schema: Schema, chunk: Chunk,
                        locator: QuoteLocator, max_value_tokens: int, notes: list[str],
                        max_subjects: int, min_chars: int = MIN_CHUNK_CHARS) -> list[Extracted]:
    """The subjects the model finds in `chunk`, with their values located in the source.

    When the reply stops at the output-token limit, the chunk is split at a paragraph or sentence
    break near its middle and each half is extracted (recursively, down to `min_chars`)."""
    label = f"chunk {chunk.index + 1}" + (f" ({chunk.start}-{chunk.end})" if chunk.text else "")
    try:
        completion = await client.complete("extract", extraction_messages(template, schema, chunk.text, max_subjects),
                                           extract_schema(max_subjects), label=label)
    except TruncatedError:
        halves = split_chunk(chunk, min_chars)
        if halves is None:
            raise
        notes.append(f"extract: chunk {chunk.index + 1}: the reply hit the output-token limit; "
                     f"extracted its halves ({halves[0].end - halves[0].start:,} and "
                     f"{halves[1].end - halves[1].start:,} characters)")
        parts = await asyncio.gather(*(extract_chunk(client, template, schema, half, locator, max_value_tokens,
                                                     notes, max_subjects, min_chars) for half in halves))
        return [item for part in parts for item in part]
    return parse_extraction(completion.json, schema, chunk, locator, max_value_tokens, notes, max_subjects)


def split_chunk(chunk: Chunk, min_chars: int) -> tuple[Chunk, Chunk] | None:
    """`chunk` as two halves meeting at the strongest break near its middle; None below the floor."""
    text = chunk.text
    if len(text) < min_chars:
        return None
    mid = len(text) // 2
    lo, hi = mid - len(text) // 4, mid + len(text) // 4
    cut = None
    for pattern in _SPLIT_BREAKS:
        hits = [m.end() for m in pattern.finditer(text, lo, hi)]
        if hits:
            cut = min(hits, key=lambda at: abs(at - mid))
            break
    cut = cut or mid
    first = Chunk(chunk.index, chunk.start, chunk.start + cut, text[:cut])
    second = Chunk(chunk.index, chunk.start + cut, chunk.end, text[cut:])
    return first, second


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
                     max_value_tokens: int, notes: list[str], max_subjects: int = MAX_SUBJECTS_PER_CHUNK) -> list[Extracted]:
    """Validated subjects from one reply; anything unusable is dropped with a note, never guessed."""
    where = f"chunk {chunk.index + 1}"
    items = data.get("subjects") if isinstance(data, dict) else None
    if not isinstance(items, list):
        notes.append(f"extract: {where}: the reply had no subject list; nothing taken from this chunk")
        return []
    cap = min(max_subjects, MAX_SUBJECTS_PER_CHUNK)
    if len(items) > cap:
        notes.append(f"extract: {where}: {len(items)} subjects, only the first {cap} kept")
        items = items[:cap]
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
            value = locate_value(str(entry.get("value") or ""), str(entry.get("anchor") or ""), chunk, locator)
            if value is None:
                continue
            subject.values += [(field_name, piece) for piece in split_value(value, locator.text, max_value_tokens)]
        out.append(subject)
    for label, count in sorted(unknown.items()):
        notes.append(f"extract: {where}: dropped {count} subject(s) in unknown category {label!r}")
    for label, count in sorted(dropped_fields.items()):
        notes.append(f"extract: {where}: dropped {count} value(s) of unknown field {label!r}")
    return out


def locate_value(value: str, anchor: str, chunk: Chunk, locator: QuoteLocator) -> FieldValue | None:
    """The model's reading `value` with, as evidence, the whole sentence that holds `anchor`.

    The anchor is looked for within the chunk; failing that, the value itself (a date, an amount, a
    name is often its own anchor). The located words widen to their sentence or clause, whose text
    (the document's own) and span become the evidence. Neither found: kept, flagged unverified.
    """
    value, anchor = clean_line(value, VALUE_CHARS), anchor.strip()
    if not value and not anchor:
        return None
    text = locator.text
    span = None
    for probe in (anchor, value):
        if probe and len(normalise(probe)[0].strip()) >= MIN_ANCHOR_CHARS:
            span = locator.find(probe, chunk.start, chunk.end)
            if span is not None:
                break
    if span is None:
        return FieldValue(" ".join((value or anchor).split()), [], unverified=True)
    start, end = widen_to_sentence(text, span[0], span[1])
    sentence = text[start:end]
    reading = value if value and _plain(value) != _plain(sentence) else ""
    return FieldValue(sentence, [(start, end)], value=reading)


def _plain(text: str) -> str:
    return " ".join(normalise(text)[0].split())


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
        a, b = strip_span(text, start, end)
        if b > a:
            out.append((a, b))
        start = end
    return out
