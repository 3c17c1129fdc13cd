"""A deterministic stand-in for a model answering hti-git's route / navigate / answer prompts.

It reads the prompt the way a model would (by word overlap with the question), so tests and
bench/ask_cost.py can drive real navigation without a network: route to the best-matching document,
open the best-looking child until a subject page is reached, then answer from the best evidence item
with a verbatim quote. `decide(messages)` works for ScriptedProvider; `stub_handler(body)` for the
OpenAI-compatible stub server.
"""

from __future__ import annotations

import re

from hti_git.lexical import question_terms, terms

_LINK = re.compile(r"^([CR]\d+)(?: \[([^\]]*)\])? (.*)$", re.M)
_EVIDENCE = re.compile(r"^\[([ES]\d+)\] (?:([\w -]+): )?(.*)$", re.M)
_DOC = re.compile(r"^(D\d+) [^:]+: (.*(?:\n  .*)*)", re.M)


def _question(user: str) -> str:
    m = re.search(r"^Question: (.*)", user, re.M)
    return m.group(1) if m else ""


def _overlap(q: set[str], text: str) -> int:
    return len(q & set(terms(text)))


def decide(messages: list[dict]) -> dict:
    """The reply for one hti-git prompt (its kind is recognised from the system message)."""
    system = next((m["content"] for m in messages if m["role"] == "system"), "")
    user = messages[-1]["content"]
    q = set(question_terms(_question(user)))
    if "Pick the documents" in system:
        scored = sorted(((_overlap(q, text), d) for d, text in _DOC.findall(user)), key=lambda x: (-x[0], x[1]))
        return {"docs": [scored[0][1]] if scored and scored[0][0] else [], "reason": "best word overlap"}
    if "answer a question from a document's index" in system:
        if re.search(r"^Page \S+ \(subject\):", user, re.M):
            return {"action": "answer", "links": [], "keep": [], **_answer(q, user), "check_source": True,
                    "reason": "reached a subject"}
        if "Pages a word search found" in user:
            found = _answer(q, user)  # a word search's pages: answer when they say it, else navigate
            if found["found"] and len(q) > 1 and _overlap(q, found["citations"][0]["quote"]) >= 2:
                return {"action": "answer", "links": [], "keep": [], **found, "check_source": True,
                        "reason": "a search found it"}
        children = [(i, note, text) for i, note, text in _LINK.findall(user) if i.startswith("C")]
        if not children:
            return {"action": "answer", "links": [], "keep": [], **_answer(q, user), "check_source": True,
                    "reason": "nothing to open"}
        best = max(children, key=lambda c: (_overlap(q, c[2]), -int(c[0][1:])))
        return {"action": "open", "links": [best[0]], "keep": [], "found": False, "answer": "", "citations": [],
                "check_source": False, "reason": "closest to the question"}
    if "from the evidence only" in system:
        return _answer(q, user)
    return {"ok": True}


def _answer(q: set[str], user: str) -> dict:
    """{found, answer, citations} from the evidence items in the prompt."""
    # a careful model cites a value's own sentence (after "|"), not a summary's paraphrase
    items = [(i, text.split(" | ", 1)[-1]) for i, label, text in _EVIDENCE.findall(user) if label != "summary"]
    # on a tie, the clause's text over its bare heading (a heading states nothing)
    scored = sorted(((_overlap(q, t), n, i, t) for n, (i, t) in enumerate(items)),
                    key=lambda x: (-x[0], len(x[3]) < 40, x[1]))
    if not scored or scored[0][0] == 0:
        return {"found": False, "answer": "not found", "citations": []}
    _, _, ident, text = scored[0]
    quote = " ".join(text.split()[:20])
    return {"found": True, "answer": text.split(". ")[0][:300], "citations": [{"evidence": ident, "quote": quote}]}


def stub_handler(body: dict) -> dict:
    """`decide` for a chat-completions request body (OpenAIStub handler)."""
    return decide(body.get("messages", []))
