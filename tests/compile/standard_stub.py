"""A deterministic stand-in for a model answering the standard compile's prompts.

It reads a prompt the way a careful model would and answers with plausible, verifiable output:
discovery proposes clauses and defined terms; extraction turns numbered headings ("7.10 Governing
Law.") into clause subjects and quoted definitions ('("Company")') into defined terms, copying
anchors verbatim from the fenced text, and fills the rest of the passage with provisions so that
the reply grows with the text as a capable model's does; summaries are short and derived from their
prompt only.
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


_SENTENCE = re.compile(r"[A-Z][^.;\n]{40,400}?[.;](?=\s|$)")
CHARS_PER_SUBJECT = 600  # a capable model found about one subject per this much contract text


def _sentence_around(text: str, at: int, end: int) -> str:
    start = max(text.rfind(". ", 0, at) + 2, text.rfind("\n", 0, at) + 1, 0)
    stop = text.find(". ", end)
    stop = len(text) if stop == -1 else stop + 1
    return text[start:stop].strip()


def _anchor(sentence: str, words: int = 6) -> str:
    return " ".join(sentence.split()[:words])


def _reading(sentence: str, words_kept: int = 12) -> str:
    """A short value in the model's own words: the sentence's gist, not a copy of it (as long as
    the readings of the capable-model runs: about 145 tokens a subject in all)."""
    words = sentence.split()
    return " ".join(words[:words_kept]).rstrip(".,;:") + ("…" if len(words) > words_kept else "")


def extract(content: str) -> dict:
    """Like a capable model: subjects grow with the passage (one per ~600 characters, up to the cap
    the prompt states); each value is a short reading with a few anchor words copied verbatim."""
    text = document_text(content)
    keys = _keys(content)
    cap = int(m.group(1)) if (m := re.search(r"at most (\d+) subjects", content)) else 200
    clause_key = next((k for k in keys if "clause" in k), keys[0] if keys else "clauses")
    term_key = next((k for k in keys if "term" in k), None)
    subjects, used = [], set()
    for m in SECTION.finditer(text):
        number, title, sentence = m.group(1), m.group(2).strip(), m.group(3).strip()
        used.add(m.start(3))
        subjects.append({
            "category": clause_key, "name": f"{number} {title}", "aliases": [f"Section {number}"],
            "summary": f"{title}: {_reading(sentence, 22)}",
            "fields": [{"field": "text", "value": _reading(sentence), "anchor": _anchor(sentence)},
                       {"field": "section", "value": number, "anchor": f"{number} {title}"}],
        })
    if term_key:
        for m in TERM.finditer(text):
            sentence = _sentence_around(text, m.start(), m.end())
            subjects.append({
                "category": term_key, "name": m.group(1), "aliases": [],
                "summary": f"Defined term {m.group(1)}",
                "fields": [{"field": "definition", "value": _reading(sentence), "anchor": _anchor(sentence)}],
            })
    target = min(cap, -(-len(text) // CHARS_PER_SUBJECT))
    sentences = [m for m in _SENTENCE.finditer(text) if m.start() not in used]
    missing = target - len(subjects)
    if missing > 0 and sentences:
        step = max(1, len(sentences) // missing)
        for m in sentences[::step][:missing]:
            sentence = m.group(0)
            subjects.append({
                "category": clause_key, "name": "Provision: " + _anchor(sentence, 5), "aliases": [],
                "summary": _reading(sentence, 22),
                "fields": [{"field": "text", "value": _reading(sentence), "anchor": _anchor(sentence)}],
            })
    return {"subjects": subjects[:cap]}


def reply(messages: list[dict]) -> dict:
    """The answer to one standard-compile prompt, recognised from its system message."""
    system = next((m["content"] for m in messages if m["role"] == "system"), "")
    user = messages[-1]["content"]
    if system.startswith("You design the index"):
        return SCHEMA
    if system.startswith("You fill in a document's index"):
        return extract(system + "\n" + user)
    if system.startswith("You write the one-line summaries"):
        return {"summaries": [{"id": ident, "summary": f"About {name}: what it provides, for whom, on which "
                                                        f"terms and conditions, in the document's own words."}
                              for ident, name in re.findall(r"^\[(S\d+)\] (.*)$", document_text(user), re.M)]}
    if system.startswith("You summarize sections"):
        out = []
        for block in re.split(r"\n\n(?=\[K\d+\] Section: )", document_text(user)):
            head = re.match(r"\[(K\d+)\] Section: (.*)", block)
            if not head:
                continue
            entries = re.findall(r"^- (?:\[K\d+\.G\d+\] )?([^:(]+)", block, re.M)
            out.append({"id": head.group(1),
                        "summary": f"{head.group(2)}: {len(entries)} entries, including "
                                   f"{'; '.join(e.strip() for e in entries[:8])}. They set out who does what, "
                                   f"when and on which conditions, with the amounts and dates that apply."})
            out += [{"id": g, "summary": f"{title.strip()}: {count} entries on who does what and when, with the "
                                         f"amounts and dates that apply."}
                    for g, title, count in re.findall(r"^- \[(K\d+\.G\d+)\] ([^(]+)\((\d+) entr", block, re.M)]
        return {"summaries": out}
    if system.startswith("You write the root page"):
        opening = document_text(user).split("\n\nSections of the index:")[0].removeprefix("Opening of the document:")
        m = re.search(r"\S.{2,80}?AGREEMENT", opening, re.I)
        title = " ".join(m.group(0).split()) if m else " ".join(opening.split()[:6]) or "Agreement"
        return {"title": title, "summary": f"The index of {title}: clauses and defined terms."}
    if system.startswith("A section of a document index has too many entries"):
        ids = re.findall(r"^(S\d+) ", document_text(user), re.M)
        most = int(m.group(1)) if (m := re.search(r"at most (\d+)\s+sub-sections", system)) else 2
        size = max(1, -(-len(ids) // most))  # as many groups as asked for, as a capable model makes
        return {"groups": [{"name": f"Part {i // size + 1}", "members": ids[i:i + size]}
                           for i in range(0, len(ids), size)]}
    raise AssertionError(f"unexpected prompt: {system[:80]!r}")


def stub_handler(body: dict) -> dict:
    """For OpenAIStub(handler=...)."""
    return reply(body.get("messages", []))
