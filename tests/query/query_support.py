"""Fixtures for model answering: a real index repository compiled with the fast method."""

from __future__ import annotations

import re

import pytest

from hti_git.llm import ModelClient, ScriptedProvider

DOC = "slingerbaginc-05-27-2020-ex-10-7-consulting-agreement"
GOVERNING_LAW = f"{DOC}/clauses/article-7-general/7-10-governing-law.md"


@pytest.fixture
def repo(compiled_repo):
    return compiled_repo


def client_for(*responses, default=None) -> tuple[ModelClient, ScriptedProvider]:
    provider = ScriptedProvider(responses, default=default)
    return ModelClient(provider), provider


def link_id(messages: list[dict], title_part: str) -> str:
    """The id (C3, R1, ...) the prompt gave the link whose title contains `title_part`."""
    for ident, title in re.findall(r"^([CR]\d+)(?: \[[^\]]*\])? (.*)$", messages[-1]["content"], re.M):
        if title_part.lower() in title.lower():
            return ident
    raise AssertionError(f"no link titled like {title_part!r} in:\n{messages[-1]['content']}")


def evidence_id(messages: list[dict], text_part: str) -> str:
    """The id of the evidence item whose text contains `text_part` (a field value before a summary)."""
    items = re.findall(r"^\[([ES]\d+)\] (.*)$", messages[-1]["content"], re.M)
    for ident, text in sorted(items, key=lambda item: item[1].startswith("summary:")):
        if text_part.lower() in text.lower():
            return ident
    raise AssertionError(f"no evidence with {text_part!r} in:\n{messages[-1]['content']}")


NAV_PROMPT = "answer a question from a document's index"


def is_navigation(messages: list[dict]) -> bool:
    return NAV_PROMPT in messages[0]["content"]


def nav(action: str, links: list[str] | None = None, reason: str = "", **answer) -> dict:
    """A whole navigation reply: the move, no kept items, and (on "answer") the answer fields."""
    return {"action": action, "links": list(links or []), "keep": [], "found": False,
            "answer": "not found" if action == "answer" else "", "citations": [], "check_source": action == "answer",
            "reason": reason, **answer}


def open_(title_part: str, action: str = "open"):
    """A scripted navigation reply that opens (or follows) the link titled like `title_part`."""
    return lambda m: nav(action, [link_id(m, title_part)], f"{action} {title_part}")


def answer_citing(answer: str, text_part: str, quote: str | None = None):
    """A scripted answer citing the evidence item containing `text_part` with `quote`: navigation's
    "answer" reply in a navigation prompt, the answer step's reply otherwise."""
    def reply(m):
        body = {"found": True, "answer": answer,
                "citations": [{"evidence": evidence_id(m, text_part), "quote": quote or text_part}]}
        return nav("answer", reason="answer", **body) if is_navigation(m) else body
    return reply


def not_found(m):
    """"not found": navigation's "answer" reply in a navigation prompt, the answer step's otherwise."""
    if is_navigation(m):
        return nav("answer", reason="not there")
    return {"found": False, "answer": "not found", "citations": []}


ANSWER_NOW = nav("answer", reason="enough")  # navigation ends here; the answer is not on the pages
UP = nav("up", reason="try elsewhere")
NOT_FOUND = not_found


def citations_hold(snapshot, answer) -> None:
    """Every citation points at a real span of source.txt at that revision, with that text."""
    for c in answer.citations:
        text = snapshot.read_text(f"{c.doc}/source.txt")
        assert 0 <= c.start < c.end <= len(text)
        assert text[c.start:c.end] == c.text
        assert snapshot.exists(c.page)
