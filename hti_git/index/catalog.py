"""The catalogue: one small file per revision listing every compiled document.

`catalog.jsonl` at the repository root holds one JSON line per document (sorted by name, keys
sorted, compact): name, title, one-line summary, top-level sections, counts, method, model, source
name and hash, schema and provenance hashes, token usage, routing terms, and the Git id of the
document's folder tree. `ls`, routing and `--doc` checks read this one blob instead of N root pages.

Each compile rewrites it in the same commit as the document's pages (store.commit's `derive`).
Readers never trust it blindly: the top-level tree (one object) gives every folder's tree id, so an
entry whose `tree` differs (a document edited, added or removed with plain Git, a merge, an older
index without a catalogue) is rebuilt from that document's root page; only those pages are read.
`verify` checks every entry against the root pages.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hti_git.errors import PageFormatError
from hti_git.index.layout import INDEX_FILE, SOURCE_FILE
from hti_git.index.page import Page
from hti_git.lexical import terms
from hti_git.text import canonical_sha256, one_line

if TYPE_CHECKING:
    from hti_git.store import Snapshot

CATALOG_FILE = "catalog.jsonl"
CATALOG_FORMAT = 1
ROUTING_TERMS = 48  # most frequent terms of the root page kept for routing
SUMMARY_CHARS = 240
SECTIONS_CHARS = 160
USAGE_KEYS = ("calls", "cached_calls", "input_tokens", "output_tokens")


@dataclass
class Catalog:
    """The documents of one revision, as read (and, where needed, repaired) from the catalogue."""

    entries: dict[str, dict[str, Any]] = field(default_factory=dict)  # doc -> entry, sorted by doc
    stored: dict[str, dict[str, Any]] = field(default_factory=dict)  # the file's entries, as written
    present: bool = False  # a catalog.jsonl exists at the revision
    rebuilt: list[str] = field(default_factory=list)  # docs whose entry was missing or stale
    dropped: list[str] = field(default_factory=list)  # entries naming folders that are not indexes
    invalid: list[str] = field(default_factory=list)  # lines that did not parse, duplicates

    @property
    def docs(self) -> list[str]:
        return list(self.entries)

    @property
    def current(self) -> bool:
        """True when the stored catalogue matched the revision exactly (nothing rebuilt or dropped)."""
        return self.present and not (self.rebuilt or self.dropped or self.invalid)


def root_text(page: Page) -> str:
    """The words routing matches a question against: title, summary, and each child's title,
    summary and keywords."""
    parts = [page.title, page.summary]
    for child in page.links():
        if isinstance(child, dict):
            parts += [str(child.get("title", "")), str(child.get("summary", "")),
                      " ".join(str(k) for k in child.get("keywords", []) or [])]
    return " ".join(parts)


def routing_terms(page: Page, limit: int = ROUTING_TERMS) -> dict[str, int]:
    """The `limit` most frequent terms of the root page (ties by term), with their counts."""
    counts = Counter(terms(root_text(page)))
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    return dict(sorted(top))


def _usage(prov: dict[str, Any]) -> dict[str, int]:
    usage = prov.get("usage") or {}
    usage = usage.get("total", usage) if isinstance(usage, dict) else {}
    return {k: int(usage[k]) for k in USAGE_KEYS if isinstance(usage.get(k), int)}


def make_entry(doc: str, root: Page, paths: Iterable[str], tree: str) -> dict[str, Any]:
    """The catalogue entry of `doc`: from its root page, its file paths and its folder's tree id."""
    prov = root.meta.get("provenance") or {}
    prov = prov if isinstance(prov, dict) else {}
    source = prov.get("source") or {}
    model = prov.get("model") or {}
    sections = "; ".join(str(c.get("title", "")) for c in root.links() if isinstance(c, dict))
    return {
        "doc": doc,
        "title": one_line(root.title, SUMMARY_CHARS),
        "summary": one_line(root.summary, SUMMARY_CHARS),
        "sections": one_line(sections, SECTIONS_CHARS),
        "pages": sum(1 for p in paths if p.endswith(".md")),
        "chars": source.get("chars"),
        "pdf_pages": source.get("pages"),
        "method": prov.get("method"),
        "model": model.get("name") if isinstance(model, dict) else None,
        "source": source.get("name"),
        "source_sha256": source.get("sha256"),
        "schema_sha256": prov.get("schema_sha256"),
        "provenance_sha256": canonical_sha256(prov),
        "usage": _usage(prov),
        "terms": routing_terms(root),
        "tree": tree,
    }


def entry_from_snapshot(snapshot: Snapshot, doc: str, tree: str) -> dict[str, Any]:
    """The entry for `doc` rebuilt from its root page at `snapshot` (an unreadable root page gives
    an entry with only the name, so listing never fails; verify reports the page)."""
    paths = list(snapshot.blob_shas(doc))
    try:
        root = snapshot.page(f"{doc}/{INDEX_FILE}")
    except (PageFormatError, UnicodeDecodeError):
        root = Page(f"{doc}/{INDEX_FILE}")
    return make_entry(doc, root, [p[len(doc) + 1:] for p in paths], tree)


def render_catalog(entries: dict[str, dict[str, Any]]) -> bytes:
    """The file's bytes: a header line, then one line per document sorted by name (deterministic)."""
    lines = [json.dumps({"hti_catalog": CATALOG_FORMAT, "documents": len(entries)}, sort_keys=True,
                        separators=(",", ":"))]
    for doc in sorted(entries):
        lines.append(json.dumps(entries[doc], sort_keys=True, separators=(",", ":"), ensure_ascii=False))
    return ("\n".join(lines) + "\n").encode("utf-8")


def parse_catalog(data: bytes) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """(entries by doc, problems): lines that are not JSON objects with a doc, or repeat a doc
    (both copies are dropped: a union merge of two branches can leave two lines for one document)."""
    entries: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    repeated: set[str] = set()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return {}, ["catalog.jsonl is not valid UTF-8"]
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            problems.append(f"line {n} is not JSON")
            continue
        if not isinstance(row, dict):
            problems.append(f"line {n} is not an object")
            continue
        if "hti_catalog" in row:
            continue
        doc = row.get("doc")
        if not isinstance(doc, str) or not doc:
            problems.append(f"line {n} names no document")
            continue
        if doc in entries or doc in repeated:
            repeated.add(doc)
            entries.pop(doc, None)
            problems.append(f"line {n} repeats {doc}")
            continue
        entries[doc] = row
    return entries, problems


def read_catalog(snapshot: Snapshot) -> Catalog:
    """The documents at `snapshot`: catalogue entries whose folder tree id still matches, plus
    entries rebuilt from root pages for folders the catalogue misses or describes stale."""
    roots = snapshot.root_entries()
    catalog = Catalog()
    stored: dict[str, dict[str, Any]] = {}
    kind_sha = roots.get(CATALOG_FILE)
    if kind_sha is not None and kind_sha[0] == "blob":
        catalog.present = True
        stored, catalog.invalid = parse_catalog(snapshot.read_bytes(CATALOG_FILE))
    entries: dict[str, dict[str, Any]] = {}
    for name in sorted(roots):
        kind, sha = roots[name]
        if kind != "tree":
            continue
        entry = stored.get(name)
        if entry is not None and entry.get("tree") == sha:
            entries[name] = entry
            continue
        if snapshot.exists(f"{name}/{INDEX_FILE}") and snapshot.exists(f"{name}/{SOURCE_FILE}"):
            entries[name] = entry_from_snapshot(snapshot, name, sha)
            if catalog.present:
                catalog.rebuilt.append(name)
    catalog.dropped = sorted(d for d in stored if d not in entries)
    catalog.entries, catalog.stored = entries, stored
    return catalog


def updated_catalog(base: Snapshot, new: dict[str, dict[str, Any]], replaced: Iterable[str] = ()) -> bytes:
    """The catalogue after a commit onto `base`: its documents (repaired where stale), minus the
    `replaced` folders, plus the `new` entries."""
    entries = dict(read_catalog(base).entries) if base.commit is not None else {}
    for doc in replaced:
        entries.pop(doc, None)
    entries.update(new)
    return render_catalog(entries)
