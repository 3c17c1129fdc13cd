"""The catalogue: small files per revision listing every compiled document.

`catalog/XX.jsonl` at the repository root (XX: the first two hex digits of the SHA-256 of the
document's name, so at most 256 shards) holds one JSON line per document of that shard (sorted by
name, keys sorted, compact): name, title, one-line summary, top-level sections, counts, method,
model, source name and hash, schema and provenance hashes, token usage, routing terms, and the Git id
of the document's folder tree. `ls`, routing and `--doc` checks read these blobs (one `cat-file
--batch`) instead of N root pages.

Each compile rewrites only the shards of the documents it wrote, in the same commit as their pages
(store.commit's `derive`): a commit per document into a corpus of 10,000 rewrites about 40 lines,
not all 10,000 (one file was quadratic in writes and storage). Readers never trust a shard blindly:
the top-level tree (one object) gives every folder's tree id, so an entry whose `tree` differs (a
document edited, added or removed with plain Git, a merge, an older index without a catalogue) is
rebuilt from that document's root page; only those pages are read. `verify` checks every entry
against the root pages. An index from before shards (one `catalog.jsonl`) is read as it is, and its
next compile writes every shard and removes the old file.
"""

from __future__ import annotations

import hashlib
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

CATALOG_DIR = "catalog"
LEGACY_FILE = "catalog.jsonl"  # format 1: one file for every document (indexes compiled before shards)
CATALOG_FORMAT = 2
SHARD_DIGITS = 2  # hex digits of the name's hash naming its shard: 256 shards at most
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
    invalid: list[str] = field(default_factory=list)  # lines that did not parse, duplicates, misfiled
    legacy: bool = False  # read from the one catalog.jsonl of an index compiled before shards

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


def shard_path(doc: str) -> str:
    """The catalogue file that lists `doc`."""
    return f"{CATALOG_DIR}/{hashlib.sha256(doc.encode('utf-8')).hexdigest()[:SHARD_DIGITS]}.jsonl"


def render_catalog(entries: dict[str, dict[str, Any]]) -> bytes:
    """One shard's bytes: a header line, then one line per document sorted by name (deterministic)."""
    lines = [json.dumps({"hti_catalog": CATALOG_FORMAT, "documents": len(entries)}, sort_keys=True,
                        separators=(",", ":"))]
    for doc in sorted(entries):
        lines.append(json.dumps(entries[doc], sort_keys=True, separators=(",", ":"), ensure_ascii=False))
    return ("\n".join(lines) + "\n").encode("utf-8")


def render_shards(entries: dict[str, dict[str, Any]]) -> dict[str, bytes]:
    """Every shard of `entries`: path -> bytes."""
    shards: dict[str, dict[str, dict[str, Any]]] = {}
    for doc, entry in entries.items():
        shards.setdefault(shard_path(doc), {})[doc] = entry
    return {path: render_catalog(shards[path]) for path in sorted(shards)}


def parse_catalog(data: bytes, name: str = LEGACY_FILE) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """(entries by doc, problems) of one catalogue file: lines that are not JSON objects with a doc,
    or repeat a doc (both copies are dropped: a union merge of two branches can leave two lines for
    one document), or sit in another document's shard."""
    entries: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    repeated: set[str] = set()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return {}, [f"{name} is not valid UTF-8"]
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            problems.append(f"{name} line {n} is not JSON")
            continue
        if not isinstance(row, dict):
            problems.append(f"{name} line {n} is not an object")
            continue
        if "hti_catalog" in row:
            continue
        doc = row.get("doc")
        if not isinstance(doc, str) or not doc:
            problems.append(f"{name} line {n} names no document")
            continue
        if name != LEGACY_FILE and shard_path(doc) != name:
            problems.append(f"{name} line {n} lists {doc}, which belongs in {shard_path(doc)}")
            continue
        if doc in entries or doc in repeated:
            repeated.add(doc)
            entries.pop(doc, None)
            problems.append(f"{name} line {n} repeats {doc}")
            continue
        entries[doc] = row
    return entries, problems


def _stored(snapshot: Snapshot, roots: dict[str, tuple[str, str]], shards: set[str] | None,
            catalog: Catalog) -> dict[str, dict[str, Any]]:
    """The entries as written: the shards (only those in `shards`, when given, in one batch read),
    else the one file of an index from before shards."""
    files: list[tuple[str, bytes]] = []
    if roots.get(CATALOG_DIR, ("",))[0] == "tree":
        catalog.present = True
        shas = {p: sha for p, sha in snapshot.files(CATALOG_DIR).items()
                if p.endswith(".jsonl") and (shards is None or p in shards)}
        files = list(zip(shas, snapshot.read_blobs(list(shas.values()))))
    elif roots.get(LEGACY_FILE, ("",))[0] == "blob":
        catalog.present = catalog.legacy = True
        files = [(LEGACY_FILE, snapshot.read_bytes(LEGACY_FILE))]
    stored: dict[str, dict[str, Any]] = {}
    for name, data in files:
        entries, problems = parse_catalog(data, name)
        catalog.invalid += problems
        for doc, entry in entries.items():
            if doc in stored:  # a document in two files (a legacy file merged in by hand)
                catalog.invalid.append(f"{name} repeats {doc}")
                continue
            stored[doc] = entry
    return stored


def read_catalog(snapshot: Snapshot, shards: set[str] | None = None) -> Catalog:
    """The documents at `snapshot`: catalogue entries whose folder tree id still matches, plus
    entries rebuilt from root pages for folders the catalogue misses or describes stale. With
    `shards`, only the documents those shard files list (or should list)."""
    roots = snapshot.root_entries()
    catalog = Catalog()
    stored = _stored(snapshot, roots, shards, catalog)
    if shards is not None:
        stored = {d: e for d, e in stored.items() if shard_path(d) in shards}
    entries: dict[str, dict[str, Any]] = {}
    for name in sorted(roots):
        kind, sha = roots[name]
        if kind != "tree" or name == CATALOG_DIR or (shards is not None and shard_path(name) not in shards):
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


def is_document(snapshot: Snapshot, name: str) -> bool:
    """Whether the top-level folder `name` holds a compiled index, reading only its shard (not the
    whole catalogue: `--doc NAME` stays fast in a corpus of 10,000)."""
    kind = snapshot.root_entries().get(name, ("",))[0]
    return kind == "tree" and name != CATALOG_DIR and name in read_catalog(snapshot, {shard_path(name)}).entries


def updated_catalog(base: Snapshot, new: dict[str, dict[str, Any]],
                    replaced: Iterable[str] = ()) -> dict[str, bytes | None]:
    """The catalogue files to write in a commit onto `base` (None: remove the file): the shards of
    the `new` and `replaced` documents, with the base's other entries of those shards (repaired
    where stale). An index without shards gets every shard, and loses its one old file."""
    replaced = set(replaced) | set(new)
    roots = base.root_entries() if base.commit is not None else {}
    whole = roots.get(CATALOG_DIR, ("",))[0] != "tree"
    touched = None if whole else {shard_path(d) for d in replaced}
    entries = dict(read_catalog(base, touched).entries) if base.commit is not None else {}
    for doc in replaced:
        entries.pop(doc, None)
    entries.update(new)
    out: dict[str, bytes | None] = dict(render_shards(entries))
    for path in touched or ():
        out.setdefault(path, None)  # a shard left empty
    if whole and LEGACY_FILE in roots:
        out[LEGACY_FILE] = None
    return out
