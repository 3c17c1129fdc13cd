"""Evidence the model may cite, and the checks that turn a cited id into a true Citation.

The model never gives offsets: it names an evidence id (a field value of a page it read, or a
window of source.txt) and copies a quote. The span comes from the index (or the BM25 window), the
quote narrows it, and both are checked against source.txt at the revision being asked. A citation
that fails a check is dropped and reported, never repaired by guessing.
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass, field

from hti_git.index.linemap import LineMap
from hti_git.index.page import Page
from hti_git.lexical import terms
from hti_git.query.types import Citation
from hti_git.sentences import sentence_spans

# One-for-one character folds, so offsets in the folded text are offsets in the original.
_FOLD = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-", "\u00a0": " "})
QUOTE_TERM_SHARE = 0.8  # a quote that is not verbatim must still have this share of its words in the span
SUMMARY_TERM_SHARE = 0.6  # a summary's paraphrase resolves to a sentence holding this share of its words
COVER_TERM_SHARE = 0.75  # ... or to at most COVER_SENTENCES of its values' sentences holding this share together
COVER_SENTENCES = 3
COVER_WINDOW_CHARS = 800  # outside a summary's spans, the covering sentences lie this close to the best one
COVER_ANCHORS = 3  # sentences holding the most of the quote's words, each tried as the window's centre


@dataclass
class Evidence:
    """A citable item: a field value of a page (spans from the index) or a window of source.txt."""

    id: str
    doc: str
    page: str
    label: str  # field name, or "source.txt"
    text: str
    spans: list[tuple[int, int]] = field(default_factory=list)
    pages: list[int] = field(default_factory=list)
    unverified: bool = False
    anywhere: bool = False  # a listing's summary: a quote from it is looked for in the whole source
    summary: bool = False  # a page's summary (not a value): its quote resolves to the sentence that states it
    table: str = ""  # a table row's units and column headings as its table states them (`text.table_note`)


SUMMARY_LABEL = "summary"
MIN_ANYWHERE_QUOTE_CHARS = 12  # a summary's quote located anywhere in the source must be this specific


def summary_spans(page: Page) -> tuple[list[tuple[int, int]], list[int]]:
    """The spans and pages of a page's values: what its summary (or a link's description of it) restates."""
    values = [v for fld in page.meta.get("fields") or [] for v in fld.get("values") or [] if isinstance(v, dict)]
    spans = sorted({(int(s), int(e)) for v in values for s, e in (v.get("spans") or [])})
    return spans, sorted({int(n) for v in values for n in (v.get("pages") or [])})


def table_suffix(item: Evidence) -> str:
    """What follows an item's text when it is a table's row: its table's units and column headings."""
    return f" (table: {item.table})" if item.table else ""


class EvidenceBook:
    """Numbers evidence items as pages are read, so ids stay stable for one question."""

    def __init__(self, prefix: str = "E"):
        self.prefix = prefix
        self.items: dict[str, Evidence] = {}
        self._by_page: dict[str, list[Evidence]] = {}

    def add_page(self, page: Page) -> list[Evidence]:
        """Register what a page read during navigation offers as evidence (once) and return it: its
        summary (a subject's summary restates its values, so it carries their spans; a listing's
        summary is citable by a quote found in the source), then each field value, shown as the
        model's reading with its whole evidence sentence. A sentence that backs several fields of
        the page is one item, labelled with all of them."""
        if page.path in self._by_page:
            return self._by_page[page.path]
        found: list[Evidence] = []
        doc = page.path.split("/", 1)[0]
        values = [(str(fld.get("name", "")), value) for fld in page.meta.get("fields") or []
                  for value in fld.get("values") or [] if isinstance(value, dict)]
        if page.summary:
            found.append(self.add(doc, page.path, SUMMARY_LABEL, page.summary, *summary_spans(page),
                                  anywhere=page.kind != "subject", summary=True))
        by_text: dict[str, Evidence] = {}
        for name, value in values:
            text = str(value.get("text", ""))
            reading = str(value.get("value") or "")
            shown = f"{reading} | {text}" if reading else text
            spans = [(int(s), int(e)) for s, e in (value.get("spans") or [])]
            key = " ".join(text.split()) + repr(spans)
            if key in by_text and reading == "":
                by_text[key].label += f" / {name}"
                continue
            item = self.add(doc, page.path, name, shown, spans, list(value.get("pages") or []),
                            bool(value.get("unverified")))
            by_text.setdefault(key, item)
            found.append(item)
        self._by_page[page.path] = found
        return found

    def add(self, doc: str, page: str, label: str, text: str, spans: list[tuple[int, int]],
            pages: list[int] | None = None, unverified: bool = False, anywhere: bool = False,
            summary: bool = False) -> Evidence:
        item = Evidence(f"{self.prefix}{len(self.items) + 1}", doc, page, label, text, spans, pages or [], unverified,
                        anywhere, summary)
        self.items[item.id] = item
        return item

    def for_page(self, path: str) -> list[Evidence]:
        return self._by_page.get(path, [])


def find_quote(source: str, start: int, end: int, quote: str) -> tuple[int, int] | None:
    """Offsets of `quote` inside source[start:end], ignoring case, spacing and curly quotes."""
    words = quote.translate(_FOLD).split()
    if not words:
        return None
    pattern = r"\s+".join(re.escape(w) for w in words)
    m = re.search(pattern, source[start:end].translate(_FOLD), flags=re.IGNORECASE)
    return (start + m.start(), start + m.end()) if m else None


MIN_SUMMARY_TERMS = 4


def best_sentence(source: str, lo: int, hi: int, quote: str) -> tuple[int, int] | None:
    """The span of the sentence (or line) in source[lo:hi] that holds the most of the quote's
    content words, if it holds at least SUMMARY_TERM_SHARE of them, else None."""
    wanted = set(terms(quote))
    if len(wanted) < MIN_SUMMARY_TERMS:
        return None
    best, best_span = 0, None
    for s, e in sentence_spans(source, lo, hi):
        have = len(wanted & set(terms(source[s:e])))
        if have > best:
            best, best_span = have, (s, e)
    if best_span is None or best / len(wanted) < SUMMARY_TERM_SHARE:
        return None
    return best_span


def covering_sentences(source: str, spans: list[tuple[int, int]], quote: str) -> list[tuple[int, int]] | None:
    """The fewest sentences of `spans` (at most COVER_SENTENCES, each adding at least two of the
    quote's content words) that hold COVER_TERM_SHARE of those words together, in document order;
    None when no such set exists. A subject's summary joins facts its values anchor in different
    sentences ("a Delaware corporation ...; signed by its VP/Sales on November 3, 1997")."""
    wanted = set(terms(quote))
    if len(wanted) < MIN_SUMMARY_TERMS:
        return None
    sentences = {sp: wanted & set(terms(source[sp[0]:sp[1]])) for s, e in spans for sp in sentence_spans(source, s, e)}
    chosen: list[tuple[int, int]] = []
    covered: set[str] = set()
    for _ in range(COVER_SENTENCES):
        best = max(sentences, key=lambda sp: (len(sentences[sp] - covered), -sp[0]), default=None)
        if best is None or len(sentences[best] - covered) < 2:
            return None
        chosen.append(best)
        covered |= sentences.pop(best)
        if len(covered) / len(wanted) >= COVER_TERM_SHARE:
            return sorted(chosen)
    return None


def cite(item: Evidence, quote: str, source: str, lines: LineMap) -> tuple[list[Citation], str]:
    """The citations a quote of `item` resolves to, or ([], why): one, except a subject summary's
    quote that joins several of its values' sentences (each of those sentences is cited)."""
    citation, why = check_citation(item, quote, source, lines)
    if citation is not None:
        return [citation], ""
    if not item.summary or item.unverified or any(not (0 <= s < e <= len(source)) for s, e in item.spans):
        return [], why
    # A summary may also state what its values do not anchor (a compile reads whole chunks): then
    # the sentences must sit together, as a signature block or one clause's sentences do.
    cover = covering_sentences(source, item.spans, quote) if item.spans and not item.anywhere else None
    wanted = set(terms(quote))
    if cover is None and len(wanted) >= MIN_SUMMARY_TERMS:
        anchors = heapq.nlargest(COVER_ANCHORS, sentence_spans(source),
                                 key=lambda sp: (len(wanted & set(terms(source[sp[0]:sp[1]]))), -sp[0]))
        for s, e in anchors:
            window = (max(0, s - COVER_WINDOW_CHARS), min(len(source), e + COVER_WINDOW_CHARS))
            cover = covering_sentences(source, [window], quote)
            if cover:
                break
    if not cover:
        return [], why
    return [Citation(item.doc, item.page, s, e, lines.lines(s, e), lines.pages(s, e), source[s:e]) for s, e in cover], ""


def check_citation(item: Evidence, quote: str, source: str, lines: LineMap) -> tuple[Citation | None, str]:
    """(Citation, "") when the item's spans exist in `source` and the quote is in them, else (None, why)."""
    if item.unverified:
        return None, f"{item.id}: the index marks this value unverified (no evidence in the source)"
    if any(not (0 <= s < e <= len(source)) for s, e in item.spans):
        return None, f"{item.id}: span outside source.txt ({len(source)} characters) at this revision"
    if item.summary:
        # A summary restates values: its citation resolves to the source sentence that states what
        # the quote says (verbatim if the quote is the document's words, else the sentence sharing
        # most of its words), within the summary's spans, or anywhere for a listing's summary.
        lo, hi = (0, len(source)) if item.anywhere or not item.spans else \
            (min(s for s, _ in item.spans), max(e for _, e in item.spans))
        words = " ".join(quote.split())
        hit = find_quote(source, lo, hi, words) if len(words) >= MIN_ANYWHERE_QUOTE_CHARS else None
        hit = hit or best_sentence(source, lo, hi, quote)
        if hit is None:
            return None, f"{item.id}: no sentence of the document states what the summary's quote says"
        s, e = hit
        return Citation(item.doc, item.page, s, e, lines.lines(s, e), lines.pages(s, e), source[s:e]), ""
    if not item.spans:
        return None, f"{item.id}: the value has no source span"
    start, end = min(s for s, _ in item.spans), max(e for _, e in item.spans)
    hit = find_quote(source, start, end, quote) if quote.strip() else None
    if hit is None:
        # A paraphrased quote is accepted only when nearly all its words are in the span; the
        # citation then covers the whole value. An empty or foreign quote supports nothing.
        q = set(terms(quote))
        have = set(terms(source[start:end]))
        if not q or len(q & have) / len(q) < QUOTE_TERM_SHARE:
            return None, f"{item.id}: quote not found in the cited source span"
        hit = (start, end)
    s, e = hit
    return Citation(item.doc, item.page, s, e, lines.lines(s, e), lines.pages(s, e), source[s:e]), ""
