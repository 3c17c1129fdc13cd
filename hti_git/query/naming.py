"""How a question names a document: by its parties' legal names and by the words of its file name.

A contract defines its parties in its preamble: `between Duckwall-Alco Stores, Inc., a Kansas corporation
(the "Company") and ...`. The party's page is titled by the role ("Company"), and a reader asks about
"Alco". `legal_names` takes the name written just before the role's definition, and a question meets it
only where the question writes the word with a capital (`capitalized`), so "Clear Capital" is named by
"Does Clear Capital own the work?", not by "working capital".

File names of filings and exhibits run a company's name together ("alcostoresinc-12-14-2005-ex-10-26"):
a capitalised question word of four letters or more that begins such a run names the document too
(`slug_prefixes`: "Alco", "Merit").
"""

from __future__ import annotations

import re
from collections.abc import Container

from hti_git.lexical import STOPWORDS, search_terms
from hti_git.query.thesaurus import ABBREVIATIONS

_QUOTES = "\"'“”‘’"
_DESCRIPTOR = re.compile(r",\s+an?\s+(?=[A-Za-z])")  # ", a Delaware corporation", ", an individual residing in"
_NAME_WORD = re.compile(r"(?:[A-Z0-9][\w&@.'’-]*|&|of|de|du|von|van),?$")
_CAPITALIZED = re.compile(r"\b[A-Z][\w&@'’-]*")
_CAPITALIZED_RUN = re.compile(r"\b[A-Z][\w&@'’-]*(?:\s+[A-Z][\w&@'’-]*)*")
_ALPHA = re.compile(r"[a-z]+")
_SENTENCE_START = re.compile(r"(?:^|[.?!:;]\s+)[\"'“‘(]*\S+")
# Words before a definition that say what kind of entity it is, not which one, or when it was made
# ("this 30th day of April (the "Effective Date")")
NOT_NAME_WORDS = frozenset(search_terms(
    "inc incorporated llc l.l.c ltd limited corp corporation co company companies lp llp plc sa ag gmbh nv bv "
    "holdings holding group the january february march april may june july august september october "
    "november december", frozenset()))
MIN_PREFIX = 4  # letters of a question word that may begin a run-together file-name word
MIN_RUN = 3  # letters such a word must run on past the question's word
MAX_BEFORE = 160  # characters before the definition searched for the name


def legal_names(text: str, term: str) -> list[str]:
    """The names `text` defines `term` for: `Clear Capital (the "Company")` -> ["Clear Capital"]; a
    descriptor between name and definition is skipped (`Slinger Bag Inc., a Nevada company (the "Company")`)."""
    out = []
    for m in re.finditer(r"\(([^()]{0,120})\)", text):
        inner = m.group(1)
        if not re.search(f"[{_QUOTES}]\\s*{re.escape(term)}\\s*[{_QUOTES}]", inner):
            continue
        before = text[max(0, m.start() - MAX_BEFORE): m.start()].rstrip()
        cut = list(_DESCRIPTOR.finditer(before))
        if cut and not re.search(f"[(){_QUOTES}]", before[cut[-1].start():]):  # this name's, not an earlier one's
            before = before[: cut[-1].start()]
        words = before.split()
        name: list[str] = []
        while words and _NAME_WORD.match(words[-1]) and (name or words[-1][0].isupper()):
            name.insert(0, words.pop())
        while name and not name[0][0].isupper():  # "and European Micro" -> "European Micro"
            name.pop(0)
        if name:
            out.append(" ".join(name).rstrip(","))
    return out


def name_stems(names: list[str], text: str) -> set[str]:
    """The stems that tell a legal name apart: its words without the entity kind ("Inc.", "Corporation")
    and without the common words the document `text` also writes in lower case ("General" of "General
    Electric Capital" where the text speaks of "general" terms)."""
    words = {w for n in names for w in _ALPHA.findall(n.lower())}
    common = {w for w in words if re.search(rf"(?<![\w-]){w}(?![\w-])", text)}
    return {s for w in words - common for s in search_terms(w, STOPWORDS)} - NOT_NAME_WORDS


def capitalized(question: str) -> set[str]:
    """Stems of the words the question writes with a capital: the ones that may be names."""
    return set(search_terms(" ".join(_CAPITALIZED.findall(question)), STOPWORDS))


def slug_prefixes(question: str, slug: str) -> set[str]:
    """The question's capitalised words that begin a run-together word of the file name `slug`, with the
    capitalised words right after them that continue it: "Alco" in "alcostoresinc-12-14-2005-ex-10-26",
    "Merit Life" in "meritlifeinsuranceco-06-19-2020-ex-10-xiv"."""
    runs = _ALPHA.findall(slug.lower())
    out: set[str] = set()
    for group in _CAPITALIZED_RUN.findall(question):
        words = [w.lower() for w in group.split()]
        for i, first in enumerate(words):
            if len(first) < MIN_PREFIX or not first.isalpha():
                continue
            for r in runs:
                j, joined = i, first
                while j + 1 < len(words) and r.startswith(joined + words[j + 1]):
                    j, joined = j + 1, joined + words[j + 1]
                if r.startswith(joined) and len(r) >= len(joined) + MIN_RUN:
                    out.update(words[i: j + 1])
    return out


def naming_stems(question: str, proper: set[str], slug: str) -> set[str]:
    """The stems of the question's words that name the document (a party's legal name written with a
    capital, the start of its run-together file name): they say which document, not which clause."""
    return (capitalized(question) & proper) | set(search_terms(" ".join(sorted(slug_prefixes(question, slug))), STOPWORDS))


def unmentioned_names(core: str, vocabulary: Container[str], naming: Container[str] = frozenset()) -> list[str]:
    """The names the question's core (`clause_search.question_core`) asks about, runs of words written
    with a capital past a sentence's first word ("TSMC", "Tim Cook"), of which the document uses no
    word at all (`vocabulary`: its stems, as `lexical.search_terms` stems them). A document that never
    mentions TSMC cannot say which law governs Apple's contract with TSMC. A name is mentioned when any
    of its words is ("Cook" of "Timothy D. Cook"), or an abbreviation's spelled-out words all are, or
    when it names the document (`naming`: "Merit Life" of "meritlifeinsuranceco-...", `naming_stems`)."""
    starts = {m.end() for m in _SENTENCE_START.finditer(core)}
    out = []
    for m in _CAPITALIZED_RUN.finditer(core):
        words = m.group(0).split()
        if m.end(0) - len(m.group(0)) + len(words[0]) in starts:
            words = words[1:]  # "What", "Does": a sentence's first word has its capital anyway
        words = [re.sub(r"['’]s$", "", w) for w in words]
        stems = set(search_terms(" ".join(words), STOPWORDS)) - NOT_NAME_WORDS
        if not stems or any(s in vocabulary or s in naming for s in stems):
            continue
        spelled = [ABBREVIATIONS.get(w.lower()) for w in words]
        if any(s and all(t in vocabulary for t in search_terms(s, STOPWORDS)) for s in spelled):
            continue
        out.append(" ".join(words))
    return out
