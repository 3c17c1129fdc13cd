"""Record -> pages under a page budget (paper §5's rule: fit a node on one page, else split).

A category whose listing is longer than the fan-out or the page budget splits into sub-categories
of consecutive children, recursively; a subject whose values do not fit spills into continuation
pages. Pages link with relative Markdown links and cite `source.txt#Lx-Ly`.
"""

from __future__ import annotations

import math
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hti_git import FORMAT_VERSION
from hti_git.index.linemap import LineMap
from hti_git.index.model import Category, FieldValue, Record, Subject
from hti_git.index.page import Page
from hti_git.index.plural import counted
from hti_git.index.slug import slugify
from hti_git.sources.types import SourceText
from hti_git.tokens import estimate_tokens

SOURCE_FILE = "source.txt"
SCHEMA_FILE = "schema.yaml"
INDEX_FILE = "index.md"

GroupSummarizer = Callable[[list[dict[str, Any]]], str]


@dataclass(frozen=True)
class LayoutOptions:
    page_budget: int = 2000  # tokens
    fanout: int = 12


def default_group_summary(children: list[dict[str, Any]]) -> str:
    """Extractive summary of a group: its children's titles."""
    names = "; ".join(c["title"] for c in children)
    text = f"{counted(len(children), 'entries')}: {names}"
    return text if len(text) <= 320 else text[:317].rsplit(";", 1)[0] + "; …"


@dataclass
class _Node:
    """A node of the layout tree before it has a path: a listing (category) or a subject."""

    title: str
    slug: str
    summary: str = ""
    keywords: list[str] = field(default_factory=list)
    children: list[_Node] = field(default_factory=list)
    subject: Subject | None = None

    @property
    def count(self) -> int:
        return 1 if self.subject is not None else sum(c.count for c in self.children)


def build_pages(
    doc: str,
    record: Record,
    source: SourceText,
    provenance: dict[str, Any],
    options: LayoutOptions,
    group_summary: GroupSummarizer = default_group_summary,
) -> list[Page]:
    """Every page of one document's index (root, categories, subjects), deterministic."""
    writer = _Writer(doc, source, options, group_summary)
    nodes = [writer.fit(_category_node(c)) for c in record.categories]
    children = [writer.write(n, doc) for n in nodes]
    root = Page(
        path=f"{doc}/{INDEX_FILE}",
        meta={
            "hti": FORMAT_VERSION,
            "kind": "root",
            "doc": doc,
            "title": record.title,
            "summary": record.overview,
            "provenance": provenance,
            "children": [_relink(e, doc) for e in children],
        },
    )
    root.body = _render_listing(root, source_link=True)
    writer.pages.append(root)
    return sorted(writer.pages, key=lambda p: p.path)


def _category_node(category: Category) -> _Node:
    children = [_category_node(c) for c in category.children]
    children += [_Node(s.name, s.slug, s.summary, list(s.keywords), subject=s) for s in category.subjects]
    children.sort(key=_first_offset)  # document order, whatever the lists were built in
    return _Node(category.name, category.slug, category.summary, _merged_keywords(children), children)


def _first_offset(node: _Node) -> int:
    if node.subject is not None:
        spans = node.subject.spans
        return spans[0][0] if spans else 1 << 62
    return min((_first_offset(c) for c in node.children), default=1 << 62)


def _merged_keywords(nodes: list[_Node], k: int = 12) -> list[str]:
    best: dict[str, int] = {}
    for node in nodes:
        for rank, word in enumerate(node.keywords):
            best[word] = min(best.get(word, 99), rank)
    return sorted(best, key=lambda w: (best[w], w))[:k]


class _Writer:
    def __init__(self, doc: str, source: SourceText, options: LayoutOptions, group_summary: GroupSummarizer):
        self.doc = doc
        self.source = source
        self.options = options
        self.group_summary = group_summary
        self.lines = LineMap(source.text, source.page_starts)
        self.pages: list[Page] = []

    def fit(self, node: _Node) -> _Node:
        """Group a listing's children into sub-categories until it fits the fan-out and budget."""
        node.children = [self.fit(c) if c.subject is None else c for c in node.children]
        n = len(node.children)
        tokens = sum(estimate_tokens(_line(c)) for c in node.children)
        if n < 2 or (n <= self.options.fanout and tokens <= self.options.page_budget):
            return node
        groups = max(math.ceil(n / self.options.fanout), math.ceil(tokens / self.options.page_budget), 2)
        size = math.ceil(n / min(groups, self.options.fanout, n))
        grouped = []
        for i in range(0, n, size):
            part = node.children[i: i + size]
            if len(part) == 1:
                grouped.append(part[0])
                continue
            title = f"{part[0].title} – {part[-1].title}"
            slug = f"part-{i // size + 1:02d}-{slugify(part[0].title, 30)}"
            entries = [{"title": c.title, "summary": c.summary} for c in part]
            grouped.append(self.fit(_Node(title, slug, self.group_summary(entries), _merged_keywords(part), part)))
        node.children = grouped
        return node

    def write(self, node: _Node, folder: str) -> dict[str, Any]:
        """Write the pages of `node` under `folder`; return the link entry its parent lists."""
        if node.subject is not None:
            return self.subject(node.subject, folder)
        here = f"{folder}/{node.slug}"
        entries = [self.write(c, here) for c in node.children]
        path = f"{here}/{INDEX_FILE}"
        summary = node.summary or self.group_summary(entries)
        page = Page(
            path=path,
            meta={
                "hti": FORMAT_VERSION,
                "kind": "category",
                "doc": self.doc,
                "title": node.title,
                "summary": summary,
                "parent": "../index.md",
                "children": [_relink(e, here) for e in entries],
            },
        )
        page.body = _render_listing(page)
        self.pages.append(page)
        return {
            "title": node.title,
            "link": path,
            "kind": "category",
            "summary": summary,
            "keywords": node.keywords,
            "subjects": node.count,
        }

    def subject(self, subject: Subject, folder: str) -> dict[str, Any]:
        """Write a subject page (and continuation pages when its values outgrow the budget)."""
        base = f"{folder}/{subject.slug}"
        header = {
            "hti": FORMAT_VERSION,
            "kind": "subject",
            "doc": self.doc,
            "title": subject.name,
            "summary": subject.summary,
            "aliases": list(subject.aliases),
            "keywords": list(subject.keywords),
            "parent": "index.md",
        }
        budget = self.options.page_budget
        pages_fields: list[list[dict[str, Any]]] = [[]]
        used = estimate_tokens(subject.name + " " + subject.summary) + 40
        for name, values in subject.fields.items():
            for value in values:
                item = self._value(value)
                cost = estimate_tokens(item["text"]) + estimate_tokens(item.get("value", "")) + 20
                if pages_fields[-1] and used + cost > budget:
                    pages_fields.append([])  # a value is moved whole to the next page, never cut
                    used = 40
                used += cost
                current = pages_fields[-1]
                if current and current[-1]["name"] == name:
                    current[-1]["values"].append(item)
                else:
                    current.append({"name": name, "values": [item]})
        paths = [f"{base}.md"] + [f"{base}--{i + 1}.md" for i in range(1, len(pages_fields))]
        for i, (path, page_fields) in enumerate(zip(paths, pages_fields)):
            meta = dict(header)
            if i:
                meta["title"] = f"{subject.name} (continued, {i + 1}/{len(paths)})"
                meta["continues"] = posixpath.basename(paths[i - 1])
            meta["fields"] = page_fields
            if i + 1 < len(paths):
                meta["continued"] = posixpath.basename(paths[i + 1])
            page = Page(path=path, meta=meta)
            page.body = _render_subject(page, self.lines)
            self.pages.append(page)
        return {
            "title": subject.name,
            "link": paths[0],
            "kind": "subject",
            "summary": subject.summary,
            "keywords": list(subject.keywords),
        }

    def _value(self, value: FieldValue) -> dict[str, Any]:
        item: dict[str, Any] = {"value": value.value} if value.value and value.value != value.text else {}
        item["text"] = value.text
        spans = sorted({(int(s), int(e)) for s, e in value.spans})
        if spans:
            item["spans"] = [[s, e] for s, e in spans]
            pages = sorted({p for s, e in spans for p in self.source.pages_for(s, e)})
            if pages:
                item["pages"] = pages
        if value.unverified:
            item["unverified"] = True
        return item

def _relink(entry: dict[str, Any], folder: str) -> dict[str, Any]:
    """An entry whose `link` is relative to the listing page in `folder`."""
    out = {k: v for k, v in entry.items() if k != "link"}
    out["link"] = posixpath.relpath(entry["link"], folder)
    return {k: out[k] for k in ("title", "link", "kind", "summary", "keywords", "subjects") if k in out}


def _line(node: _Node) -> str:
    return (f"- [{node.title}]({node.slug}/index.md) ({counted(node.count, 'subjects')}) — {node.summary} "
            f"{' '.join(node.keywords)}")


def _source_rel(page_path: str) -> str:
    doc = page_path.split("/", 1)[0]
    return posixpath.relpath(f"{doc}/{SOURCE_FILE}", posixpath.dirname(page_path))


_MD_INLINE = re.compile(r"([\\\[\]<>])")


def _inline(text: Any) -> str:
    """Text from a document or a model, made inert in a Markdown body: one line (a newline cannot
    start a heading, list or HTML block) with \\ [ ] < > escaped, so it cannot form a link, an
    image or raw HTML. Front-matter keeps the text as is; only the body rendering is escaped."""
    return _MD_INLINE.sub(r"\\\1", " ".join(str(text).split()))


def _render_listing(page: Page, source_link: bool = False) -> str:
    meta = page.meta
    out = [f"# {_inline(meta['title'])}", ""]
    if meta.get("summary"):
        out += [_inline(meta["summary"]), ""]
    if meta.get("kind") == "category":
        out += ["[Up](../index.md)", ""]
    out += ["## Contents", ""]
    for child in meta.get("children", []):
        extra = (f" ({counted(child['subjects'], 'subjects')})" if child.get("kind") == "category"
                 and child.get("subjects") else "")
        summary = f" — {_inline(child['summary'])}" if child.get("summary") else ""
        out.append(f"- [{_inline(child['title'])}]({child['link']}){extra}{summary}")
    if source_link:
        out += ["", f"Source text: [{SOURCE_FILE}]({SOURCE_FILE})"]
    return "\n".join(out) + "\n"


def _render_subject(page: Page, lines: LineMap) -> str:
    src = _source_rel(page.path)
    return render_subject(page, lines, lambda s, e, a, b: f"[L{a}-L{b}]({src}#L{a}-L{b})", _inline)


def render_subject(page: Page, lines: LineMap, cite, inline) -> str:
    """A subject page's body: `cite(start, end, first_line, last_line)` renders one span's citation
    and `inline` one line of text (Markdown-escaped on disk; plain for an agent, mcp_server.py)."""
    meta = page.meta
    out = [f"# {inline(meta.get('title', ''))}", "", inline(meta.get("summary", "")), "", "[Up](index.md)", ""]
    if meta.get("aliases"):
        out += ["Also called: " + ", ".join(inline(a) for a in meta["aliases"]), ""]
    if meta.get("continues"):
        out += [f"Continues [{meta['continues']}]({meta['continues']}).", ""]
    for fld in meta.get("fields", []):
        out += [f"## {inline(fld.get('name', ''))}", ""]
        for value in fld.get("values", []):
            cites = []
            for s, e in value.get("spans", []):
                a, b = lines.lines(s, e)
                cites.append(cite(s, e, a, b))
            if value.get("pages"):
                cites.append("p. " + ", ".join(str(p) for p in value["pages"]))
            if value.get("unverified"):
                cites.append("unverified: evidence not found in source")
            text = inline(value.get("text", ""))
            if value.get("value"):
                text = f"**{inline(value['value'])}**: {text}"
            out.append(f"- {text}" + (f" ({'; '.join(cites)})" if cites else ""))
        out.append("")
    if meta.get("continued"):
        out += [f"Continued in [{meta['continued']}]({meta['continued']}).", ""]
    return "\n".join(out).rstrip("\n") + "\n"
