"""Clause search over one document's index: the passages of its subject pages, ranked by their words
and by their clause's own name.

Every subject page (a clause, a party, a defined term, an exhibit's section) contributes its passages
(field values with source spans). A passage is ranked by BM25 on its own text plus a bonus for the
question words that name its clause (title, heading, aliases): a clause headed "Assignment" outranks
one that mentions assignment in passing. Documents and questions are stemmed alike with the Snowball
English stemmer (`lexical.search_terms`), so "assigned" meets "Assignment" and "assignable", and
"transfer" meets "non-transferable". A question word also meets its equivalents in contract and financial
English at half weight (`thesaurus`: "buy" meets "purchase", "uncapped" meets "limit").

`coverage` is the share of the question's information (idf mass, with words the document never
uses counting as the rarest) that a clause holds: the calibration of "not found". One shared common
word covers little; the clause's own distinctive words cover much.
"""

from __future__ import annotations

import bisect
import hashlib
import math
import re
import weakref
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import NamedTuple

from hti_git.index.layout import INDEX_FILE, SOURCE_FILE
from hti_git.index.page import Page
from hti_git.lexical import QUESTION_NOISE, STOPWORDS, search_terms, terms
from hti_git.query.naming import legal_names, name_stems
from hti_git.query.thesaurus import abbreviated, spelled_out, synonyms, word_forms
from hti_git.sources.passages import split_passages
from hti_git.store import Snapshot
from hti_git.text import MONTH

K1, B = 1.2, 0.75
SYNONYM_WEIGHT = 0.5  # an equivalent's occurrence (`thesaurus`) counts this share of the question word's own
NAME_WEIGHT = 1.0  # a question word, or its equivalent, in the clause's name counts this many times its idf on
# top of BM25: a clause named "Remuneration" is named for "What is the consultant's compensation?"
SHORT_VALUE = 120  # characters; a shorter value is a label, read together with the value after it
LABEL_GAP = 200  # characters between a label and the value it is read with, at most
PREAMBLE = 3000  # characters at the start of a document where its parties are defined
# Words a question names its subject by that plain retrieval drops as common: "Who are the parties?"
_QUESTION_KEEP = frozenset({"party", "parties"})
_QUESTION_STOP = (STOPWORDS - _QUESTION_KEEP) | QUESTION_NOISE | frozenset(
    {"can", "cannot", "who", "what", "which", "does", "do", "is", "any", "contain", "contains", "counterparty",
     "much", "many", "roughly", "approximately", "versus", "vs"})


ELABORATION = 0.5  # weight of the words of a question's elaboration (parentheses, examples, later sentences)
_ELABORATION = re.compile(r"\([^)]*\)|\b(?:such as|e\.g\.|for example|including|includes?)\b[^.?!;]*|(?<=[.?!])\s+\S.*",
                          re.IGNORECASE | re.DOTALL)


# The period a question asks about ("in fiscal 2024", "for the 2024 fiscal year", "at the end of the third
# quarter of 2023", "as of December 31, 2024"): it says when, not where; its words weigh as elaboration
_PERIOD = re.compile(
    rf"\b(?:(?:in|for|during|at|as of|by|through|over|of)\s+)?(?:the\s+)?(?:end\s+of\s+)?(?:the\s+)?"
    rf"(?:(?:fiscal\s+)?(?:first|second|third|fourth|1st|2nd|3rd|4th)\s+(?:fiscal\s+)?quarter\s+(?:of\s+)?)?"
    rf"(?:(?:fiscal|calendar)\s+)?(?:year\s+)?(?:{MONTH}\s+(?:\d{{1,2}},?\s+)?)?(?:fy\s?|q[1-4]\s?)?(?:19|20)\d\d\b"
    rf"(?:\s+(?:fiscal\s+|calendar\s+)?(?:year|quarter)\b)?",
    re.IGNORECASE)
# ... and a span of months ("the first nine months of", "the three months ended", "the last twelve months")
_MONTHS_SPAN = re.compile(
    r"\b(?:(?:in|for|during|over)\s+the\s+(?:(?:first|last|past|trailing)\s+)?{n}|(?:the\s+)?(?:first|last|past|"
    r"trailing)\s+{n}|(?:the\s+)?{n}(?=\s+(?:ended|ending)\b))(?:\s+(?:ended|ending))?(?:\s+of\b)?"
    .format(n=r"(?:three|six|nine|twelve|3|6|9|12)[\s-]+months?\b"), re.IGNORECASE)  # not "within six months"


# "Who are the parties that signed this contract?", "Who signed the agreement?", "Name the parties": the
# question asks for the parties themselves, which a contract names in its preamble (its parties' pages);
# what follows ("that signed this contract") only restates what a party is. Not "Which party may terminate?"
_PARTIES_QUESTION = re.compile(
    r"\s*(?:(?:who|what|which)\s+(?:are|were|is|was)\s+(?:the\s+|a\s+)?(?:contracting\s+)?"
    r"(?:parties|party|signatories|signatory)(?=\s*(?:$|[?.,;]|(?:that|who|which|to|of|in|under|named|involved|"
    r"hereto|and)\b))|who\s+(?:signed|signs|executed|entered\s+into)\b|"
    r"(?:name|list|identify)\s+the\s+(?:contracting\s+)?(?:parties|signatories)\b)", re.IGNORECASE)
PARTY_STEM = "parti"  # what a party's page is named by besides its name (`_units`)
# "When was the agreement signed?", "When did the parties enter into the contract?": not "signed" of
# a clause saying amendments must be signed, but the preamble's date
_SIGNED_QUESTION = re.compile(
    r"\s*(?:when|on\s+what\s+date)\s+(?:(?:was|were)\s+(?:the\s+|this\s+)?(?:agreement|contract|lease)\s+"
    r"(?:signed|made|executed|entered\s+into|dated|concluded)|did\s+the\s+parties\s+(?:sign|enter\s+into|execute|"
    r"make|conclude))\b", re.IGNORECASE)


def asks_for_parties(question: str) -> bool:
    """Whether the question asks who the parties are (not what a party may do), or when they made the
    agreement ("When was the agreement signed?"): the preamble that names them dates it."""
    return bool(_PARTIES_QUESTION.match(question) or _SIGNED_QUESTION.match(question))


# "On what date will the contract's initial term expire?", "When does the agreement expire?", "How long is
# the term?": the question asks for the agreement's term, which its clause or defined term "Term" states
# ("will continue for a period of three (3) years"), whatever verb the question uses. Not "When may a
# party terminate?" (a right to end it) nor "What happens when the agreement expires?"
_AGREEMENT = r"(?:the\s+|this\s+)?(?:agreement|contract|lease)"
_TERM_QUESTION = re.compile(
    rf"\s*(?:(?:when|on\s+what\s+date|what\s+date|by\s+when)\s+(?:does|will|did|is)\s+(?:{_AGREEMENT}(?:['’]s\s+"
    rf"(?:initial\s+)?term)?|the\s+(?:initial\s+)?term(?:\s+of\s+{_AGREEMENT})?)\s+(?:expire|end|lapse|run\s+out|"
    rf"(?:be\s+)?due\s+to\s+expire)\b|how\s+long\s+(?:is|will\s+be)\s+the\s+(?:initial\s+)?(?:term|duration)(?:\s+of\s+{_AGREEMENT})?\s*\??\s*$|"
    rf"what\s+is\s+the\s+(?:initial\s+)?(?:term|duration)\s+of\s+{_AGREEMENT}\s*\??\s*$|"
    rf"how\s+long\s+(?:does|will)\s+{_AGREEMENT}\s+(?:last|run|continue|remain\s+in\s+(?:effect|force))\b)",
    re.IGNORECASE)
TERM_STEM = "term"  # the clause or defined term that states how long the agreement runs
# a clause or defined term named for the agreement's term: "Term", "2. TERM", "9.1 Term", "Initial Term", "Term
# of Agreement", "Term and Termination", "Duration"; not "Economic Terms" nor a lease's "Basic Term Lease Rate"
_TERM_NAME = re.compile(
    r"(?:(?:article|section|clause)\s+)?[\dIVX]*(?:\.\d+)*[.)]?\s*(?:the\s+)?(?:initial\s+)?(?:term|duration)"
    r"(?:\s+of\s+(?:the\s+|this\s+)?(?:agreement|contract))?(?:\s*(?:;|,|and|&)\s*(?:termination|renewal))?\.?",
    re.IGNORECASE)
PARTIES = "parties"  # the category of the parties' pages
ATTACHMENTS = "exhibits-and-annexes"  # the category `compile.fast` files exhibits, annexes and schedules under


def asks_for_term(question: str) -> bool:
    """Whether the question asks how long the agreement runs or when it expires (not who may end it)."""
    return bool(_TERM_QUESTION.match(question))


class Subject(NamedTuple):
    """What a question asks for by its shape, and where that is: the word searched, and the passages read."""

    words: list[str]
    reads: Callable[[Unit], bool]


def question_subject(question: str) -> Subject | None:
    """The subject a question asks for whatever its other words, or None: who the parties are and when
    they signed, read on the parties' pages (the preamble) by their role; how long the agreement runs,
    read on the clause or defined term named for its term."""
    if asks_for_parties(question):  # "Who are the parties that signed this contract?"
        return Subject([PARTY_STEM], is_party_page)
    if asks_for_term(question):  # "On what date will the contract's initial term expire?"
        return Subject([TERM_STEM], names_term)
    return None


def is_party_page(unit: Unit) -> bool:
    return unit.category == PARTIES


def names_term(unit: Unit) -> bool:
    """A clause or defined term named "Term" ("2. TERM", "Term and Termination"), not "Economic Terms"."""
    return unit.category != ATTACHMENTS and bool(_TERM_NAME.fullmatch(unit.title.strip()))


def question_core(question: str) -> str:
    """The question without its elaboration and the period it asks about (`question_focus`)."""
    return _MONTHS_SPAN.sub(" ", _PERIOD.sub(" ", _ELABORATION.sub(" ", question)))


def question_focus(question: str) -> dict[str, float]:
    """How much each question stem says where the answer is: 1 for the question's core, ELABORATION for
    words that only appear in its elaboration: parentheses, examples ("such as", "including"), sentences
    after the first ("Can a party terminate without cause (solely by giving notice...)?") and the period
    asked about ("How much cash did operations generate in fiscal 2024?": "fiscal" names no section)."""
    core = set(question_stems(question_core(question)))
    focus = {s: 1.0 if s in core or not core else ELABORATION for s in question_stems(question)}
    # an abbreviation's spelled-out words weigh together as one word ("IP": "intellectual", "property")
    plain = set(search_terms(question, _QUESTION_STOP))
    for words in abbreviated(question):
        added = [s for s in dict.fromkeys(search_terms(words, _QUESTION_STOP)) if s not in plain and s in focus]
        for s in added:
            focus[s] /= len(added)
    return focus


def routing_stems(question: str) -> list[str]:
    """The question's content words stemmed as the compile stems them (`lexical.terms`): what the
    catalogue's routing terms are matched with."""
    return list(dict.fromkeys(s for s in terms(question, _QUESTION_STOP) if not s.isdigit()))


def question_stems(question: str) -> list[str]:
    """The question's content stems (`lexical.search_terms`), each once, in order."""
    out: list[str] = []
    for s in search_terms(spelled_out(question), _QUESTION_STOP):
        if not s.isdigit() and s not in out:
            out.append(s)
    return out


@dataclass
class Unit:
    """One passage of a subject page: what the search ranks and an answer cites."""

    page: str
    title: str
    category: str  # top category slug: clauses, parties, defined-terms, exhibits-and-annexes, ...
    start: int
    end: int
    head: tuple[int, int] | None  # the clause's heading span, where the answer starts
    first: bool  # the first passage of its clause
    tf: Counter
    length: int
    own: frozenset[str]  # stems of the clause's name: title, heading, aliases



@dataclass
class ClauseIndex:
    """The searchable passages of one document's subject pages at a revision."""

    doc: str
    title: str
    text: str  # source.txt
    units: list[Unit] = field(default_factory=list)
    df: Counter = field(default_factory=Counter)
    names: set[str] = field(default_factory=set)  # stems of the title, file name and party roles (routing)
    proper: set[str] = field(default_factory=set)  # stems of the parties' legal names (`naming`), met capitalised
    roles: set[frozenset[str]] = field(default_factory=set)  # the names the preamble defines for the parties

    def finish(self) -> None:
        self._page_words: dict[str, set[str]] = {}
        for u in self.units:
            self.df.update(set(u.tf) | u.own)
            if u.category != "source":
                self._page_words.setdefault(u.page, set()).update(u.tf)
        self.avgdl = sum(u.length for u in self.units) / len(self.units) if self.units else 0.0
        self.vocab = sorted(self.df)

    def clause_words(self, unit: Unit) -> set[str]:
        """The words of the clause a passage belongs to: its name and all its page's passages (a
        source passage: its own words)."""
        if unit.category == "source":
            return set(unit.tf)
        return self._page_words.get(unit.page, set(unit.tf)) | unit.own

    def holds(self, group: Group, words: set[str]) -> bool:
        """Whether `words` hold a question word: one of its own forms or, for "party", a name the preamble
        defines for a party ("Distributor", "Licensee"): a contract's clauses name its parties so."""
        return bool(group.own & words) or (PARTY_STEM in group.own and any(r <= words for r in self.roles))

    @property
    def n(self) -> int:
        return len(self.units)

    def idf(self, term: str) -> float:
        df = self.df.get(term, 0)
        return math.log(1 + (self.n - df + 0.5) / (df + 0.5))

    def expand(self, q: list[str]) -> list[Group]:
        """A group of the document's words per question stem: the stem itself (the Snowball stemmer has
        joined most of the word's forms, `thesaurus.WORD_FORMS` the rest; matching stems by shared
        prefixes as well found more absent clauses on CUAD without finding more present ones) and its
        equivalents the document uses (`thesaurus.synonyms`). A question word that is an equivalent of an earlier one joins its group: "termination
        or expiration" is one meaning, weighed once."""
        table, forms = synonyms(), word_forms()
        groups: list[Group] = []
        for s in q:
            if any(s in g for g in groups):
                continue
            own = {s} | {t for t in forms.get(s, ()) if t in self.df}
            groups.append(Group(own | {t for o in own for t in table.get(o, ()) if t in self.df}, own))
        return groups

    def weight(self, group: set[str]) -> float:
        """A question word's information: the idf of its commonest word the document uses (its forms and
        equivalents included), else the rarest idf (a word the document never uses)."""
        used = [self.idf(t) for t in group if t in self.df]
        return min(used) if used else self.idf("")

    def ideal(self, weights: list[float]) -> float:
        """The score of an ideal short passage holding each question word once (no name bonus)."""
        return sum(weights) * (K1 + 1) / (1 + K1 * (1 - B)) or 1.0

    def score(self, groups: list[Group], weights: list[float], u: Unit) -> float:
        norm = K1 * (1 - B + B * u.length / self.avgdl) if self.avgdl else K1
        total = 0.0
        for group, w in zip(groups, weights):
            f = sum(u.tf.get(t, 0) * (1.0 if t in group.own else SYNONYM_WEIGHT) for t in group)
            if f:
                total += w * f * (K1 + 1) / (f + norm)
            if group & u.own:
                total += NAME_WEIGHT * w
        return total


class Group(frozenset):
    """The document's words that match one question word: its own forms (`own`) and its equivalents
    (`thesaurus`). An equivalent ranks a passage at SYNONYM_WEIGHT (`ClauseIndex.score`) but does not
    count as the question's own word in `coverage`."""

    own: frozenset[str]

    def __new__(cls, words, own):
        self = super().__new__(cls, words)
        self.own = frozenset(own)
        return self


def coverage(groups: list[Group], weights: list[float], words: set[str]) -> float:
    """Share of the question's idf mass whose own words are in `words`: equivalents are not counted, so
    "not found" stays as strict as the question's wording (counting them found more absent clauses on
    CUAD, and no more present ones)."""
    total = sum(weights)
    held = sum(w for g, w in zip(groups, weights) if g.own & words)
    return held / total if total else 0.0


_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def clause_index(snapshot: Snapshot, doc: str) -> ClauseIndex:
    """The ClauseIndex of `doc` at `snapshot`: built once per snapshot, and kept beside the repository
    (`Snapshot.derived_path`) so that later asks at the same content load it instead of reading every
    page again (~100 ms on a 10-K's 220 pages)."""
    per = _CACHE.setdefault(snapshot, {})
    if doc not in per:
        per[doc] = _stored(snapshot, doc)
    return per[doc]


@cache
def _code_version() -> str:
    """A digest of the code that builds a ClauseIndex: a kept index built by other code is not used."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for rel in ("query/clause_search.py", "query/naming.py", "lexical.py", "sources/passages.py", "index/page.py",
                "index/fastyaml.py", "text.py"):
        digest.update((root / rel).read_bytes())
    return digest.hexdigest()[:16]


def _stored(snapshot: Snapshot, doc: str) -> ClauseIndex:
    """The ClauseIndex kept for this content and code (`Snapshot.derived`), else built and kept."""
    return snapshot.derived(doc, f"clause-index-{_code_version()}.pickle", lambda: _build(snapshot, doc),
                            lambda kept: isinstance(kept, ClauseIndex) and kept.doc == doc)


def _build(snapshot: Snapshot, doc: str) -> ClauseIndex:
    snapshot.prefetch_pages(doc)  # every page is read below: one batch
    root = snapshot.page(f"{doc}/{INDEX_FILE}")
    index = ClauseIndex(doc, root.title, snapshot.read_text(f"{doc}/{SOURCE_FILE}"))
    index.names = set(search_terms(doc.replace("-", " ") + " " + root.title))
    seen: set[str] = set()

    def walk(path: str, category: str) -> None:
        if path in seen or not snapshot.exists(path):
            return
        seen.add(path)
        page = snapshot.page(path)
        if page.kind == "subject":
            index.units += _units(page, category)
            if category == "parties":
                index.names |= set(search_terms(page.title))
            if category in ("parties", "defined-terms"):  # a party defined without "Inc." is filed as a term
                names = [n for t in _preamble_definitions(page) for n in legal_names(t, page.title)]
                index.proper |= name_stems(names, index.text)
                if category == "parties" and names:  # "Distributor" defined for "European Micro Plc"
                    index.roles.add(frozenset(search_terms(page.title)))
            return
        for child in page.links():
            target = page.resolve(child["link"])
            walk(target, category or target[len(doc) + 1:].split("/", 1)[0])

    walk(f"{doc}/{INDEX_FILE}", "")
    index.units = _distinct(index.units, index.text, doc)
    index.finish()
    return index


def _preamble_definitions(page: Page) -> list[str]:
    """The texts defining the page's term within the document's first PREAMBLE characters, where a
    contract names its parties."""
    return [str(v.get("text", "")) for f in page.meta.get("fields") or [] if f.get("name") == "defined in"
            for v in f.get("values") or [] if isinstance(v, dict) and v.get("spans") and v["spans"][0][0] < PREAMBLE]


def _distinct(units: list[Unit], text: str, doc: str) -> list[Unit]:
    """The pages' passages, plus the source's own passages where no page holds the text."""
    kept = list(units)
    covered = [(u.start, u.end) for u in units] + [u.head for u in units if u.head]  # headings are held too
    covered.sort()
    gaps, at = [], 0
    for s, e in covered + [(len(text), len(text))]:
        if s > at:
            gaps.append((at, s))
        at = max(at, e)
    starts = sorted((u.start, u.end) for u in units)
    for lo, hi in gaps:
        for s, e in split_passages(text, lo, hi):
            t = search_terms(text[s:e])
            if t:
                kept.append(Unit(f"{doc}/{SOURCE_FILE}", "", "source", s, _with_next(s, e, starts), None, False,
                                 Counter(t), len(t), frozenset()))
    return sorted(kept, key=lambda u: (u.start, u.page))


def _with_next(start: int, end: int, spans: list[tuple[int, int]]) -> int:
    """Where a source passage read and cited ends: a short one (a heading no page holds, such as an
    article's "8 Intellectual Property Rights; Ownership") runs on through the passage after it, so
    the answer shows the clause under the heading, not the heading alone. Its words stay its own."""
    if end - start >= SHORT_VALUE:
        return end
    i = bisect.bisect_left(spans, (end, -1))
    if i < len(spans) and spans[i][0] - end <= LABEL_GAP:
        return max(end, spans[i][1])
    return end


def _units(page: Page, category: str) -> list[Unit]:
    meta = page.meta
    own_text = " ".join([page.title, " ".join(str(a) for a in meta.get("aliases") or [])])
    if category == "parties":
        own_text += " party"  # a party's page is named by its role too: "Who are the parties?"
    head = None
    values: list[tuple[int, int, str, str]] = []
    for fld in meta.get("fields") or []:
        if fld.get("name") == "used in" and category in ("parties", "defined-terms"):
            continue  # a term quoted where it is used: those passages are the clauses' own
        for value in fld.get("values") or []:
            if not isinstance(value, dict) or not value.get("spans") or value.get("unverified"):
                continue
            start, end = int(value["spans"][0][0]), int(value["spans"][-1][1])
            text = str(value.get("text", ""))
            if fld.get("name") == "heading":
                head = (start, end)
                own_text += " " + text
                continue
            values.append((start, end, text, str(fld.get("name", ""))))
    own = frozenset(search_terms(own_text, STOPWORDS - _QUESTION_KEEP))
    out: list[Unit] = []
    i = 0
    while i < len(values):
        start, end, text, name = values[i]
        nxt = values[i + 1] if i + 1 < len(values) else None
        # a label line is read with the value right after it in the same field (never with a value
        # elsewhere in the document: the passage would span all the text between them)
        if len(text) < SHORT_VALUE and nxt and nxt[3] == name and 0 <= nxt[0] - end <= LABEL_GAP:
            i += 1
            end = max(end, nxt[1])
            text += " " + nxt[2]
        t = search_terms(text)
        out.append(Unit(page.path, page.title, category, start, end, head, not out, Counter(t), len(t), own))
        i += 1
    return out


__all__ = ["ClauseIndex", "Group", "Unit", "clause_index", "coverage", "question_core", "question_focus", "question_stems",
           "routing_stems"]
