"""A deterministic stand-in for a model answering the standard compile's prompts.

It reads a prompt the way a careful model would and answers with plausible, verifiable output:
discovery proposes clauses and defined terms; extraction turns numbered headings ("7.10 Governing
Law.") into clause subjects and quoted definitions ('("Company")') into defined terms, copying
quotes verbatim from the fenced text; summaries are short and derived from their prompt only.
`reply(messages)` works for ScriptedProvider (default=reply); `stub_handler(body)` for the
OpenAI-compatible stub server.
"""

from __future__ import annotations

import re

SECTION = re.compile(r"(?:(?<=\s)|^)(?:Section\s+)?(\d{1,2}\.\d{1,2})\s+([A-Z][A-Za-z,'/&\- ]{2,50}?)\.\s+([^\n]{20,}?[.;])(?=\s|$)")
TERM = re.compile(r"\((?:the\s+|each\s+a\s+|a\s+)?[\"“]([A-Z][A-Za-z\- ]{1,40})[\"”]\)")
SCHEMA = {
    "overview": "A commercial contract: its clauses and the terms it defines.",
    "categories": [
        {"name": "Clauses", "description": "Numbered sections of the agreement.",
         "fields": [{"name": "text", "description": "what the clause provides"},
                    {"name": "section", "description": "the section number"}],
         "subcategories": []},
        {"name": "Defined terms", "description": "Capitalised terms the agreement defines.",
         "fields": [{"name": "definition", "description": "the sentence defining the term"}],
         "subcategories": []},
    ],
}


def document_text(content: str) -> str:
    """The text inside the first <document> fence of a prompt."""
    m = re.search(r"<document>\n(.*)\n</document>", content, re.S)
    return m.group(1) if m else ""


def _keys(content: str) -> list[str]:
    return re.findall(r"^- ([a-z0-9/-]+): ", content, re.M)


def _sentence_around(text: str, at: int, end: int) -> str:
    start = max(text.rfind(". ", 0, at) + 2, text.rfind("\n", 0, at) + 1, 0)
    stop = text.find(". ", end)
    stop = len(text) if stop == -1 else stop + 1
    return text[start:stop].strip()


def extract(content: str) -> dict:
    text = document_text(content)
    keys = _keys(content)
    clause_key = next((k for k in keys if "clause" in k), keys[0] if keys else "clauses")
    term_key = next((k for k in keys if "term" in k), None)
    subjects = []
    for m in SECTION.finditer(text):
        number, title, sentence = m.group(1), m.group(2).strip(), m.group(3).strip()
        subjects.append({
            "category": clause_key, "name": f"{number} {title}", "aliases": [f"Section {number}"],
            "summary": f"{title}: {sentence[:80]}",
            "fields": [{"field": "text", "value": sentence, "quote": sentence},
                       {"field": "section", "value": number, "quote": f"{number} {title}"}],
        })
    if term_key:
        for m in TERM.finditer(text):
            sentence = _sentence_around(text, m.start(), m.end())
            subjects.append({
                "category": term_key, "name": m.group(1), "aliases": [],
                "summary": f"Defined term {m.group(1)}",
                "fields": [{"field": "definition", "value": sentence, "quote": sentence}],
            })
    return {"subjects": subjects}


def reply(messages: list[dict]) -> dict:
    """The answer to one standard-compile prompt, recognised from its system message."""
    system = next((m["content"] for m in messages if m["role"] == "system"), "")
    user = messages[-1]["content"]
    if system.startswith("You design the index"):
        return SCHEMA
    if system.startswith("You fill in a document's index"):
        return extract(user)
    if system.startswith("You write the one-line summary"):
        name = re.search(r"Subject: (.*)", user)
        return {"summary": f"About {name.group(1) if name else 'this subject'}."}
    if system.startswith("You summarize a section"):
        body = document_text(user)
        name = re.search(r"Section: (.*)", body)
        entries = re.findall(r"^- ([^:(]+)", body, re.M)
        return {"summary": f"{name.group(1) if name else 'Section'}: {len(entries)} entries, "
                           f"including {'; '.join(e.strip() for e in entries[:3])}."}
    if system.startswith("You write the root page"):
        opening = document_text(user).split("\n\nSections of the index:")[0].removeprefix("Opening of the document:")
        m = re.search(r"\S.{2,80}?AGREEMENT", opening, re.I)
        title = " ".join(m.group(0).split()) if m else " ".join(opening.split()[:6]) or "Agreement"
        return {"title": title, "summary": f"The index of {title}: clauses and defined terms."}
    if system.startswith("A section of a document index has too many entries"):
        ids = re.findall(r"^(S\d+) ", document_text(user), re.M)
        size = max(1, -(-len(ids) // 2))
        return {"groups": [{"name": f"Part {i // size + 1}", "members": ids[i:i + size]}
                           for i in range(0, len(ids), size)]}
    raise AssertionError(f"unexpected prompt: {system[:80]!r}")


def stub_handler(body: dict) -> dict:
    """For OpenAIStub(handler=...)."""
    return reply(body.get("messages", []))
