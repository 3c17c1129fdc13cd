"""Grouping for layout: a category whose listing overflows a page is split into sub-categories the
model proposes (related subjects together). An unusable proposal leaves the category as it is, and
the layout then splits it deterministically by document order (`index.layout`'s fallback).
"""

from __future__ import annotations

import math
from typing import Any

from hti_git.compile.summarize import entries
from hti_git.index.layout import LayoutOptions
from hti_git.index.model import Category, Subject
from hti_git.index.slug import unique_slug
from hti_git.llm.client import ModelClient
from hti_git.llm.prompts import Template, fence
from hti_git.text import clean_line
from hti_git.tokens import estimate_tokens

_GROUP = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "members": {"type": "array", "items": {"type": "string"}}},
    "required": ["name", "members"],
    "additionalProperties": False,
}


def group_schema(groups: int) -> dict[str, Any]:
    """The grouping reply: at most `groups` named groups of entry ids."""
    return {"type": "object", "properties": {"groups": {"type": "array", "maxItems": groups, "items": _GROUP}},
            "required": ["groups"], "additionalProperties": False}


LINE_OVERHEAD_TOKENS = 16  # link syntax and counts around a title and summary in a listing line
CATEGORY_LINE_TOKENS = 60  # a sub-category's summary is not written yet when grouping runs


def overflows(category: Category, options: LayoutOptions) -> bool:
    """True when the category's listing would not fit one page (more links than the fan-out, or
    more tokens than the page budget), as the layout decides it."""
    n = len(category.subjects) + len(category.children)
    tokens = sum(estimate_tokens(f"{s.name} {s.summary}") + LINE_OVERHEAD_TOKENS for s in category.subjects)
    tokens += CATEGORY_LINE_TOKENS * len(category.children)
    return n >= 2 and (n > options.fanout or tokens > options.page_budget)


def group_count(category: Category, options: LayoutOptions) -> int:
    return groups_for(len(category.subjects), len(category.children), options)


def groups_for(subjects: int, children: int, options: LayoutOptions) -> int:
    """How many groups `subjects` entries beside `children` sub-categories are split into."""
    return max(2, min(options.fanout - children, math.ceil(subjects / options.fanout) + 1))


def group_messages(template: Template, category: Category, groups: int) -> list[dict]:
    """The grouping request: entry names only, so editing a subject's values or summary keeps the
    prompt (and, through the cache, the grouping and every page path) unchanged."""
    lines = [f"Section: {category.name}", "Entries:"]
    for i, s in enumerate(_subjects_in_order(category), 1):
        lines.append(f"S{i} {s.name}")
    return template.messages(groups=groups, entries=fence("\n".join(lines)))


def _subjects_in_order(category: Category) -> list[Subject]:
    return [item for item in entries(category) if isinstance(item, Subject)]


async def group_category(client: ModelClient, template: Template, category: Category, options: LayoutOptions,
                         notes: list[str]) -> None:
    """Move the subjects of an overflowing category into model-proposed sub-categories (in place)."""
    groups = group_count(category, options)
    if groups < 2:
        return
    completion = await client.complete("layout", group_messages(template, category, groups), group_schema(groups),
                                       label=category.name)
    subjects = _subjects_in_order(category)
    plan = _plan(completion.json, len(subjects), groups)
    if plan is None:
        notes.append(f"layout: {category.name}: the proposed grouping was unusable; split by document order")
        return
    taken = {c.slug for c in category.children} | {s.slug for s in category.subjects}
    for name, members in plan:
        child = Category(name=name, slug=unique_slug(name, taken, 40, "group"))
        child.subjects = [subjects[i] for i in members]
        category.children.append(child)
    category.subjects = []


def _plan(data: Any, n: int, most: int) -> list[tuple[str, list[int]]] | None:
    """[(name, member indexes)] from a reply: ids out of range ignored, each subject in its first
    group, the unplaced ones in 'Other'. None when it does not split the subjects at all."""
    raw = data.get("groups") if isinstance(data, dict) else None
    if not isinstance(raw, list):
        return None
    placed: set[int] = set()
    plan: list[tuple[str, list[int]]] = []
    names: set[str] = set()
    for group in raw:
        if not isinstance(group, dict):
            continue
        name = clean_line(group.get("name", ""), 60)
        members = []
        for ident in group.get("members") or []:
            text = str(ident).strip().upper().lstrip("S")
            if text.isdigit() and 1 <= int(text) <= n and int(text) - 1 not in placed:
                placed.add(int(text) - 1)
                members.append(int(text) - 1)
        if members and name and name.lower() not in names:
            names.add(name.lower())
            plan.append((name, sorted(members)))
        elif members:  # a nameless or repeated group: fold into the previous one
            if plan:
                plan[-1][1].extend(members)
            else:
                plan.append(("Other", members))
    rest = [i for i in range(n) if i not in placed]
    if rest:
        plan.append(("Other entries" if "other" in names else "Other", rest))
    if len(plan) < 2 or len(plan) > most + 1:
        return None
    return plan
