"""Routing: with several documents, the model picks the ones worth navigating from root summaries."""

from __future__ import annotations

from hti_git.llm.client import ModelClient
from hti_git.llm.prompts import Template, fence
from hti_git.query.model_nav import step_tokens
from hti_git.query.types import Step
from hti_git.store import Snapshot
from hti_git.text import one_line

ROUTE_SCHEMA = {
    "type": "object",
    "properties": {"docs": {"type": "array", "items": {"type": "string"}}, "reason": {"type": "string"}},
    "required": ["docs", "reason"],
    "additionalProperties": False,
}
SUMMARY_CHARS = 400


def render_documents(snapshot: Snapshot, docs: list[str]) -> str:
    """One entry per document: id, folder, title, summary and its top-level sections (from the
    catalogue, so routing reads one blob rather than every root page)."""
    entries = snapshot.catalog().entries
    rows = []
    for i, doc in enumerate(docs, 1):
        entry = entries.get(doc) or {}
        rows.append(f"D{i} {doc}: {one_line(entry.get('title') or '', 120)}\n"
                    f"  {one_line(entry.get('summary') or '', SUMMARY_CHARS)}\n"
                    f"  Sections: {one_line(entry.get('sections') or '', 200)}")
    return fence("\n".join(rows))


async def route(snapshot: Snapshot, question: str, docs: list[str], client: ModelClient, template: Template,
                trace: list[Step]) -> list[str]:
    """The documents (a subset of `docs`, most likely first) the model chose; [] when none fits."""
    messages = template.messages(question=question, documents=render_documents(snapshot, docs))
    completion = await client.complete("route", messages, ROUTE_SCHEMA, label=f"{len(docs)} documents")
    data = completion.json if isinstance(completion.json, dict) else {}
    by_id = {f"D{i}": d for i, d in enumerate(docs, 1)}
    chosen: list[str] = []
    for name in data.get("docs") or []:
        key = str(name).strip()
        doc = by_id.get(key.upper()) or (key if key in docs else None)
        if doc and doc not in chosen:
            chosen.append(doc)
    reason = one_line(data.get("reason") or "", 200)
    skipped = [d for d in docs if d not in chosen]
    note = f"kept {', '.join(chosen) or 'none'}" + (f"; skipped {', '.join(skipped)}" if skipped else "")
    trace.append(Step("", "route", note=f"{note}: {reason}" if reason else note, tokens=step_tokens(completion)))
    return chosen
