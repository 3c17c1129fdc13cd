"""Merge (paper §3.3): per-chunk subjects into one record.

Subjects of one category are the same subject when their normalised names or aliases meet, except
an alias that two subjects of one reply share: "Party", given for both parties, names neither. For a
field the first non-empty value is kept and a differing later value is kept beside it (nothing the
document says is quietly lost); an equal value only adds its spans. Categories never change: they
are the schema's, in schema order; only their subject lists grow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hti_git.compile.extract import Extracted
from hti_git.compile.quotes import normalise
from hti_git.compile.schema import CategorySpec, Schema
from hti_git.index.model import Category, FieldValue, Record, Subject
from hti_git.index.slug import unique_slug

MAX_VALUES_PER_FIELD = 12  # paper §3.2: a fixed cap per field keeps each subject small
_PUNCT = re.compile(r"[^\w ]+")


def name_key(text: str) -> str:
    """A name as compared for deduplication: folded, lower-case, no punctuation, no leading 'the'."""
    key = _PUNCT.sub(" ", normalise(text)[0])
    key = " ".join(key.split())
    return key[4:] if key.startswith("the ") else key


@dataclass
class Merged:
    """A merged subject and what merge learnt about it: the chunks it came from, their summaries."""

    subject: Subject
    category: str
    chunks: list[int] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)
    keys: set[str] = field(default_factory=set)

    @property
    def multi_chunk(self) -> bool:
        return len(self.chunks) > 1


@dataclass
class MergeResult:
    record: Record
    subjects: list[Merged]
    categories: dict[str, Category]  # schema key -> category in the record (also empty ones)


def merge(schema: Schema, per_chunk: list[list[Extracted]], title: str, notes: list[str]) -> MergeResult:
    """The merged record of every chunk's subjects (chunk order, then reply order)."""
    keyed = schema.keyed()
    by_category: dict[str, list[Merged]] = {key: [] for key in keyed}
    field_order = {key: [f.name for f in c.fields] for key, c in keyed.items()}
    capped: dict[str, int] = {}
    shared = shared_aliases(per_chunk)
    for extracted in per_chunk:
        for item in extracted:
            aliases = [a for a in item.aliases if (item.category, name_key(a)) not in shared]
            keys = {name_key(item.name)} | {name_key(a) for a in aliases}
            keys.discard("")
            if not keys:
                continue
            found = next((m for m in by_category[item.category] if m.keys & keys), None)
            if found is None:
                found = Merged(Subject(name=item.name, slug=""), item.category)
                by_category[item.category].append(found)
            _absorb(found, item, aliases, keys, capped)
    for label, count in sorted(capped.items()):
        notes.append(f"merge: {label}: {count} further value(s) over the cap of {MAX_VALUES_PER_FIELD} not kept")

    merged: list[Merged] = []
    categories: dict[str, Category] = {}

    def build(spec: CategorySpec, key: str) -> Category:
        category = Category(name=spec.name, slug=spec.slug)
        categories[key] = category
        taken = {c.slug for c in spec.children}
        for child in spec.children:
            built = build(child, f"{key}/{child.slug}")
            if built.subjects or built.children:
                category.children.append(built)
        for m in by_category[key]:
            order = field_order[key]
            m.subject.fields = {name: m.subject.fields[name] for name in order if m.subject.fields.get(name)}
            m.subject.slug = unique_slug(m.subject.name, taken)
            category.subjects.append(m.subject)
            merged.append(m)
        return category

    top = [build(spec, spec.slug) for spec in schema.categories]
    record = Record(title=title, overview="", categories=[c for c in top if c.subjects or c.children])
    return MergeResult(record, merged, categories)


def shared_aliases(per_chunk: list[list[Extracted]]) -> set[tuple[str, str]]:
    """(category, alias key) pairs that two differently named subjects of one reply both give as an
    alias: the model told them apart, so the alias ("Party", "Licensor" of two licences) identifies
    neither and must not merge them, in that chunk or any other."""
    shared: set[tuple[str, str]] = set()
    for extracted in per_chunk:
        claimed: dict[tuple[str, str], str] = {}
        for item in extracted:
            own = name_key(item.name)
            for key in {name_key(a) for a in item.aliases} - {own, ""}:
                other = claimed.setdefault((item.category, key), own)
                if other != own:
                    shared.add((item.category, key))
    return shared


def _absorb(m: Merged, item: Extracted, aliases: list[str], keys: set[str], capped: dict[str, int]) -> None:
    m.keys |= keys
    if item.chunk not in m.chunks:
        m.chunks.append(item.chunk)
    if item.summary and item.summary not in m.summaries:
        m.summaries.append(item.summary)
    s = m.subject
    if not s.summary and item.summary:
        s.summary = item.summary
    for alias in [item.name, *aliases]:
        if name_key(alias) != name_key(s.name) and alias not in s.aliases:
            s.aliases.append(alias)
    for field_name, value in item.values:
        values = s.fields.setdefault(field_name, [])
        same = next((v for v in values if _value_key(v) == _value_key(value)), None)
        if same is not None:
            same.spans = sorted(set(same.spans) | set(value.spans))
            same.unverified = same.unverified and value.unverified
            continue
        if len(values) >= MAX_VALUES_PER_FIELD:
            label = f"{s.name} / {field_name}"
            capped[label] = capped.get(label, 0) + 1
            continue
        values.append(FieldValue(value.text, list(value.spans), value.unverified, value.value))


def _value_key(value: FieldValue) -> str:
    # the reading and its evidence: one sentence may hold two values of a field (two parties)
    return " ".join(normalise(value.value)[0].split()) + "\x00" + " ".join(normalise(value.text)[0].split())
