"""`fast` answering: search the index's clauses, answer with the clause itself, say when it is not there.

1. Documents: a question that names one document (words of its title, file name or parties' roles that
   the others do not share, or a party's legal name written with a capital: `query.naming`) goes to it;
   otherwise every document is searched.
2. Search: the passages of each document's subject pages (and the source's own passages where no page
   holds the text) are ranked by BM25 plus the question words that name their clause
   (`query.clause_search`); documents and questions are stemmed alike (Snowball), a question word also
   matches its equivalents at half weight (`query.thesaurus`: "buy" / "purchase"), and words only in the
   question's elaboration (parentheses, examples, later sentences) weigh less. The reader reads the
   best `READ` distinct passages only, not whole pages
   (a span that several pages hold, such as a preamble naming the parties, is read once).
3. Answer: the passages read support an answer when the best one scores well against an ideal passage
   and the clause of one holds enough of the question's information (idf mass; a word the document
   never uses counts as the rarest), the two weighed together (`_supported`); and what was read holds
   at least three of the question's words (all, when it has fewer), so a common word or two is not an
   answer. The answer cites the clause holding most of the question, from its heading, and the passages
   scoring close to the best, clause by clause (the best-ranked passage's clause first), each clause in
   document order. When several documents answer about equally well, each answers. A question about a
   name the document never writes ("TSMC") is not searched there (`naming.unmentioned_names`), and a
   how-many or how-much question is answered only by passages that state a number; a cited passage
   that opens a list is shown with the list's items (`query.answer_text`).

`DocContext` and `search_source` (flat BM25 over source.txt passages) serve the chunks baseline and the
model's fallback.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from hti_git.index.layout import SOURCE_FILE
from hti_git.index.linemap import LineMap
from hti_git.index.tree import requested_documents, source_page_starts
from hti_git.lexical import BM25, search_terms, terms
from hti_git.query.answer_text import asks_quantity, shown_passage, states_number, with_list
from hti_git.query.clause_search import (
    ATTACHMENTS,
    ClauseIndex,
    Group,
    Unit,
    clause_index,
    coverage,
    question_core,
    question_focus,
    question_stems,
    question_subject,
    routing_stems,
)
from hti_git.query.naming import naming_stems, unmentioned_names
from hti_git.query.types import Answer, Citation, Step
from hti_git.sources.passages import split_passages
from hti_git.store import Snapshot
from hti_git.text import table_note
from hti_git.tokens import estimate_tokens

FOUND_COVERAGE = 0.28  # share of the question's idf mass the best clause read holds ...
FOUND_STRENGTH = 0.2  # ... and the best passage's score as a share of an ideal one's: see _supported
READ = 6  # distinct passages the reader reads: the best ones by rank (~550 tokens on CUAD)
CLOSE = 0.4  # a runner-up passage scoring this share of the best is cited too
DOC_CLOSE = 0.9  # documents whose coverage is this share of the best one each answer
MAX_SPAN = 2000  # characters from a clause heading to the end of the cited passage
MAX_CITATIONS = 6
SOURCE_PASSAGES = 3  # flat BM25 over source.txt (the baseline, the fallback): passages returned
MIN_MATCHED_TERMS = 2  # distinct question words the passages read must hold (all, when fewer) ...
ANSWER_TERMS = 3  # ... for `fast` to answer with them: on CUAD, 3 instead of 2 cut "found" on absent clauses
# from 32.8% to 24.8% (PDFs 34.3% -> 28.5%) and lost no evidence hit on the three contracts held out from tuning
FOUND_RATIO = 0.2  # best passage score / ideal score (the chunks baseline's offline answer rule)
ROUTE_CATALOG_DOCS = 12  # in a larger corpus, documents searched: the best by the catalogue's routing terms
SHORT_PASSAGE = 120  # characters; shorter passages are labels, cited together with what follows
NEVER_MENTIONS = "never mentions"  # a document skipped: the question names what it never writes


@dataclass
class _Candidate:
    score: float
    doc: str
    page: str
    start: int
    end: int
    text: str


class DocContext:
    """Per-document statistics read once from source.txt at the revision."""

    def __init__(self, snapshot: Snapshot, doc: str):
        self.snapshot = snapshot
        self.doc = doc
        self.text = snapshot.read_text(f"{doc}/{SOURCE_FILE}")
        self.passages = _merge_short(split_passages(self.text, 0, len(self.text)))
        self.model = BM25([terms(self.text[s:e]) for s, e in self.passages])
        self._lines: LineMap | None = None

    @property
    def lines(self) -> LineMap:
        if self._lines is None:
            self._lines = LineMap(self.text, source_page_starts(self.snapshot, self.doc))
        return self._lines


def ask_fast(
    snapshot: Snapshot,
    question: str,
    docs: list[str] | None = None,
    max_pages: int = 12,
    max_level_ups: int = 2,
    use_fallback: bool = True,
) -> Answer:
    """Answer `question` from the index at `snapshot` without a model.

    `max_pages` bounds the passages read; `max_level_ups` is unused (the search opens clauses directly,
    there is no going back up); without `use_fallback`, passages of source.txt that no page holds are
    not read.
    """
    del max_level_ups
    answer = Answer(question=question, answer="", found=False, rev=snapshot.rev, commit=snapshot.sha)
    if not question_stems(question):
        requested_documents(snapshot, docs)  # an unknown --doc is still an error
        answer.answer = "not found: the question has no searchable words"
        return answer
    hits = _hits(snapshot, question, docs, max(1, min(READ, max_pages)), use_fallback, answer.trace, ANSWER_TERMS)
    if not hits:
        skipped = [s.note for s in answer.trace if s.action == "skip" and s.note.startswith(NEVER_MENTIONS)]
        answer.answer = "not found"
        if skipped and not any(s.action == "read" for s in answer.trace):  # no document was searched
            names = skipped[0].removeprefix(NEVER_MENTIONS).strip()
            answer.answer += f": the document never mentions {names}" if len(skipped) == 1 else \
                f": no document mentions {names}"
        answer.trace.append(Step("", "stop", 0.0, "no clause holds the question's own words"))
        return answer
    if asks_quantity(question):  # "How many stores?": a passage that states no number does not say
        hits = [_Hit(h.doc, h.coverage, units) for h in hits
                if (units := _stating_numbers(snapshot.read_text(f"{h.doc}/{SOURCE_FILE}"), h.units))]
        if not hits:
            answer.answer = "not found: no passage read states a number"
            answer.trace.append(Step("", "stop", 0.0, "no passage read states a number"))
            return answer
    best = max(h.coverage for h in hits)
    hits = sorted((h for h in hits if h.coverage >= best * DOC_CLOSE), key=lambda h: (-h.coverage, h.doc))
    answer.found = True
    answer.fallback = all(u.category == "source" for h in hits for u in h.units)
    texts = []
    for h in hits:
        text = snapshot.read_text(f"{h.doc}/{SOURCE_FILE}")
        lines = LineMap(text, source_page_starts(snapshot, h.doc))
        parts = []
        for u, start, end in _joined(h.units, text):
            answer.citations.append(Citation(h.doc, u.page, start, end, lines.lines(start, end),
                                             lines.pages(start, end), text[start:end]))
            shown = shown_passage(text[start:end])
            # a table's row with its table's units and columns ("41,354" is thousands of shares, bought in
            # the month to June 29, 2024), unless shown already
            note = table_note(text, start, end, shown="\n".join(parts + [shown]))
            parts.append(f"{shown}\n(table: {note})" if note else shown)
        body = "\n\n".join(parts)
        texts.append(f"[{h.doc}] {body}" if len(hits) > 1 else body)
    answer.answer = "\n\n".join(texts)
    answer.trace.append(Step(answer.citations[0].page, "answer", round(best, 3)))
    return answer


def _joined(units: list[Unit], text: str) -> list[tuple[Unit, int, int]]:
    """The cited passages' spans (a list's items included, `with_list`), in order, each joined with the
    overlapping ones after it: a statement's rows that two passages read are shown and cited once."""
    spans: list[tuple[Unit, int, int]] = []
    for u in units:
        start, end = _span(u)
        end = with_list(text, start, end, MAX_SPAN)
        at = next((i for i, (_, s, e) in enumerate(spans) if start < e and s < end), None)
        if at is None:
            spans.append((u, start, end))
        else:
            first, s, e = spans[at]
            spans[at] = (first, min(s, start), max(e, end))
    return spans


def _stating_numbers(text: str, units: list[Unit]) -> list[Unit]:
    return [u for u in units if states_number(text[slice(*_span(u))])]


def holds_clause_words(snapshot: Snapshot, question: str, docs: list[str] | None = None) -> bool:
    """Whether some clause of `docs` holds the question's own words, as `ask_fast` decides it but with
    MIN_MATCHED_TERMS, not ANSWER_TERMS (passages of source.txt included); only the search runs. The
    model's source fallback asks it: a clause that `fast` would not answer with may still be the one."""
    return bool(question_stems(question)) and bool(_hits(snapshot, question, docs, READ, True, [], MIN_MATCHED_TERMS))


def _hits(snapshot: Snapshot, question: str, docs: list[str] | None, read: int, use_source: bool,
          trace: list[Step], min_terms: int) -> list[_Hit]:
    """The documents' answering clauses (`_search` on each document asked or routed to)."""
    available, candidates = requested_documents(snapshot, docs)
    q = question_stems(question)
    subject = question_subject(question)  # "Who are the parties…?": read where that is said
    focus = question_focus(question)
    naming: dict[str, set[str]] = {}  # per document, the question's words that name it (computed once)
    if candidates is None:
        candidates = _named(snapshot, available, q, trace, question, naming)
    hits = []
    core = question_core(question)
    for d in candidates:
        index = clause_index(snapshot, d)
        named = naming.get(d)
        if named is None:
            named = naming_stems(question, index.proper, d)
        if unmentioned := unmentioned_names(core, index.df, named):
            trace.append(Step(d, "skip", 0.0, f"{NEVER_MENTIONS} {' or '.join(unmentioned)}"))
            continue
        # "Can Merit Life terminate?": those words say which document, not which clause
        words, only = q, None
        if subject is not None and any(subject.reads(u) for u in index.units):  # else the question's own words
            words, only = subject
        h = _search(index, [s for s in words if s not in named] or words, read, use_source, trace, focus, min_terms,
                    only)
        if h is not None:
            hits.append(h)
    return hits


@dataclass
class _Hit:
    doc: str
    coverage: float
    units: list[Unit]


def _search(index: ClauseIndex, q: list[str], read: int, use_source: bool, trace: list[Step],
            focus: dict[str, float], min_terms: int, only: Callable[[Unit], bool] | None = None) -> _Hit | None:
    """Read the `read` best distinct passages; answer when they hold enough of the question (`_supported`),
    citing the clause holding most of it and the passages that score close to the best, the best-ranked
    passage's clause first (on CUAD its passages are the gold evidence more often than the clause holding
    most of the question: first citation 50 against 39 of 74 present clauses, 51 against 38 from PDFs)."""
    groups, weights = weighted(index, q, focus)
    top = [x for x in _ranked(index, groups, weights, use_source) if only is None or only(x[1])][:read]
    covers = {id(u): coverage(groups, weights, index.clause_words(u)) for _, u in top}
    top = _body_first(top, covers)
    best_cover, best_unit = 0.0, None
    for sc, u in top:
        cover = covers[id(u)]
        trace.append(Step(u.page, "read", round(sc, 3), f"{u.title or 'source passage'} (covers {cover:.2f})",
                          tokens=estimate_tokens(_read_text(index, u))))
        if cover > best_cover:
            best_cover, best_unit = cover, u
    if best_unit is None:
        return None
    strength = top[0][0] / index.ideal(weights)
    if not _supported(strength, best_cover):
        return None
    words = set().union(*(index.clause_words(u) for _, u in top))
    if sum(1 for g in groups if index.holds(g, words)) < min(min_terms, len(groups)):
        return None  # "Is there a liability cap?": clauses on liability, none with a cap, are not the answer
    first = next(sc for sc, u in top if u is best_unit)
    cited = [best_unit]
    for sc, u in top:
        if u is not best_unit and sc >= first * CLOSE and not _repeats(u, cited):
            cited.append(u)
    return _Hit(index.doc, best_cover, _in_reading_order(cited, top)[:MAX_CITATIONS])


def passage_pages(snapshot: Snapshot, doc: str, question: str, k: int) -> list[str]:
    """The subject pages of the `k` passages the clause search ranks first (distinct pages, best first):
    where a clause no listing names may still be found ("(b) Acme will not sell … at a lower price"
    inside "2.01 Equipment Orders")."""
    q = question_stems(question)
    if k <= 0 or not q:
        return []
    index = clause_index(snapshot, doc)
    groups, weights = weighted(index, q, question_focus(question))
    pages: list[str] = []
    for _, u in _ranked(index, groups, weights, False):
        if u.page not in pages:
            pages.append(u.page)
        if len(pages) == k:
            break
    return pages


def _in_reading_order(cited: list[Unit], top: list[tuple[float, Unit]]) -> list[Unit]:
    """The cited passages clause by clause, the clause of the best-ranked passage first (a body clause
    before its namesakes, as `_body_first` read them), each clause's passages in document order: a
    table's introducing sentence, the table, then its discussion."""
    order = {id(u): i for i, (_, u) in enumerate(top)}
    clause: dict[object, int] = {}
    for u in sorted(cited, key=lambda u: order[id(u)]):
        clause.setdefault(_clause_key(u), len(clause))
    return sorted(cited, key=lambda u: (clause[_clause_key(u)], u.start))


def _clause_key(unit: Unit) -> object:
    """What a cited passage is grouped by: its clause's page; a passage of a name's, party's or defined
    term's page (sentences quoted from anywhere in the document) and a source passage stand alone."""
    return unit.page if unit.category not in ("names", "parties", "defined-terms", "source") else id(unit)


def _repeats(unit: Unit, cited: list[Unit]) -> bool:
    """Whether most of the passage is text a passage cited already shows (a defined term's sentence that
    is also an annex's opening): the answer shows it once."""
    start, end = _span(unit)
    shown = sum(max(0, min(end, e) - max(start, s)) for s, e in (_span(c) for c in cited))
    return shown * 2 >= end - start


def weighted(index: ClauseIndex, q: list[str], focus: dict[str, float]) -> tuple[list[Group], list[float]]:
    """The question's word groups and their weights: each word's information (idf) times its focus
    (`clause_search.question_focus`: a word only in the question's elaboration weighs less)."""
    groups = index.expand(q)
    return groups, [index.weight(g) * max(focus.get(s, 1.0) for s in g.own) for g in groups]


def _ranked(index: ClauseIndex, groups: list[Group], weights: list[float],
            use_source: bool) -> list[tuple[float, Unit]]:
    """Passages by score, best first, each span once (a party's page and its clause may share one)."""
    scored = sorted(((index.score(groups, weights, u), i) for i, u in enumerate(index.units)
                     if use_source or u.category != "source"), key=lambda x: (-x[0], x[1]))
    out, seen = [], set()
    for sc, i in scored:
        u = index.units[i]
        if sc <= 0:
            break
        if (u.start, u.end) not in seen:
            seen.add((u.start, u.end))
            out.append((sc, u))
    return out


def _body_first(top: list[tuple[float, Unit]], covers: dict[int, float]) -> list[tuple[float, Unit]]:
    """The passages read, with a clause of the agreement's body before an attachment's clause of the
    same name that covers no more of the question: "Which law governs this agreement?" is answered by
    the agreement's "7.10 Governing Law" before the annexed warrant's "4.7 Governing Law", whichever
    scored higher ("Which law governs the warrant?" keeps the warrant's first)."""
    names = {id(u): _name(u) for _, u in top}
    body: dict[tuple[str, ...], float] = {}
    for _, u in top:
        if u.category not in (ATTACHMENTS, "source"):
            body[names[id(u)]] = max(body.get(names[id(u)], 0.0), covers[id(u)])
    moved = {id(u) for _, u in top if u.category == ATTACHMENTS and covers[id(u)] <= body.get(names[id(u)], -1.0)}
    out: list[tuple[float, Unit]] = []
    for x in top:
        if id(x[1]) in moved:
            continue
        out.append(x)
        if x[1].category not in (ATTACHMENTS, "source"):  # its namesakes from the attachments follow it
            out += [m for m in top if id(m[1]) in moved and names[id(m[1])] == names[id(x[1])] and m not in out]
    return out


def _name(unit: Unit) -> tuple[str, ...]:
    """A clause's name without its number: "4.7 Governing Law" and "7.10 Governing Law" are one name."""
    return tuple(w for w in search_terms(unit.title) if not any(c.isdigit() for c in w))


def _supported(strength: float, cover: float) -> bool:
    """Whether the passages read answer the question: the best passage's score as a share of an ideal
    passage's (`strength`) and the largest share of the question's information one clause read holds
    (`cover`), weighed together so that either may carry the other (on CUAD, either alone separated
    present from absent clauses less well than the two together)."""
    return strength / FOUND_STRENGTH + cover / FOUND_COVERAGE >= 2


def _span(unit: Unit) -> tuple[int, int]:
    """A passage as read and cited: the clause's first passage from its heading, others as they are."""
    head = unit.head
    start = head[0] if unit.first and head and head[0] <= unit.start and unit.end - head[0] <= MAX_SPAN else unit.start
    return start, unit.end


def _read_text(index: ClauseIndex, unit: Unit) -> str:
    """What the reader sees of a passage: its clause's title and the passage from the heading."""
    start, end = _span(unit)
    return f"{unit.title}\n{index.text[start:end]}"


def _named(snapshot: Snapshot, available: list[str], q: list[str], trace: list[Step], question: str,
           naming: dict[str, set[str]]) -> list[str]:
    """The document a question names by title, file-name or party words (a party's role, or its legal
    name written with a capital: `naming`), or the one named by the most words; all of them when none
    is, or when several are named equally. `naming` receives each document's naming words."""
    if len(available) == 1:
        return available
    if len(available) > ROUTE_CATALOG_DOCS:
        available = _by_catalog(snapshot, available, routing_stems(question), trace)
    names = {}
    for d in available:
        index = clause_index(snapshot, d)
        naming[d] = naming_stems(question, index.proper, d)
        names[d] = (set(q) & index.names) | naming[d]
    shared = set.intersection(*names.values())
    most = max(len(names[d] - shared) for d in available)
    named = [d for d in available if most and len(names[d] - shared) == most]  # "Clear Capital" over "...Capital Corp."
    keep = named if len(named) == 1 else available
    for d in available:
        trace.append(Step(d, "route", 0.0, "named in the question" if keep == named and d in named else
                          ("kept" if d in keep else "skipped")))
    return keep


def _by_catalog(snapshot: Snapshot, available: list[str], q: list[str], trace: list[Step]) -> list[str]:
    """The documents of a large corpus worth searching: the best ROUTE_CATALOG_DOCS by BM25 over the
    catalogue's routing terms (one blob, not every document's pages); all of them without a catalogue."""
    entries = snapshot.catalog().entries
    if not entries:
        return available
    model = BM25([list(Counter((entries.get(d) or {}).get("terms") or {}).elements()) for d in available])
    scored = sorted(((model.score(q, i), d) for i, d in enumerate(available)), key=lambda x: (-x[0], x[1]))
    keep = [d for sc, d in scored[:ROUTE_CATALOG_DOCS] if sc > 0] or [d for _, d in scored[:ROUTE_CATALOG_DOCS]]
    trace.append(Step("", "route", 0.0, f"catalogue: {len(keep)} of {len(available):,} documents searched"))
    return keep


def is_supported(ctx: DocContext, q: list[str], ratio: float, text: str) -> bool:
    """The offline answer rule: a score (as a share of the ideal) high enough, and enough question words."""
    return ratio >= FOUND_RATIO and _matched_terms(ctx, q, text) >= MIN_MATCHED_TERMS


def _matched_terms(ctx: DocContext, q: list[str], text: str) -> int:
    """Distinct question words in `text`, capped at how many the document uses at all.

    One rare word is not an answer: on CUAD this rule cut answers to questions about absent
    clauses from 100 to 76 of 137 without losing any evidence hit.
    """
    known = {t for t in q if t in ctx.model.idf}
    found = len(known & set(terms(text)))
    return found if found < len(known) else MIN_MATCHED_TERMS


def _merge_short(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Join each short passage (a heading or label line) to the passage after it."""
    out: list[tuple[int, int]] = []
    pending: int | None = None
    for start, end in spans:
        if pending is not None:
            start, pending = pending, None
        if end - start < SHORT_PASSAGE:
            pending = start
            continue
        out.append((start, end))
    if pending is not None:
        out.append((pending, spans[-1][1]))
    return out


def search_source(ctx: DocContext, q: list[str], k: int = SOURCE_PASSAGES) -> list[_Candidate]:
    """The `k` best BM25 passages of the whole source.txt (the fallback, and the RAG baseline)."""
    scored = sorted(((ctx.model.score(q, i), i) for i in range(len(ctx.passages))), key=lambda x: (-x[0], x[1]))[:k]
    return [
        _Candidate(s, ctx.doc, f"{ctx.doc}/{SOURCE_FILE}", ctx.passages[i][0], ctx.passages[i][1],
                   ctx.text[ctx.passages[i][0]: ctx.passages[i][1]])
        for s, i in scored if s > 0
    ]


