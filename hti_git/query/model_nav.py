"""Model navigation of one document's index: the walk of paper §3.4 with a branching budget.

The first step shows the root with the subject pages a word search ranks first: the page of the
passage the clause search ranks first (hti_git/query/offline.py, `passage_pages`), then those whose
listing entries rank first (hti_git/query/summary_search.py), so a question whose clause the search
finds is answered in one call. Each step shows the model the question, the page(s) just opened (pages already read are never
sent again; items the model kept from them are), and the links it can take, each with a one-line
summary: children (C1, C2, ...; a listing's own entries as C2.1, C2.2, ... so the model can jump two
levels) and related pages (R1, ...: a continuation, a sibling subject, or a `related` entry a
compile wrote). It replies answer / open / follow / up, keeps the ids of items that bear on the
question, and when it answers gives the answer and its citations in the same reply, so a question
costs no separate answer call. Opening and following are free (descending is unbounded); going up
to try another branch spends the branching budget; every page read spends the page budget.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from hti_git.errors import PageFormatError, StoreError
from hti_git.index.layout import INDEX_FILE, SOURCE_FILE
from hti_git.index.page import Page
from hti_git.lexical import terms
from hti_git.llm.client import ModelClient
from hti_git.llm.prompts import Template, fence
from hti_git.query.clause_search import routing_stems
from hti_git.query.evidence import SUMMARY_LABEL, Evidence, EvidenceBook, summary_spans, table_suffix
from hti_git.query.offline import passage_pages
from hti_git.query.summary_search import best_pages
from hti_git.query.types import Step
from hti_git.store import Snapshot
from hti_git.text import one_line, table_note

ACTIONS = ("answer", "open", "follow", "up")
CITATIONS_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {"evidence": {"type": "string"}, "quote": {"type": "string"}},
        "required": ["evidence", "quote"],
        "additionalProperties": False,
    },
}
NAVIGATE_SCHEMA = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": list(ACTIONS)},
        "links": {"type": "array", "items": {"type": "string"}},
        "keep": {"type": "array", "items": {"type": "string"}},
        "found": {"type": "boolean"},
        "answer": {"type": "string"},
        "citations": CITATIONS_SCHEMA,
        "check_source": {"type": "boolean"},
        "reason": {"type": "string"},
    },
    "required": ["action", "links", "keep", "found", "answer", "citations", "check_source", "reason"],
    "additionalProperties": False,
}
LINK_SUMMARY_CHARS = 320  # a link's one-line summary, whole (subject summaries are at most 240)
LINKS_SUMMARY_CHARS = 1800  # the subject links of one step share this many characters of summaries ...
MIN_SUMMARY_CHARS = 100  # ... each keeping at least its first sentence or this many characters
PAGE_CHARS = 3200  # a page's text in a navigation prompt; past it, whole values are left out, never cut
MAX_SIBLINGS = 4  # sibling links listed for the pages in view, the nearest in their listing first
CATEGORY_SUMMARY_CHARS = 200  # a section's link summary when its entries are not listed under it
LISTED_SUMMARY_CHARS = 0  # a link with its entries listed under it: the titles say what it holds
GRANDCHILD_CHARS = 1000  # titles of a listing's entries shown under its link, so the model can jump two levels
MAX_KEPT = 8  # items kept from earlier pages and shown again
SUGGESTED_PAGES = 2  # subject pages a word search ranks first, shown with the root on the first step


@dataclass
class Link:
    id: str
    path: str
    title: str
    summary: str
    relation: str  # child | related
    note: str = ""
    summary_chars: int = LINK_SUMMARY_CHARS


class _Entry(NamedTuple):
    """An entry of a section's listing: its place there (1-based), page, title, and whether it is a sub-section."""

    place: int
    path: str
    title: str
    section: bool


@dataclass
class Budget:
    """Pages one navigation may read and level-ups it may spend."""

    max_pages: int
    max_level_ups: int
    pages_read: int = 0
    level_ups: int = 0

    @property
    def pages_left(self) -> int:
        return max(0, self.max_pages - self.pages_read)

    @property
    def level_ups_left(self) -> int:
        return max(0, self.max_level_ups - self.level_ups)


@dataclass
class Decision:
    action: str
    links: list[str]
    reason: str
    tokens: int
    cached: bool
    keep: list[str] = field(default_factory=list)
    reply: dict = field(default_factory=dict)  # the whole reply: on "answer", its answer and citations


def step_tokens(completion) -> int:
    """Tokens a call spent (a cache hit spent none)."""
    return 0 if completion.cached else completion.usage.input_tokens + completion.usage.output_tokens


def _ids(values) -> list[str]:
    return [str(x).strip().strip("[]").upper() for x in (values or []) if str(x).strip()]


def parse_decision(data) -> tuple[str, list[str], str]:
    """(action, link ids, reason) from a reply; an unusable reply ends the walk as 'answer'."""
    if not isinstance(data, dict) or data.get("action") not in ACTIONS:
        return "answer", [], "unusable reply: stopping here"
    return data["action"], _ids(data.get("links")), one_line(data.get("reason") or "", 200)


class DocNavigation:
    """One walk through one document's index; `pages` lists the paths read, in order."""

    def __init__(self, snapshot: Snapshot, doc: str, question: str, client: ModelClient, template: Template,
                 budget: Budget, book: EvidenceBook):
        self.snapshot = snapshot
        self.doc = doc
        self.question = question
        self.client = client
        self.template = template
        self.budget = budget
        self.book = book
        self.pages: list[str] = []
        self.trace: list[Step] = []
        self.kept: list[Evidence] = []  # items the model kept from pages read before, shown again
        self.left_out = False  # some value of a page read was never shown (over PAGE_CHARS)
        self.reply: dict | None = None  # the reply that ended the walk with "answer"
        self.shown_links: list[Link] = []  # the links of the last prompt: their descriptions are citable
        self.chose_pages = False  # the model opened, followed or went up at least once (not only the first view)
        self._read: dict[str, Page] = {}
        self._peeked: dict[str, Page] = {}  # listings read without being shown (entries, word search)
        self._words: set[str] = set()  # the question's words as the listings spell them
        self._shown: dict[str, str] = {}  # sentence -> id of the item that showed it, in the prompt being built
        self._partial: dict[str, set[str]] = {}  # a word search's page shown in part -> ids of the items shown
        self._text: str | None = None  # source.txt, read when a page's table row needs its units

    # -- reading -------------------------------------------------------------------------------

    def _read_page(self, path: str, how: str) -> Page:
        page = self.snapshot.page(path)
        self._read[path] = page
        self.pages.append(path)
        self.budget.pages_read += 1
        # every page read is evidence for the answer step, summaries included; a table's row is
        # shown with the units its table states above it
        for item in self.book.add_page(page):
            if item.spans and not item.summary and not item.table:
                item.table = table_note(self._source(), *item.spans[0], shown=item.text)
        self.trace.append(Step(path, how, note=page.title))
        return page

    def _source(self) -> str:
        if self._text is None:
            self._text = self.snapshot.read_text(f"{self.doc}/{SOURCE_FILE}")
        return self._text

    def _parent(self, page: Page) -> str | None:
        parent = page.meta.get("parent")
        if not parent or page.kind == "root":
            return None
        return page.resolve(str(parent))

    # -- links ---------------------------------------------------------------------------------

    def links(self, view: list[Page], listed: set[str] = frozenset()) -> list[Link]:
        """Children of the pages in view, then related pages, skipping pages already read (except
        those in `listed`: the word search's pages stay listed under the root, so the root's links
        read the same for every question)."""
        seen = set(self._read) - set(listed)
        children: list[Link] = []
        related: list[Link] = []

        def add(target: list[Link], prefix: str, path: str, title: str, summary: str, relation: str,
                note: str = "") -> Link | None:
            if path in seen:  # existence is checked when a link is opened, not for every link listed
                return None
            seen.add(path)
            target.append(Link(f"{prefix}{len(target) + 1}", path, title, summary, relation, note))
            return target[-1]

        sections: list[Link] = []
        for page in view:
            for child in page.links():
                note = f"{child['subjects']} subjects" if child.get("kind") == "category" and child.get("subjects") else ""
                link = add(children, "C", page.resolve(child["link"]), str(child.get("title", "")),
                           str(child.get("summary", "")), "child", note)
                if link is not None and child.get("kind") == "category":
                    link.summary_chars = CATEGORY_SUMMARY_CHARS  # a section's summary in brief: the model opens it to read more
                    sections.append(link)
        grandchildren = self._grandchildren(sections, seen)
        for page in view:
            for key, note in (("continued", "continuation of this page"), ("continues", "start of this subject")):
                if page.meta.get(key):
                    add(related, "R", page.resolve(str(page.meta[key])), f"{page.title} ({note})", "", "related")
            for entry in page.meta.get("related") or []:
                if isinstance(entry, dict) and entry.get("link"):
                    add(related, "R", page.resolve(str(entry["link"])), str(entry.get("title", entry["link"])),
                        str(entry.get("summary", "")), "related")
        seen |= {page.path for page in view}  # a page shown is not its neighbours' sibling link
        # a word search's pages (first step) get no sibling links: they are guesses, not a place reached
        placed = [(page, listing) for page in view if page.path not in listed
                  and (parent := self._parent(page)) and (listing := self._read.get(parent) or self._peeked.get(parent))]
        share = max(2, MAX_SIBLINGS // max(1, len(placed)))
        for page, listing in placed:
            # Siblings were listed on the parent the model already saw: titles suffice. The nearest
            # ones come first (a clause's continuation or neighbour is beside it in the listing).
            added = 0
            for child in _nearest(listing, page.path):
                if added >= share:
                    break
                added += add(related, "R", listing.resolve(child["link"]), str(child.get("title", "")), "",
                             "related", "sibling") is not None
        _share_summaries(children)
        out: list[Link] = []
        for link in children:
            out.append(link)
            out += grandchildren.get(link.id, [])
        return out + related

    def _grandchildren(self, sections: list[Link], seen: set[str]) -> dict[str, list[Link]]:
        """The entries of the sections' listings (titles only) as link.id + ".1", ".2"... (their place
        in the listing), while their titles fit GRANDCHILD_CHARS: first every section's sub-sections,
        the outline a model navigates by, then each section's remaining entries (its subjects) where
        they all fit. A section listed whole needs no summary; a section with only its sub-sections
        listed keeps its brief one. (Listed first-come, a long document's first sections took the
        room, and its later ones showed no outline at all.)"""
        entries: dict[str, list[_Entry]] = {}
        for link in sections:
            listing = self._listing(link.path)
            if listing is not None:
                entries[link.id] = [_Entry(i, listing.resolve(c["link"]), str(c.get("title", "")), c.get("kind") == "category")
                                    for i, c in enumerate(listing.links(), 1)]
        shown: dict[str, list[Link]] = {}
        room = GRANDCHILD_CHARS
        for outline in (True, False):
            for link in sections:
                listing = entries.get(link.id, [])
                if outline:
                    rows = [e for e in listing if e.section]
                elif link.id in shown or not any(e.section for e in listing):  # its subjects, after its outline
                    rows = [e for e in listing if not e.section]
                else:
                    continue  # its outline did not fit: nor will the rest
                cost = sum(len(link.id) + 4 + len(one_line(e.title, 100)) for e in rows)
                if not rows or cost > room:
                    continue
                room -= cost
                listed = shown.setdefault(link.id, [])
                for e in rows:
                    if e.path not in seen:
                        seen.add(e.path)
                        listed.append(Link(f"{link.id}.{e.place}", e.path, e.title, "", "child", "entry"))
                listed.sort(key=lambda x: int(x.id.rsplit(".", 1)[1]))
                if all(e.path in seen for e in listing):
                    link.summary_chars = LISTED_SUMMARY_CHARS  # its entries' titles say what it holds
        return shown

    def link_items(self) -> list[Evidence]:
        """The last prompt's link descriptions as citable summaries, by link id ("C7"): a child's
        description is its page's summary, so a quote of it resolves to the sentence of the document
        that states it, within that page's values (anywhere, for a section's summary), as a summary
        item's quote does. The model need not open a page only to cite what its link already says."""
        items = []
        for link in self.shown_links:
            text = whole_sentences(link.summary, link.summary_chars) if link.summary and link.summary_chars else ""
            if not text or link.note == "entry":
                continue
            try:
                page = self._read.get(link.path) or self.snapshot.page(link.path)
            except (StoreError, PageFormatError):
                continue
            items.append(Evidence(link.id, self.doc, link.path, SUMMARY_LABEL, text, *summary_spans(page),
                                  anywhere=page.kind != "subject", summary=True))
        return items

    # -- rendering -----------------------------------------------------------------------------

    def render_pages(self, new: list[Page], revisited: list[Page]) -> str:
        parts = []
        shown_now = {item.id for page in new for item in self.book.for_page(page.path)}
        kept = [item for item in self.kept if item.id not in shown_now]
        if kept:
            parts.append("Kept from pages read before:\n" + fence("\n".join(_item_line(i, self._shown) for i in kept)))
        for page in new:
            parts.append(self._render_page(page, rest=self._partial.pop(page.path, None)))
        for page in revisited:
            parts.append(f"Back on {_local(page.path)} ({page.title}), already read: its content is not repeated.")
        return "\n\n".join(parts)

    def _render_page(self, page: Page, words: set[str] | None = None, rest: set[str] | None = None) -> str:
        """A page's items; with `words` (a word search's page) its summary and the values holding the
        question's words; with `rest` (ids shown that way before) the values not shown yet."""
        items = self.book.for_page(page.path)
        other = 0
        if words is not None:
            shown = [i for n, i in enumerate(items) if n == 0 or words & set(terms(i.text))]
            other, items = len(items) - len(shown), shown
            if other:
                self._partial[page.path] = {i.id for i in shown}
        elif rest is not None:
            items = [i for i in items if i.id not in rest]
        text, left = _page_text(page, items, self._shown)
        self.left_out = self.left_out or left > 0
        if other:
            text += f"\n({other} other value(s) on this page share no word with the question)"
        if rest is not None:
            text += "\n(its summary and the values shown before are not repeated)"
        return f"Page {_local(page.path)} ({page.kind or 'page'}):\n" + fence(text)

    def render_found(self, found: list[Page], links: list[Link]) -> str:
        """The pages a word search ranked first and their own links, after the root's links, so the
        prompt up to there is the same for every question on the document (a cacheable prefix)."""
        if not found:
            return ""
        pages = "\n\n".join(self._render_page(page, self._words) for page in found)
        tail = f"\n\nTheir links:\n{self.render_links(links)}" if links else ""
        return f"\nPages a word search found (they share words with the question; they may not answer it):\n{pages}{tail}\n"

    def render_links(self, links: list[Link]) -> str:
        if not links:
            return "(none)"
        rows = []
        for link in links:
            if link.note == "entry":  # a listing's entry under its link: the title says enough
                rows.append(f"  {link.id} {one_line(link.title, 100)}")
                continue
            extra = f" [{link.note}]" if link.note else ""
            summary = f" — {whole_sentences(link.summary, link.summary_chars)}" if link.summary and link.summary_chars else ""
            rows.append(f"{link.id}{extra} {one_line(link.title, 100)}{summary}")
        return fence("\n".join(rows))

    def keep(self, ids: list[str]) -> None:
        """Remember the items the model kept (only items of pages this walk read), MAX_KEPT at most."""
        mine = {item.id: item for path in self.pages for item in self.book.for_page(path)}
        for ident in ids:
            item = mine.get(ident)
            if item is not None and item not in self.kept:
                self.kept.append(item)
        self.kept = self.kept[-MAX_KEPT:]

    def render_budget(self, can_go_up: bool) -> str:
        up = f"{self.budget.level_ups_left} level-up(s) left" if can_go_up else "'up' is not available"
        return f"{self.budget.pages_left} more page(s) may be opened; {up}."

    # -- the walk ------------------------------------------------------------------------------

    async def decide(self, new: list[Page], revisited: list[Page], links: list[Link], can_go_up: bool,
                     found: list[Page] | None = None) -> Decision:
        # with a word search's pages, their links (related, siblings) follow them, after the root's
        self._shown = {}  # a sentence is shown once per prompt; later items name the item that showed it
        ahead = [lk for lk in links if lk.relation == "child" or not found]
        behind = [lk for lk in links if lk.relation != "child" and found]
        messages = self.template.messages(
            question=self.question,
            pages=self.render_pages(new, revisited),
            links=self.render_links(ahead),
            found=self.render_found(found or [], behind),
            budget=self.render_budget(can_go_up),
        )
        where = (new or revisited)[0].path
        completion = await self.client.complete("navigate", messages, NAVIGATE_SCHEMA, label=where)
        action, ids, reason = parse_decision(completion.json)
        data = completion.json if isinstance(completion.json, dict) else {}
        return Decision(action, ids, reason, step_tokens(completion), completion.cached, _ids(data.get("keep")), data)

    def _suggestions(self) -> list[str]:
        """Up to SUGGESTED_PAGES subject pages that a word search ranks first (within the page budget):
        the best passage's page, then the best listing entries'. Many questions are answered on the
        first step, without descending."""
        room = min(SUGGESTED_PAGES, self.budget.pages_left - 1)
        if room <= 0:
            return []
        pages, self._words = best_pages(self._read[f"{self.doc}/{INDEX_FILE}"], self.question, room, self._listing)
        # the page of the passage the clause search ranks first leads: a clause no listing names ("a
        # one-time bonus of 1,500,000 shares" in "2.1 Remuneration") is still shown (run 55)
        passages = passage_pages(self.snapshot, self.doc, self.question, room)
        self._words |= set(routing_stems(self.question))
        return list(dict.fromkeys(passages[:1] + pages + passages[1:]))[:room]

    def _listing(self, path: str) -> Page | None:
        """A listing page read without being shown (its entries, the word search): read once; a
        broken one is None."""
        if path not in self._peeked:
            try:
                self._peeked[path] = self.snapshot.page(path)
            except (StoreError, PageFormatError):
                return None
        return self._peeked[path]

    def _ancestor_with_links(self, page: Page) -> str | None:
        """The nearest ancestor of `page` that still has an unread child (or is unread itself)."""
        path = self._parent(page)
        while path is not None:
            if path not in self._read:
                return path
            parent = self._read[path]
            if any(parent.resolve(c["link"]) not in self._read for c in parent.links()):
                return path
            path = self._parent(parent)
        return None

    @property
    def absent(self) -> bool:
        """The model answered "not found" with no source check asked for, after choosing pages
        itself (never on the root and a word search alone), and every value read was shown."""
        reply = self.reply or {}
        return (reply.get("found") is False and reply.get("check_source") is False and self.chose_pages
                and not self.left_out)

    async def run(self) -> list[str]:
        """Walk from the root until the model answers or a budget is spent; return the pages read."""
        if self.budget.pages_left <= 0:
            return self.pages
        root = self._read_page(f"{self.doc}/{INDEX_FILE}", "read")
        view, new, revisited = [root], [root], []
        found: list[Page] = []
        for path in self._suggestions():  # the pages a word search ranks first, shown with the root
            try:
                found.append(self._read_page(path, "suggest"))
            except (StoreError, PageFormatError):
                continue
        view += found
        for _ in range(self.budget.max_pages + self.budget.max_level_ups + 2):
            links = self.links(view, {p.path for p in found})
            up_target = self._ancestor_with_links(view[0])
            can_go_up = up_target is not None and self.budget.level_ups_left > 0
            if not links and not can_go_up:
                self.trace.append(Step(view[0].path, "stop", note="nothing left to open here"))
                break
            self.shown_links = links
            decision = await self.decide(new, revisited, links, can_go_up, found)
            found = []
            targets = [lk for lk in links if lk.id in set(decision.links)]
            note = decision.reason + (" (cached)" if decision.cached else "")
            if decision.action in ("open", "follow") and targets:
                note = f"{', '.join(t.id for t in targets)}: {note}"
            self.trace.append(Step(view[0].path, decision.action, note=note, tokens=decision.tokens))
            self.keep(decision.keep)
            if decision.action == "answer":
                self.reply = decision.reply
                break
            if decision.action == "up":
                if not can_go_up:
                    reason = "branching budget spent" if up_target is not None else "no other branch to try"
                    self.trace.append(Step(view[0].path, "stop", note=reason))
                    break
                self.budget.level_ups += 1
                self.chose_pages = True
                if up_target in self._read:
                    view, new, revisited = [self._read[up_target]], [], [self._read[up_target]]
                    self.trace.append(Step(up_target, "level-up", note="back to a page already read"))
                else:
                    page = self._read_page(up_target, "level-up")
                    view, new, revisited = [page], [page], []
                if self.budget.pages_left <= 0 and new:
                    self.trace.append(Step(up_target, "stop", note="page budget spent"))
                    break
                continue
            if not targets:
                self.trace.append(Step(view[0].path, "stop", note=f"no valid link in {decision.links or '[]'}"))
                break
            self.chose_pages = True
            if len(targets) > self.budget.pages_left:
                self.trace.append(Step(view[0].path, "skip", note=f"page budget: opening {self.budget.pages_left} of {len(targets)}"))
                targets = targets[: self.budget.pages_left]
            opened, again = [], []
            for t in targets:
                if t.path in self._partial:  # a word search's page shown in part: now its other values
                    opened.append(self._read[t.path])
                    continue
                if t.path in self._read:  # a word search's page, shown already: not sent again
                    again.append(self._read[t.path])
                    continue
                try:
                    opened.append(self._read_page(t.path, "descend" if t.relation == "child" else "jump"))
                except (StoreError, PageFormatError) as exc:
                    self._read[t.path] = Page(t.path)  # never offered again
                    self.trace.append(Step(t.path, "skip", note=f"broken link: {exc}"))
            if not opened and not again:
                break
            view, new, revisited = opened + again, opened, again
            if self.budget.pages_left <= 0:
                self.trace.append(Step(opened[-1].path, "stop", note=f"page budget spent ({self.budget.max_pages} pages)"))
                break
        return self.pages


def _share_summaries(children: list[Link]) -> None:
    """Subject links share LINKS_SUMMARY_CHARS: a page listing 17 subjects shows each summary's
    first sentence, one listing 5 shows them whole. Titles carry the clause; the first sentence of a
    subject summary its gist, so the model still picks the likeliest pages at half the tokens."""
    plain = [link for link in children if link.summary and link.summary_chars == LINK_SUMMARY_CHARS]
    if not plain:
        return
    each = max(MIN_SUMMARY_CHARS, min(LINK_SUMMARY_CHARS, LINKS_SUMMARY_CHARS // len(plain)))
    for link in plain:
        link.summary_chars = each


def _item_line(item: Evidence, shown: dict[str, str] | None = None) -> str:
    """An item as "[id] label: text". With `shown` (sentence -> id of the item that showed it), a
    value whose sentence an item above already showed reads "reading | (the sentence of E3)":
    extraction often anchors several fields of one clause in the same sentence."""
    text = " ".join(item.text.split())
    reading, bar, sentence = text.partition(" | ")
    if shown is not None and bar and len(sentence) > 80:
        if sentence in shown:
            text = f"{reading} | (the sentence of {shown[sentence]})"
        else:
            shown[sentence] = item.id
    return f"[{item.id}] {item.label}: {text}{table_suffix(item)}"


def _page_text(page: Page, items: list[Evidence], shown: dict[str, str] | None = None) -> tuple[str, int]:
    """What navigation shows of a page, and how many of its values it leaves out: the title, then
    its evidence items with their ids (the summary; for a subject each value as its reading and
    whole evidence sentence). Over PAGE_CHARS whole values are left out with a count, so the model
    never sees a clause cut mid-sentence."""
    lines = [f"# {page.title}"]
    if page.kind == "subject" and page.meta.get("aliases"):
        lines.append("Also called: " + ", ".join(map(str, page.meta["aliases"])))
    left = 0
    used = sum(len(line) + 1 for line in lines)
    shown = {} if shown is None else shown
    for item in items:
        line = _item_line(item, shown)
        if used + len(line) > PAGE_CHARS and len(lines) > 2:
            left += 1
            continue
        lines.append(line)
        used += len(line) + 1
    if left:
        lines.append(f"({left} more value(s) on this page, not shown)")
    return "\n".join(lines), left


def _nearest(listing: Page, path: str) -> list[dict]:
    """The entries of `listing` other than `path`, nearest to it first (before after, on a tie)."""
    entries = listing.links()
    paths = [listing.resolve(c["link"]) for c in entries]
    at = paths.index(path) if path in paths else 0
    order = sorted(range(len(entries)), key=lambda i: (abs(i - at), i))
    return [entries[i] for i in order if paths[i] != path]


def whole_sentences(text: str, limit: int) -> str:
    """`text` on one line; over `limit`, cut after its last whole sentence that fits (else a word)."""
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    cut = max(text.rfind(". ", 0, limit), text.rfind("; ", 0, limit))
    if cut > limit // 3:
        return text[: cut + 1] + " …"
    return text[: text.rfind(" ", 0, limit)] + " …"


def _local(path: str) -> str:
    """A page path without its document folder (the model navigates one document at a time)."""
    return path.split("/", 1)[1] if "/" in path else path
