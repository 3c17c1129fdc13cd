"""Discovery (paper §3.2): the model reads a sample of the document and proposes the schema.

The sample stays within a token budget: the whole text when it fits, else the document's shape
(its outline: headings and numbered sections, found as the `fast` method finds them), its opening
and excerpts spread evenly over the rest, so discovery sees the whole document's structure at a
fraction of extraction's cost. For a corpus, each document
gets an equal share of the budget and one schema is proposed for all of them.
"""

from __future__ import annotations

from typing import Any

from hti_git.compile.schema import Schema, schema_from_data
from hti_git.compile.structure import find_headings
from hti_git.errors import ModelError
from hti_git.llm.client import ModelClient
from hti_git.llm.prompts import Template, fence
from hti_git.sources.types import SourceText
from hti_git.tokens import estimate_tokens

# Discovery reads this share of the document's tokens, within [MIN, MAX] tokens.
SAMPLE_SHARE = 0.10
SAMPLE_MIN_TOKENS = 1_200
SAMPLE_MAX_TOKENS = 6_000
OUTLINE_SHARE = 0.35  # of the sample, at most: the headings, top levels first
OPENING_SHARE = 0.25  # of the sample: the opening names the parties and the title
EXCERPT_TOKENS = 250

_FIELD = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "description": {"type": "string"}},
    "required": ["name", "description"],
    "additionalProperties": False,
}
_LEAF = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "description": {"type": "string"},
        "fields": {"type": "array", "items": _FIELD, "maxItems": 6},
    },
    "required": ["name", "description", "fields"],
    "additionalProperties": False,
}
DISCOVER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "overview": {"type": "string"},
        "categories": {
            "type": "array",
            "maxItems": 8,
            "items": {
                "type": "object",
                "properties": {**_LEAF["properties"],
                               "subcategories": {"type": "array", "items": _LEAF, "maxItems": 6}},
                "required": ["name", "description", "fields", "subcategories"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["overview", "categories"],
    "additionalProperties": False,
}


def sample_budget(text: str) -> int:
    """Tokens of a document that discovery reads."""
    share = int(estimate_tokens(text) * SAMPLE_SHARE)
    return max(SAMPLE_MIN_TOKENS, min(SAMPLE_MAX_TOKENS, share))


def outline(text: str, budget_tokens: int) -> str:
    """The document's headings as an indented list, top levels first when they do not all fit."""
    headings = find_headings(text)
    if not headings:
        return ""
    chosen: list = []
    used = 0
    for level in sorted({h.level for h in headings}):
        layer = [h for h in headings if h.level == level]
        cost = sum(estimate_tokens(h.title) + 3 for h in layer)
        if used + cost > budget_tokens:
            if not chosen:  # even the top level is too long: its first headings
                for h in layer:
                    used += estimate_tokens(h.title) + 3
                    if used > budget_tokens:
                        break
                    chosen.append(h)
            break
        chosen += layer
        used += cost
    top = min(h.level for h in chosen) if chosen else 0
    lines = ["  " * (h.level - top) + "- " + " ".join(h.title.split())
             for h in sorted(chosen, key=lambda h: h.start)]
    return "\n".join(lines)


def sample_text(text: str, budget_tokens: int) -> str:
    """The whole text when it fits `budget_tokens`, else its outline, its opening and evenly
    spaced excerpts."""
    total = estimate_tokens(text)
    if total <= budget_tokens:
        return text
    chars_per_token = len(text) / max(1, total)
    shape = outline(text, int(budget_tokens * OUTLINE_SHARE))
    budget_chars = int((budget_tokens - estimate_tokens(shape)) * chars_per_token)
    opening = _cut(text, 0, int(budget_chars * OPENING_SHARE / (1 - OUTLINE_SHARE)))
    parts = [f"[outline: the document's headings]\n{shape}"] if shape else []
    parts.append(f"[opening]\n{text[:opening].rstrip()}")
    excerpt_chars = int(EXCERPT_TOKENS * chars_per_token)
    count = max(1, (budget_chars - opening) // max(1, excerpt_chars))
    span = len(text) - opening
    for i in range(count):
        at = opening + int(span * (i + 0.5) / count)
        start = text.find(" ", at) + 1 or at
        end = _cut(text, start, start + excerpt_chars)
        piece = " ".join(text[start:end].split())
        if piece:
            parts.append(f"[… excerpt at {100 * start // len(text)}% …]\n{piece}")
    return "\n\n".join(parts)


def _cut(text: str, start: int, end: int) -> int:
    """An end at or before `end` on a paragraph, sentence or word break."""
    end = min(end, len(text))
    if end >= len(text):
        return len(text)
    for sep in ("\n\n", ". ", "\n", " "):
        at = text.rfind(sep, start + (end - start) // 2, end)
        if at != -1:
            return at + len(sep)
    return end


def discovery_messages(template: Template, samples: list[tuple[str, str]]) -> list[dict]:
    """The request: each (name, sample) fenced as data."""
    blocks = [fence(f"[{name}]\n{sample}") for name, sample in samples]
    return template.messages(documents="\n\n".join(blocks))


async def discover_schema(client: ModelClient, template: Template, sources: list[SourceText],
                          notes: list[str], budget_tokens: int | None = None) -> Schema:
    """The schema the model proposes for `sources` (one document, or a corpus sharing a schema)."""
    if budget_tokens is None:
        budget_tokens = sum(sample_budget(s.text) for s in sources) if len(sources) == 1 else \
            min(SAMPLE_MAX_TOKENS * 2, sum(sample_budget(s.text) for s in sources))
    share = max(SAMPLE_MIN_TOKENS // 2, budget_tokens // max(1, len(sources)))
    samples = [(s.name, sample_text(s.text, share)) for s in sources]
    completion = await client.complete("discover", discovery_messages(template, samples), DISCOVER_SCHEMA,
                                       label=sources[0].name if len(sources) == 1 else f"{len(sources)} documents")
    try:
        return schema_from_data(completion.json, notes=notes)
    except ValueError as exc:
        raise ModelError(f"discover: the model proposed no usable schema ({exc})") from None
