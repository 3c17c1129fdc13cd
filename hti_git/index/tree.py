"""Read-side helpers over a snapshot: the documents it holds and the tree of their pages."""

from __future__ import annotations

from typing import Any

from hti_git.errors import UsageError
from hti_git.index.layout import INDEX_FILE
from hti_git.store import Snapshot


def requested_documents(snapshot: Snapshot, docs: list[str] | None) -> tuple[list[str], list[str] | None]:
    """(every document at the revision, the ones asked for or None when routing must choose).

    Raises UsageError when there is nothing compiled or a requested document does not exist.
    """
    available = snapshot.docs()
    if not available:
        raise UsageError(f"no compiled documents at {snapshot.rev}; run 'hti-git compile FILE' first")
    if not docs:
        return available, (available if len(available) == 1 else None)
    chosen = []
    for d in docs:
        matches = [d] if d in available else [a for a in available if a.startswith(d)]
        if len(matches) > 1:
            raise UsageError(f"document prefix {d!r} is ambiguous at {snapshot.rev} (matches: {', '.join(matches)})")
        if not matches:
            raise UsageError(f"no document named {d!r} at {snapshot.rev} (have: {', '.join(available)})")
        if matches[0] not in chosen:
            chosen.append(matches[0])
    return available, chosen


def source_page_starts(snapshot: Snapshot, doc: str) -> tuple[int, ...]:
    """Where each PDF page of `doc`'s source.txt starts (from the root provenance); () for other formats."""
    prov = snapshot.page(f"{doc}/{INDEX_FILE}").meta.get("provenance") or {}
    return tuple(int(x) for x in (prov.get("source") or {}).get("page_starts") or ())


def list_documents(snapshot: Snapshot) -> list[dict[str, Any]]:
    """One row per compiled document: name, title, pages, method, model, source name and sha."""
    rows = []
    for doc in snapshot.docs():
        root = snapshot.page(f"{doc}/{INDEX_FILE}")
        prov = root.meta.get("provenance") or {}
        source = prov.get("source") or {}
        pages = [p for p in snapshot.blob_shas(doc) if p.endswith(".md")]
        rows.append(
            {
                "doc": doc,
                "title": root.title,
                "pages": len(pages),
                "method": prov.get("method"),
                "model": (prov.get("model") or {}).get("name"),
                "source": source.get("name"),
                "source_sha256": source.get("sha256"),
                "chars": source.get("chars"),
                "pdf_pages": source.get("pages"),
                "usage": prov.get("usage") or {},
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


def resolve_page_path(snapshot: Snapshot, path: str) -> str:
    """A page path as typed by a user: exact, a doc folder, or a unique prefix of a doc name."""
    path = path.strip().lstrip("./").rstrip("/")
    if snapshot.exists(path) and not path.endswith("/") and snapshot.list_dir(path) == []:
        return path
    head, _, rest = path.partition("/")
    docs = snapshot.docs()
    if head not in docs:
        matches = [d for d in docs if d.startswith(head.rstrip("."))]
        if len(matches) == 1:
            head = matches[0]
        elif len(matches) > 1:
            raise UsageError(f"{path!r} matches several documents: {', '.join(matches)}")
    candidate = f"{head}/{rest}" if rest else f"{head}/{INDEX_FILE}"
    if snapshot.exists(candidate) and snapshot.list_dir(candidate) == []:
        return candidate
    if snapshot.exists(f"{candidate}/{INDEX_FILE}"):
        return f"{candidate}/{INDEX_FILE}"
    raise UsageError(f"no page {path!r} at {snapshot.rev}")
