"""The `fast` method: a record built from the document's own structure, no model.

Categories come from what the text shows: numbered clauses and articles (or headings, or scenes),
quoted defined terms and the parties of a contract, recurring names elsewhere. Every field value
is an exact passage of the source with its span; summaries are extractive.
"""

from __future__ import annotations

import re
from collections import Counter

from hti_git.compile import structure
from hti_git.compile.headings import without_html
from hti_git.index.model import Category, FieldValue, Record, Subject
from hti_git.index.plural import counted
from hti_git.index.slug import unique_slug
from hti_git.lexical import BM25, STOPWORDS, keywords, stem
from hti_git.sentences import strip_span
from hti_git.sources.passages import split_passages
from hti_git.sources.types import SourceText

_ORG = re.compile(r"\b(Inc|Corp|Corporation|Company|LLC|L\.L\.C|Ltd|Limited|GmbH|S\.A|N\.V|plc|LP|L\.P|individual|bank|association|trust)\b", re.I)
_WORDS = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_NOT_PARTIES = {"Agreement", "Effective Date", "Party", "Parties", "Term", "Contract", "Closing", "Closing Date"}
MIN_SECTION_BODY = 40  # characters of text beyond the heading for a section to be a subject


def compile_fast(source: SourceText) -> Record:
    """The merged record of `source` built from its own structure."""
    text = source.text
    sections = structure.find_sections(text)
    kind = _document_kind(text, sections)
    vocab = _Vocabulary(text)
    categories: list[Category] = []

    clause_name = {"contract": "Clauses", "screenplay": "Scenes"}.get(kind, "Sections")
    clauses, attachments = _section_categories(text, sections, clause_name, vocab)
    for category in (clauses, attachments):
        if category.subjects or category.children:
            categories.append(category)
    if kind == "contract":
        parties, terms = _term_categories(text, vocab)
        for category in (parties, terms):
            if category.subjects:
                categories.append(category)
    elif kind == "screenplay":
        people = _character_category(text, vocab)
        if people.subjects:
            categories.append(people)
    else:
        names = _names_category(text, vocab)
        if names.subjects:
            categories.append(names)

    title = _document_title(text, sections, source.name)
    overview = _overview(text, kind, title, categories)
    return Record(title=title, overview=overview, categories=categories)


def _document_kind(text: str, sections: list[structure.Section]) -> str:
    if len(structure.scene_headings(text)) >= 3:
        return "screenplay"
    lowered = text[:20000].lower()
    contract_words = sum(w in lowered for w in ("agreement", "hereby", "whereas", "witness whereof", "party", "parties"))
    if contract_words >= 3 and len(structure.defined_terms(text)) >= 2:
        return "contract"
    return "document"


def _words(text: str) -> list[str]:
    return [w for w in _WORDS.findall(text.lower()) if w not in STOPWORDS and len(w) >= 3 and not w.isdigit()]


class _Vocabulary:
    """Term statistics of the whole document, for keywords shown next to each link."""

    def __init__(self, text: str):
        self.surface: dict[str, Counter] = {}  # stem -> the words it stands for, to show the commonest
        passages = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
        self.model = BM25([self._count(p) for p in passages])

    def _count(self, text: str) -> list[str]:
        """The terms of one passage, noting which word each stem came from."""
        out = []
        for word in _words(text):
            s = stem(word)
            self.surface.setdefault(s, Counter())[word] += 1
            out.append(s)
        return out

    @staticmethod
    def terms(text: str) -> list[str]:
        return [stem(w) for w in _words(text)]

    def keywords(self, text: str, k: int = 6) -> list[str]:
        ranked = keywords(self.terms(text), self.model, k)
        return [self.surface[s].most_common(1)[0][0] if s in self.surface else s for s in ranked]


def _section_categories(text: str, sections: list[structure.Section], name: str,
                        vocab: _Vocabulary) -> tuple[Category, Category]:
    """The document's body as nested categories (article > clause > sub-clause), and its attachments.

    Exhibits, annexes and schedules are their own branch, so the body of the document itself is not
    mixed with the forms and agreements attached to it.
    """
    body = Category(name=name, slug=name.lower())
    attachments = Category(name="Exhibits and annexes", slug="exhibits-and-annexes")
    taken: set[str] = {body.slug, attachments.slug}
    groups: dict[int, Category] = {}
    has_children = {p for section in sections for p in section.parent_starts}
    for section in sections:
        holder = attachments if section.annex else body
        for title, start in zip(section.parents, section.parent_starts):
            holder = _group(holder, groups, start, title, taken)
        if section.start in has_children:
            holder = _group(holder, groups, section.start, section.title, taken)  # its own opening text
        if section.end - section.body < MIN_SECTION_BODY and section.title != "Preamble":
            continue  # a bare heading such as "ARTICLE 4 TERMINATION": its subsections carry the text
        holder.subjects.append(_section_subject(text, section, section.body, taken, vocab))
    # Summaries of section listings are left to the layout, which knows the final document order.
    return body, attachments


def _group(parent: Category, groups: dict[int, Category], start: int, title: str, taken: set[str]) -> Category:
    group = groups.get(start)
    if group is None:
        group = groups[start] = Category(name=title, slug=unique_slug(title, taken))
        parent.children.append(group)
    return group


def _section_subject(text: str, section: structure.Section, body_start: int, taken: set[str], vocab: _Vocabulary) -> Subject:
    subject = Subject(name=section.title, slug=unique_slug(section.title, taken))
    if section.number:
        word = section.title.split()[0].title()
        subject.aliases.append(f"{word if word in ('Article', 'Part', 'Chapter') else 'Section'} {section.number}")
    head_end = body_start
    while head_end > section.start and text[head_end - 1] in ".: \t\n":
        head_end -= 1
    if section.title != "Preamble" and head_end > section.start:
        subject.fields["heading"] = [FieldValue(text[section.start:head_end], [(section.start, head_end)])]
    passages = split_passages(text, body_start, section.end)
    subject.fields["text"] = [FieldValue(text[s:e], [(s, e)]) for s, e in passages]
    body = text[body_start: section.end]
    subject.summary = structure.first_sentence(body) if body.strip() else section.title
    subject.keywords = vocab.keywords(body)
    return subject


def _term_categories(text: str, vocab: _Vocabulary) -> tuple[Category, Category]:
    parties = Category(name="Parties", slug="parties")
    terms = Category(name="Defined terms", slug="defined-terms")
    taken = {"parties", "defined-terms"}
    preamble_end = min(len(text), 3000)
    for term, offsets in sorted(structure.defined_terms(text).items(), key=lambda kv: kv[1][0]):
        at = offsets[0]
        start, end = _sentence_around(text, at)
        context = text[max(0, at - 150): at]
        is_party = at < preamble_end and term not in _NOT_PARTIES and bool(_ORG.search(context))
        subject = Subject(name=term, slug=unique_slug(term, taken))
        subject.fields["defined in"] = [FieldValue(text[start:end], [(start, end)])]
        uses = []  # where the term is used after its definition: evidence with spans, at most three
        for m in re.finditer(re.escape(term), text):
            if m.start() >= end and len(uses) < 3:
                u_start, u_end = _sentence_around(text, m.start(), 300)
                if not uses or uses[-1].spans[0] != (u_start, u_end):
                    uses.append(FieldValue(text[u_start:u_end], [(u_start, u_end)]))
        if uses:
            subject.fields["used in"] = uses
        subject.summary = structure.first_sentence(text[start:end], 200)
        subject.keywords = vocab.keywords(text[start:end], 4)
        (parties if is_party else terms).subjects.append(subject)
    parties.summary = _list_summary(parties.subjects, "Parties")
    terms.summary = _list_summary(terms.subjects, "Terms")
    return parties, terms


def _sentence_around(text: str, at: int, max_chars: int = 600) -> tuple[int, int]:
    """The sentence (or bounded window) containing offset `at`."""
    lo = max(0, at - max_chars)
    start = lo
    for m in re.finditer(r"(?<=[.;!?])\s+|\n\s*\n", text[lo:at]):
        start = lo + m.end()
    if start == lo > 0:  # no sentence end before: start at a line (a table's row) or a word, never mid-word
        line, word = text.find("\n", lo, at), text.find(" ", lo, at)
        start = line + 1 if line >= 0 else word + 1 if word >= 0 else lo
    hi = min(len(text), at + max_chars)
    m = re.search(r"(?<=[.;!?])\s|\n\s*\n", text[at:hi])
    end = at + m.start() if m else hi
    if not m and hi < len(text):  # ... and end at a line end or a word end
        line, word = text.rfind("\n", at, hi), text.rfind(" ", at, hi)
        end = line if line > at else word if word > at else hi
    return strip_span(text, start, end)


def _character_category(text: str, vocab: _Vocabulary) -> Category:
    category = Category(name="Characters", slug="characters")
    taken = {"characters"}
    for name, count in structure.character_cues(text).most_common(60):
        if count < 2:
            continue
        subject = _name_subject(text, name, count, taken, vocab)
        category.subjects.append(subject)
    category.subjects.sort(key=lambda s: s.name)
    category.summary = _list_summary(category.subjects, "Characters")
    return category


def _names_category(text: str, vocab: _Vocabulary) -> Category:
    category = Category(name="Names", slug="names")
    taken = {"names"}
    for name, count in structure.proper_names(text):
        category.subjects.append(_name_subject(text, name, count, taken, vocab))
    category.subjects.sort(key=lambda s: s.name)
    category.summary = _list_summary(category.subjects, "Names")
    return category


def _name_subject(text: str, name: str, count: int, taken: set[str], vocab: _Vocabulary) -> Subject:
    subject = Subject(name=name.title() if name.isupper() else name, slug=unique_slug(name, taken))
    values = []
    for m in list(re.finditer(r"\b" + re.escape(name) + r"\b", text))[:5]:
        start, end = _sentence_around(text, m.start(), 300)
        if not values or values[-1].spans[0] != (start, end):
            values.append(FieldValue(text[start:end], [(start, end)]))
    subject.fields["mentions"] = values
    first = structure.first_sentence(values[0].text, 180) if values else name
    subject.summary = f"{counted(count, 'mentions')}; first: {first}"
    subject.keywords = vocab.keywords(" ".join(v.text for v in values), 4)
    return subject


def _list_summary(items: list, noun: str = "") -> str:
    """'N items: A; B; C; …' within 320 characters, in document order."""
    if not items:
        return ""
    names = [item.name for item in items]
    head = f"{counted(len(items), noun.lower() or 'entries')}: "
    out = head
    for i, n in enumerate(names):
        piece = n if i == 0 else "; " + n
        if len(out) + len(piece) > 320:
            out += "; …"
            break
        out += piece
    return out


# The banner above an SEC filing's form name: "UNITED STATES / SECURITIES AND EXCHANGE COMMISSION /
# Washington, D.C. 20549 / FORM 10-Q / (Mark One)": the form, not the country, is the document's title
_FILING_BANNER = re.compile(r"(?:united states|securities and exchange commission|washington,? d\.?\s?c\.?(?: \d{5})?"
                            r"|\(mark one\))", re.IGNORECASE)


def _document_title(text: str, sections: list[structure.Section], file_name: str) -> str:
    for line in text.splitlines()[:15]:
        line = without_html(line).lstrip("#").strip()
        if _FILING_BANNER.fullmatch(line) or not line.strip("|:- "):  # a banner, an empty table row
            continue
        if 4 <= len(line) <= 100 and not line.endswith((",", ";")):
            return line if not line.isupper() else line.title()
        if len(line) > 100:
            upper = re.findall(r"\b[A-Z][A-Z&\- ]{6,80}[A-Z]\b", line[:300])
            if upper:
                return upper[0].title().strip()
            break
    return file_name.rsplit(".", 1)[0]


def _overview(text: str, kind: str, title: str, categories: list[Category]) -> str:
    opening = structure.first_sentence(text, 400)
    parts = [opening]
    counts = ", ".join(f"{_count(c)} {c.name.lower()}" for c in categories)
    if counts:
        parts.append(f"The index holds {counts}.")
    for category in categories:
        if category.name == "Parties" and category.subjects:
            parts.append("Parties: " + "; ".join(s.name for s in category.subjects[:8]) + ".")
    return " ".join(parts)


def _count(category: Category) -> int:
    return len(category.subjects) + sum(_count(c) for c in category.children)
