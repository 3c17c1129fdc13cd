"""The LLM judge: does a candidate answer say the same as the reference? (paper §4.1).

Called only for answers the deterministic match (match.py) cannot decide, and only when a model is
configured; its own model may be chosen (`--judge-model`). Template `judge` in the index repo's
templates/ (else the packaged one), so a team can recalibrate it and review the change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from hti_git.llm.client import ModelClient
from hti_git.llm.prompts import Template, load_template

JUDGE_SCHEMA = {
    "type": "object",
    "properties": {"equivalent": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["equivalent", "reason"],
    "additionalProperties": False,
}
CANDIDATE_CHARS = 4000  # an extractive answer can be long; the judge needs its head, not all of it


@dataclass(frozen=True)
class Ruling:
    equivalent: bool
    reason: str
    input_tokens: int
    output_tokens: int


def judge_template(repo_root: Path | None = None) -> Template:
    return load_template("judge", repo_root)


def _fenced(text: str) -> str:
    text = " ".join(text.split())[:CANDIDATE_CHARS]
    return re.sub(r"<(?=/?\s*answer\s*>)", "\u2039", text, flags=re.I)


async def judge(client: ModelClient, template: Template, question: str, reference: str, candidate: str) -> Ruling:
    """One judge call (through the client's cache and ledger)."""
    messages = template.messages(question=question, reference=reference, candidate=_fenced(candidate))
    completion = await client.complete("judge", messages, JUDGE_SCHEMA, label=question[:60])
    data = completion.json if isinstance(completion.json, dict) else {}
    usage = completion.usage
    tokens_in, tokens_out = (0, 0) if completion.cached else (usage.input_tokens, usage.output_tokens)
    return Ruling(bool(data.get("equivalent")), str(data.get("reason") or "")[:200], tokens_in, tokens_out)
