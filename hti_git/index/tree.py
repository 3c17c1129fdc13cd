"""Read-side helpers over a snapshot: the documents it holds and the tree of their pages."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

from hti_git.errors import UsageError
from hti_git.index.catalog import is_document
from hti_git.index.layout import INDEX_FILE

if TYPE_CHECKING:
    from hti_git.store import Snapshot


def requested_documents(snapshot: Snapshot, docs: list[str] | None) -> tuple[list[str], list[str] | None]:
    """(the documents routing may choose from, the ones asked for or None when routing must choose).

    Raises UsageError when there is nothing compiled or a requested document does not exist.
    Reads the catalogue only (no page); documents named exactly, only their shards.
    """
    if docs and all(is_document(snapshot, d) for d in docs):
        chosen = list(dict.fromkeys(docs))
        return chosen, chosen
    available = snapshot.docs()
    if not available:
        raise UsageError(f"no compiled documents at {snapshot.rev}; run 'hti-git compile FILE' first")
    if not docs:
        return available, (available if len(available) == 1 else None)
    known = set(available)
    chosen = []
    for d in docs:
        matches = [d] if d in known else [a for a in available if a.startswith(d)]
        if len(matches) > 1:
            raise UsageError(f"document prefix {d!r} is ambiguous at {snapshot.rev} "
                             f"(matches {len(matches):,}: {some_names(matches)})")
        if not matches:
            raise UsageError(unknown_document(d, available, snapshot.rev))
        if matches[0] not in chosen:
            chosen.append(matches[0])
    return available, chosen


NAMES_SHOWN = 5


def unknown_document(name: str, available: list[str], rev: str) -> str:
    """'no document X at REV': the closest name ("did you mean"), and a few names, never all of them."""
    message = f"no document {name!r} at {rev}"
    prefixed = [d for d in available if d.startswith(name)] if name else []
    close = prefixed[:1] or difflib.get_close_matches(name, available, n=1, cutoff=0.5)
    if close:
        message += f"; did you mean {close[0]!r}?"
    shown = ", ".join(available[:NAMES_SHOWN])
    more = f" and {len(available) - NAMES_SHOWN:,} more (hti-git ls)" if len(available) > NAMES_SHOWN else ""
    return f"{message} (have {len(available):,}: {shown}{more})"


def source_page_starts(snapshot: Snapshot, doc: str) -> tuple[int, ...]:
    """Where each PDF page of `doc`'s source.txt starts (from the root provenance); () for other formats."""
    prov = snapshot.page(f"{doc}/{INDEX_FILE}").meta.get("provenance") or {}
    return tuple(int(x) for x in (prov.get("source") or {}).get("page_starts") or ())


def list_documents(snapshot: Snapshot) -> list[dict[str, Any]]:
    """One row per compiled document: name, title, pages, method, model, source name and sha.

    Read from the catalogue (one blob); only documents it misses or describes stale are read from
    their root pages (index/catalog.py).
    """
    rows = []
    for doc, entry in snapshot.catalog().entries.items():
        rows.append(
            {
                "doc": doc,
                "title": entry.get("title"),
                "summary": entry.get("summary"),
                "pages": entry.get("pages"),
                "method": entry.get("method"),
                "model": entry.get("model"),
                "source": entry.get("source"),
                "source_sha256": entry.get("source_sha256"),
                "chars": entry.get("chars"),
                "pdf_pages": entry.get("pdf_pages"),
                "usage": entry.get("usage") or {},
            }
        )
    return rows


def page_tree(snapshot: Snapshot, doc: str) -> list[dict[str, Any]]:
    """Pages of `doc` depth-first in link order: depth, path, kind, title."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()

    def visit(path: str, depth: int) -> None:
        if path in seen or not snapshot.exists(path):
            return
        seen.add(path)
        page = snapshot.page(path)
        out.append({"depth": depth, "path": path, "kind": page.kind, "title": page.title})
        for child in page.links():
            visit(page.resolve(child["link"]), depth + 1)
        if page.meta.get("continued"):
            visit(page.resolve(page.meta["continued"]), depth)

    visit(f"{doc}/{INDEX_FILE}", 0)
    return out


def resolve_document(snapshot: Snapshot, name: str) -> str:
    """A document named exactly or by a unique prefix; UsageError with the closest names otherwise."""
    name = name.strip().strip("/")
    if is_document(snapshot, name):
        return name
    docs = snapshot.docs()
    if name in set(docs):
        return name
    matches = [d for d in docs if d.startswith(name)] if name else []
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise UsageError(f"{name!r} matches {len(matches):,} documents: {some_names(matches)}")
    raise UsageError(unknown_document(name, docs, snapshot.rev))


def resolve_page_path(snapshot: Snapshot, path: str) -> str:
    """A page path as typed by a user: exact, a doc folder, or a unique prefix of a doc name."""
    path = path.strip().lstrip("./").rstrip("/")
    if snapshot.exists(path) and not path.endswith("/") and snapshot.list_dir(path) == []:
        return path
    head, _, rest = path.partition("/")
    if not is_document(snapshot, head) and head not in (docs := snapshot.docs()):
        matches = [d for d in docs if d.startswith(head.rstrip("."))]
        if len(matches) == 1:
            head = matches[0]
        elif len(matches) > 1:
            raise UsageError(f"{path!r} matches {len(matches):,} documents: {some_names(matches)}")
        elif not rest:
            raise UsageError(unknown_document(head, docs, snapshot.rev))
    candidate = f"{head}/{rest}" if rest else f"{head}/{INDEX_FILE}"
    if snapshot.exists(candidate) and snapshot.list_dir(candidate) == []:
        return candidate
    if snapshot.exists(f"{candidate}/{INDEX_FILE}"):
        return f"{candidate}/{INDEX_FILE}"
    raise UsageError(f"no page {path!r} at {snapshot.rev}")


def some_names(names: list[str]) -> str:
    """The first NAMES_SHOWN names, and how many more: error messages stay one short line."""
    more = f" and {len(names) - NAMES_SHOWN:,} more" if len(names) > NAMES_SHOWN else ""
    return ", ".join(names[:NAMES_SHOWN]) + more
