"""Summaries, bottom-up: subjects, then categories from their entries, then the root overview.

These are the texts navigation reads. Each prompt holds only what it summarises (subjects' own
values, the readings rather than the evidence sentences; a category's entries with their whole
summaries; the root's opening and category summaries), so an edit re-asks only along the changed
path and everything else comes from the response cache. Subjects are summarised in batches, so
calls grow with pages, not with subjects.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hti_git.compile.schema import Schema
from hti_git.index.model import Category, Subject
from hti_git.index.plural import counted
from hti_git.llm.client import ModelClient
from hti_git.llm.prompts import Template, fence
from hti_git.text import clean_line
from hti_git.tokens import estimate_tokens

SUBJECT_CONTENT_TOKENS = 400  # a subject in a summary prompt shows at most this much of its values
SUBJECTS_PER_CALL = 15  # subjects summarised in one call
OPENING_CHARS = 600  # the document opening the root prompt shows (titles and parties live there)
SUBJECT_SUMMARY_CHARS = 240
CATEGORY_SUMMARY_CHARS = 700
ROOT_SUMMARY_CHARS = 1_000
CATEGORY_BATCH_TOKENS = 2_500  # sections' entries one summary call may show
CATEGORY_REPLY_TOKENS = 130  # a section's summary (at most 80 words) with its id
GROUP_REPLY_TOKENS = 70  # a group's summary (at most 40 words) with its id
REPLY_SHARE = 0.7  # of max_output_tokens that a summary reply may be planned to fill

SUMMARY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"summary": {"type": "string"}},
    "required": ["summary"],
    "additionalProperties": False,
}
OVERVIEW_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "summary": {"type": "string"}},
    "required": ["title", "summary"],
    "additionalProperties": False,
}


def _reply(completion, key: str = "summary") -> str:
    data = completion.json
    return str(data.get(key) or "") if isinstance(data, dict) else ""


def subject_content(subject: Subject, ident: str = "") -> str:
    """A subject as a summary prompt shows it: name, aliases and its values (the readings, else the
    evidence sentence), whole values only, within a token cap."""
    lines = [f"[{ident}] {subject.name}" if ident else f"Subject: {subject.name}"]
    if subject.aliases:
        lines.append("Also called: " + "; ".join(subject.aliases))
    used = estimate_tokens("\n".join(lines))
    left = 0
    for name, values in subject.fields.items():
        for value in values:
            line = f"{name}: {' '.join((value.value or value.text).split())}"
            cost = estimate_tokens(line)
            if used + cost > SUBJECT_CONTENT_TOKENS and len(lines) > 1:
                left += 1
                continue
            lines.append(line)
            used += cost
    if left:
        lines.append(f"({left} more values)")
    return "\n".join(lines)


def fallback_subject_summary(subject: Subject) -> str:
    """An extractive one-liner when the model gave none: the first value, else the name."""
    for values in subject.fields.values():
        for value in values:
            return clean_line(value.text, 160)
    return subject.name


def summaries_schema(count: int) -> dict[str, Any]:
    item = {"type": "object", "properties": {"id": {"type": "string"}, "summary": {"type": "string"}},
            "required": ["id", "summary"], "additionalProperties": False}
    return {"type": "object", "properties": {"summaries": {"type": "array", "items": item, "maxItems": count}},
            "required": ["summaries"], "additionalProperties": False}


def subject_batches(subjects: list[Subject]) -> list[list[Subject]]:
    """Subjects in prompt-sized batches: calls grow with pages of subjects, not with subjects."""
    return [subjects[i:i + SUBJECTS_PER_CALL] for i in range(0, len(subjects), SUBJECTS_PER_CALL)]


async def summarize_subjects(client: ModelClient, template: Template, subjects: list[Subject], label: str) -> None:
    """One line for each subject merged from several chunks (their one-line views no longer cover
    it), SUBJECTS_PER_CALL to a call; a subject the reply misses keeps its extraction summary."""
    for batch in subject_batches(subjects):
        ids = {f"S{i + 1}": s for i, s in enumerate(batch)}
        content = fence("\n\n".join(subject_content(s, ident) for ident, s in ids.items()))
        completion = await client.complete("summarize", template.messages(subjects=content),
                                           summaries_schema(len(batch)), label=label)
        data = completion.json if isinstance(completion.json, dict) else {}
        for item in data.get("summaries") or []:
            if isinstance(item, dict) and str(item.get("id", "")).strip("[] ") in ids:
                subject = ids[str(item["id"]).strip("[] ")]
                subject.summary = clean_line(item.get("summary", ""), SUBJECT_SUMMARY_CHARS) or subject.summary
    for subject in subjects:
        subject.summary = subject.summary or fallback_subject_summary(subject)


def _first_offset(item: Category | Subject) -> int:
    if isinstance(item, Subject):
        spans = item.spans
        return spans[0][0] if spans else 1 << 62
    return min([_first_offset(c) for c in item.children] + [_first_offset(s) for s in item.subjects],
               default=1 << 62)


def entries(category: Category) -> list[Category | Subject]:
    """A category's children and subjects in document order, as the layout lists them."""
    return sorted([*category.children, *category.subjects], key=_first_offset)


def _count(category: Category) -> int:
    return len(category.subjects) + sum(_count(c) for c in category.children)


def _leaf(category: Category) -> bool:
    return not category.children


def category_content(category: Category, ident: str = "K1") -> str:
    """A category as its summary prompt shows it: its entries with their whole summaries; a group
    of subjects (a leaf sub-section the layout made) is shown with its own entries, id K1.G1, ..."""
    # the section's schema description is not repeated: its name and whole entries say more
    lines = [f"[{ident}] Section: {category.name}", "Entries:"]
    groups = 0
    for item in entries(category):
        if isinstance(item, Category) and _leaf(item):
            groups += 1
            lines.append(f"- [{ident}.G{groups}] {item.name} ({counted(_count(item), 'entries')}):")
            lines += [f"    - {s.name}: {s.summary}" for s in entries(item)]
        elif isinstance(item, Category):
            lines.append(f"- {item.name} ({counted(_count(item), 'entries')}): {item.summary}")
        else:
            lines.append(f"- {item.name}: {item.summary}")
    return "\n".join(lines)


def _groups(category: Category) -> list[Category]:
    return [c for c in entries(category) if isinstance(c, Category) and _leaf(c)]


def fallback_category_summary(category: Category) -> str:
    names = [item.name for item in entries(category)]
    text = f"{counted(len(names), 'entries')}: " + "; ".join(names)
    return text if len(text) <= 320 else text[:317].rsplit(";", 1)[0] + "; …"


def category_levels(categories: list[Category]) -> list[list[Category]]:
    """Categories that need a summary call, deepest level first (a section's prompt shows its
    sub-sections' summaries); leaf groups are summarised in their parent's call."""
    levels: dict[int, list[Category]] = {}

    def walk(category: Category, depth: int) -> None:
        for child in category.children:
            if not _leaf(child):
                walk(child, depth + 1)
        levels.setdefault(depth, []).append(category)

    for category in categories:
        walk(category, 0)
    return [levels[d] for d in sorted(levels, reverse=True)]


def category_batches(level: list[Category], max_output_tokens: int) -> list[list[Category]]:
    """Sections packed into calls in order: a call's prompt holds about CATEGORY_BATCH_TOKENS of
    entries and its reply fits REPLY_SHARE of the output limit, so calls grow with pages of
    sections, not with sections."""
    batches: list[list[Category]] = []
    used_in = used_out = 0
    room_out = max_output_tokens * REPLY_SHARE
    for category in level:
        cost_in = estimate_tokens(category_content(category))
        cost_out = CATEGORY_REPLY_TOKENS + GROUP_REPLY_TOKENS * len(_groups(category))
        if not batches or used_in + cost_in > CATEGORY_BATCH_TOKENS or used_out + cost_out > room_out:
            batches.append([])
            used_in = used_out = 0
        batches[-1].append(category)
        used_in += cost_in
        used_out += cost_out
    return batches


async def summarize_categories(client: ModelClient, template: Template, categories: list[Category],
                               max_output_tokens: int) -> None:
    """Every section's summary and, in the same call, its groups' (ids K1, K1.G1, ...): deepest
    level first, each level's sections packed several to a call."""
    for level in category_levels(categories):
        batches = category_batches(level, max_output_tokens)
        await asyncio.gather(*(summarize_category_batch(client, template, b) for b in batches))


async def summarize_category_batch(client: ModelClient, template: Template, batch: list[Category]) -> None:
    ids = {f"K{i + 1}": c for i, c in enumerate(batch)}
    content = fence("\n\n".join(category_content(c, k) for k, c in ids.items()))
    count = sum(1 + len(_groups(c)) for c in batch)
    completion = await client.complete("summarize", template.messages(category=content), summaries_schema(count),
                                       label=", ".join(c.name for c in batch)[:80])
    data = completion.json if isinstance(completion.json, dict) else {}
    given = {str(g.get("id", "")).strip("[] ").upper(): g.get("summary") for g in data.get("summaries") or []
             if isinstance(g, dict)}
    for k, category in ids.items():
        category.summary = clean_line(given.get(k) or "", CATEGORY_SUMMARY_CHARS) or fallback_category_summary(category)
        for i, group in enumerate(_groups(category), 1):
            group.summary = (clean_line(given.get(f"{k}.G{i}") or "", CATEGORY_SUMMARY_CHARS)
                             or fallback_category_summary(group))


def overview_content(opening: str, schema: Schema, categories: list[Category]) -> str:
    lines = ["Opening of the document:", opening.strip(), "", "Sections of the index:"]
    for c in categories:
        lines.append(f"- {c.name} ({counted(_count(c), 'entries')}): {c.summary}")
    if schema.overview:
        lines += ["", f"Index design: {schema.overview}"]
    return fence("\n".join(lines))


async def write_overview(client: ModelClient, template: Template, text: str, schema: Schema,
                         categories: list[Category], fallback_title: str) -> tuple[str, str]:
    """(title, mega summary) of the root page."""
    opening = text[:OPENING_CHARS]
    cut = opening.rfind(" ")
    if len(text) > OPENING_CHARS and cut > OPENING_CHARS // 2:
        opening = opening[:cut]  # end on a word, so the prompt does not change with the next word
    completion = await client.complete("summarize", template.messages(document=overview_content(opening, schema, categories)),
                                       OVERVIEW_SCHEMA, label="root")
    title = clean_line(_reply(completion, "title"), 120) or fallback_title
    summary = clean_line(_reply(completion), ROOT_SUMMARY_CHARS)
    if not summary:
        summary = schema.overview or "; ".join(c.name for c in categories)
    return title, summary
