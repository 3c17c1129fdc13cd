"""Word search over an index's listings: each entry as its listing shows it (title, one-line
summary, keywords), ranked against the question like clause search ranks passages.

This is the scoring half of paper §3.4's navigation ("navigation scores these summaries against
the question"), run best-first: it starts from the root's entries and its categories' entries (the
listings the first navigation step shows anyway) and opens a deeper listing only while one of its
entries outranks the subjects found so far, at most MAX_READS of them. It never reads a subject page,
so it costs a few listings however large the document. Model navigation shows the subject pages it
ranks first on its first step.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from hti_git.index.page import Page
from hti_git.lexical import terms
from hti_git.query.clause_search import ClauseIndex, Group, Unit, routing_stems

MAX_READS = 3  # listings below the root's categories that one search may open
RUNNER_UP_SHARE = 0.6  # a page after the first is shown only when it scores this share of the first's


def _index(entries: dict[str, dict[str, Any]], known: dict[str, tuple[list[str], frozenset[str]]]) -> ClauseIndex:
    """The entries as a clause index; `known` keeps each entry's words (and its title's) between the
    rounds of one search, which index the same entries again with a listing's more."""
    index = ClauseIndex("", "", "")
    for path, entry in entries.items():
        title = str(entry.get("title", ""))
        if path not in known:
            text = " ".join([title, str(entry.get("summary", "")), " ".join(map(str, entry.get("keywords") or []))])
            known[path] = (terms(text), frozenset(terms(title)))
        words, title_words = known[path]
        if words:
            index.units.append(Unit(path, title, str(entry.get("kind", "")), 0, 0, None, True, Counter(words),
                                    len(words), title_words))
    index.finish()
    return index


def _expand(index: ClauseIndex, q: list[str]) -> list[Group]:
    """Each question word (stemmed as the compile stems the listings' keywords, `lexical.terms`) with
    the listings' words of the same root: 'assign' ~ 'assignable', 'terminat' ~ 'termination'."""
    groups = []
    for s in q:
        group = {s}
        if len(s) >= 5:
            group |= {t for t in index.vocab if t != s and _same_root(s, t)}
        groups.append(Group(group, group))  # a word's forms: all its own
    return groups


def _same_root(a: str, b: str) -> bool:
    """One is the other plus a suffix, and the shorter has 5+ letters ('part' is not 'party')."""
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= 5 and long_.startswith(short)


def _ranked(index: ClauseIndex, groups: list[Group]) -> list[tuple[float, str, str]]:
    """(score, path, kind) of the entries sharing a word with the question (its `groups`), best first."""
    weights = [index.weight(g) for g in groups]
    scored = [(index.score(groups, weights, u), i) for i, u in enumerate(index.units)]
    return [(sc, index.units[i].page, index.units[i].category)
            for sc, i in sorted(scored, key=lambda x: (-x[0], x[1])) if sc > 0]


def best_pages(root: Page, question: str, k: int, listing: Callable[[str], Page | None],
               max_reads: int = MAX_READS) -> tuple[list[str], set[str]]:
    """The `k` subject pages whose listing entries best match the question, best first, and the
    question's words as the listings spell them. `listing(path)` reads a listing page (or None)."""
    if k <= 0 or not routing_stems(question):
        return [], set()
    entries: dict[str, dict[str, Any]] = {}
    opened: set[str] = set()
    known: dict[str, tuple[list[str], frozenset[str]]] = {}

    def add(page: Page | None) -> None:
        for child in page.links() if page is not None else []:
            entries.setdefault(page.resolve(str(child.get("link", ""))), child)

    add(root)
    for path, entry in list(entries.items()):
        if entry.get("kind") == "category":
            opened.add(path)
            add(listing(path))
    reads = 0
    while True:
        index = _index(entries, known)
        groups = _expand(index, routing_stems(question))
        ranked = _ranked(index, groups)
        subjects = [(sc, path) for sc, path, kind in ranked if kind != "category"]
        deeper = next(((sc, path) for sc, path, kind in ranked if kind == "category" and path not in opened), None)
        kth = subjects[k - 1][0] if len(subjects) >= k else 0.0
        if deeper is None or reads >= max_reads or deeper[0] <= kth:
            words = set().union(*groups)
            top = subjects[0][0] if subjects else 0.0
            return [path for sc, path in subjects[:k] if sc >= RUNNER_UP_SHARE * top], words
        opened.add(deeper[1])
        reads += 1
        add(listing(deeper[1]))
