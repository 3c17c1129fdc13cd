"""`hti-git mcp`: the index served to agents over the Model Context Protocol (stdio).

An agent (a coding assistant, a chat client with tools) walks the index itself: outline first,
open the likely branch, read the source lines a value cites, answer with the citation. No second
model and no API key are needed, and the agent reads a few pages instead of the whole document.

`IndexService` is the library half: plain methods that return bounded text and raise HtiError on a
bad argument. `build_server` wraps them as MCP tools and a resource template with the official SDK
(the optional extra `hti-git[mcp]`), turning every HtiError into an MCP error for that call.
Everything is read-only: pages come from Git objects at a revision (store.Snapshot), nothing is
written to the repository, the working tree or the response cache.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from hti_git.config import load_settings
from hti_git.errors import HtiError, UsageError
from hti_git.index.layout import INDEX_FILE, SCHEMA_FILE, SOURCE_FILE, render_subject
from hti_git.index.linemap import LineMap
from hti_git.index.tree import list_documents, requested_documents, source_page_starts
from hti_git.lexical import BM25, question_terms, terms
from hti_git.sources.passages import split_passages
from hti_git.store import IndexRepo, Snapshot
from hti_git.text import one_line
from hti_git.tokens import estimate_tokens

MAX_CHARS = 12_000  # default cap on one tool result (about 3,000 tokens)
HARD_MAX_CHARS = 40_000  # no argument raises a result above this
MAX_DEPTH = 6
MAX_OUTLINE_ROWS = 300
MAX_K = 20
MAX_SOURCE_LINES = 400
SUMMARY_CHARS = 160
SNIPPET_CHARS = 320
_SNAPSHOTS = 8  # revisions kept parsed at once
_REV_OK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/~^@{}+-]*$")
_CITE = re.compile(r"\(\[L(\d+)-L(\d+)\]\([^)]*source\.txt#L\d+-L\d+\)\)")

INSTRUCTIONS = """\
This server reads an hti-git index: long documents (contracts, filings) compiled into a tree of
small Markdown pages kept in Git, every value citing the lines of the document's source.txt it came
from. Read-only. Every tool takes `rev` (a commit, branch or tag; default HEAD).

How to answer a question about a document, reading as little as possible:
1. list_documents() -> the document names.
2. outline(doc) -> titles and one-line summaries of the tree, each with its page path. Pick the
   branch most likely to hold the answer (e.g. a clause heading, a party, a defined term).
3. read_page(path) -> that page: category pages list their children with summaries (open the best
   one); subject pages give values, each ending in a citation like (L21-L23).
4. read_source(doc, start_line, end_line) -> the exact text the citation points at. Answer from it
   and cite it as <doc>/source.txt#L21-L23.
If the outline shows no likely branch, search(query, doc) finds pages and source passages by
words. ask(question) runs hti-git's own navigation (offline, extractive) as a shortcut. If nothing
supports an answer, say it is not in the document rather than guessing."""


def _cut(text: str, limit: int) -> str:
    """The first `limit` characters of `text`, ending at a line break when one is near."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    nl = cut.rfind("\n")
    return cut[:nl] if nl > limit * 0.8 else cut


def _cap(text: str, limit: int, hint: str = "") -> str:
    """`text` cut to `limit` characters, saying so (and how to read on) when it was cut."""
    cut = _cut(text, limit)
    if cut == text:
        return text
    more = f"; {hint}" if hint else ""
    return f"{cut}\n[truncated: showed {len(cut):,} of {len(text):,} characters{more}]"


def _limit(max_chars: int | None) -> int:
    if max_chars is None:
        return MAX_CHARS
    if max_chars < 200 or max_chars > HARD_MAX_CHARS:
        raise UsageError(f"max_chars must be between 200 and {HARD_MAX_CHARS:,}")
    return max_chars


def _one_line(text: Any, limit: int = SUMMARY_CHARS) -> str:
    return one_line(text, limit)


def check_rev(rev: str) -> str:
    """A revision name as a commit-ish (branch, tag, sha, HEAD~2); never an option or a path."""
    rev = (rev or "HEAD").strip()
    if len(rev) > 200 or not _REV_OK.match(rev) or ".." in rev or rev.endswith(".lock"):
        raise UsageError(f"invalid revision {rev!r} (give a commit, branch or tag such as HEAD, main or HEAD~1)")
    return rev


def check_path(path: str) -> str:
    """A repository path as given by a client: relative, normalised, no '..', '.', '\\' or NUL."""
    if not isinstance(path, str) or not path.strip():
        raise UsageError("the path is empty")
    raw = path.strip()
    if raw.startswith(("/", "~")) or "\\" in raw or "\0" in raw or re.match(r"^[A-Za-z]:", raw):
        raise UsageError(f"refusing path {path!r}: give a path inside the index such as <doc>/index.md")
    parts = raw.rstrip("/").split("/")
    if any(p in ("", ".", "..") or p.lower() == ".git" for p in parts):
        raise UsageError(f"refusing path {path!r}: '..', '.', empty and .git segments are not allowed")
    return "/".join(parts)


class IndexService:
    """The read side of one index repository, as bounded text for an agent. Thread-safe."""

    def __init__(self, root: str | Path = "."):
        self.repo = IndexRepo(root)
        self.settings = load_settings(None if self.repo.bare else self.repo.root)
        self._lock = threading.RLock()  # GitPython objects are not safe across threads
        self._snapshots: OrderedDict[str, Snapshot] = OrderedDict()
        self._memo: dict[str, dict] = {}  # per commit: line maps

    def close(self) -> None:
        self.repo.close()

    # -- helpers -----------------------------------------------------------------------------------

    def snapshot(self, rev: str = "HEAD") -> Snapshot:
        """The snapshot `rev` names, cached by commit so pages are parsed once per revision."""
        rev = check_rev(rev)
        commit = self.repo.resolve(rev)
        if commit is None:
            raise UsageError("the repository has no commits yet; run 'hti-git compile FILE' first")
        snap = self._snapshots.get(commit.hexsha)
        if snap is None:
            snap = Snapshot(self.repo.repo, commit, rev, self.repo.objects)  # the repository's one reader
            self._snapshots[commit.hexsha] = snap
            while len(self._snapshots) > _SNAPSHOTS:
                old, _ = self._snapshots.popitem(last=False)
                self._memo.pop(old, None)
        self._snapshots.move_to_end(commit.hexsha)
        return snap

    def _doc(self, snap: Snapshot, doc: str | None) -> str:
        if not doc:
            docs = snap.docs()
            if len(docs) == 1:
                return docs[0]
            raise UsageError(f"name a document: there are {len(docs)} at {snap.rev} ({', '.join(docs) or 'none'})")
        _, chosen = requested_documents(snap, [doc.strip().rstrip("/")])
        return chosen[0]

    def _page_path(self, snap: Snapshot, path: str, doc: str | None = None) -> str:
        """The snapshot file a client's path names: a page (.md) or schema.yaml inside a compiled document.

        `path` is a repository path (<doc>/clauses/index.md), or relative to `doc` (clauses/index.md)
        as outline shows it; with a single document the doc may be left out.
        """
        path = check_path(path)
        docs = snap.docs()
        if path.partition("/")[0] not in docs and (doc or len(docs) == 1):
            path = f"{self._doc(snap, doc)}/{path}"
        doc, _, rest = path.partition("/")
        if doc not in docs:
            raise UsageError(f"no document {doc!r} at {snap.rev}: paths start with a document name "
                             f"({', '.join(snap.docs()) or 'none compiled'})")
        if not rest or snap.list_dir(path):  # a folder: its index page
            path = f"{path}/{INDEX_FILE}" if rest else f"{doc}/{INDEX_FILE}"
        if not (path.endswith(".md") or path == f"{doc}/{SCHEMA_FILE}"):
            hint = "; read source text with read_source" if path.endswith(SOURCE_FILE) else ""
            raise UsageError(f"{path!r} is not a page of the index (pages end in .md){hint}")
        if not snap.exists(path) or snap.list_dir(path):
            raise UsageError(f"no page {path!r} at {snap.rev}")
        return path

    # -- tools -------------------------------------------------------------------------------------

    def list_documents(self, rev: str = "HEAD") -> str:
        with self._lock:
            snap = self.snapshot(rev)
            rows = list_documents(snap)
            if not rows:
                return f"No documents compiled at {snap.rev} ({snap.sha[:10]})."
            out = [f"{len(rows)} document(s) at {snap.rev} ({snap.sha[:10]}):"]
            for r in rows:
                text = snap.read_text(f"{r['doc']}/{SOURCE_FILE}")
                pdf = f", {r['pdf_pages']} PDF pages" if r.get("pdf_pages") else ""
                out.append(f"- {r['doc']}: {_one_line(r['title'], 100)} — {r['pages']} index pages, "
                           f"method {r['method'] or '-'}; source {len(text):,} chars, {text.count(chr(10)) + 1:,} lines, "
                           f"~{estimate_tokens(text):,} tokens{pdf}")
            out.append("Next: outline(doc) to see its tree.")
            return _cap("\n".join(out), MAX_CHARS)

    def outline(self, doc: str | None = None, rev: str = "HEAD", depth: int = 2, under: str | None = None,
                max_chars: int | None = None) -> str:
        if not 1 <= depth <= MAX_DEPTH:
            raise UsageError(f"depth must be between 1 and {MAX_DEPTH}")
        limit = _limit(max_chars)
        with self._lock:
            snap = self.snapshot(rev)
            if under:
                start = self._page_path(snap, under, doc)
                doc = start.split("/", 1)[0]
            else:
                doc = self._doc(snap, doc)
                start = f"{doc}/{INDEX_FILE}"
            root = snap.page(start)
            n = len(doc) + 1
            out = [f"Outline of document {doc!r} at {snap.rev} ({snap.sha[:10]}), depth {depth}. Each line: "
                   f"title (subjects below) — summary [page path, relative to {doc}/]. "
                   f"Open one with read_page(path, doc={doc!r}).",
                   f"{root.title} — {_one_line(root.summary, 300)} [{start[n:]}]"]
            rows = 0
            seen = {start}

            def walk(page, level: int) -> None:
                nonlocal rows
                for child in page.links():
                    path = page.resolve(child["link"])
                    if path in seen or rows >= MAX_OUTLINE_ROWS:
                        continue
                    seen.add(path)
                    rows += 1
                    count = f" ({child['subjects']} subjects)" if child.get("subjects") else ""
                    out.append(f"{'  ' * level}- {child.get('title', '')}{count} — "
                               f"{_one_line(child.get('summary'))} [{path[n:]}]")
                    if level < depth and snap.exists(path):
                        walk(snap.page(path), level + 1)
                if page.meta.get("continued"):
                    cont = page.resolve(page.meta["continued"])
                    if cont not in seen and snap.exists(cont):
                        seen.add(cont)
                        walk(snap.page(cont), level)

            walk(root, 1)
            if rows >= MAX_OUTLINE_ROWS:
                out.append(f"[stopped at {MAX_OUTLINE_ROWS} entries: use outline(under=<page path>) for one branch]")
            return _cap("\n".join(out), limit, "lower depth, or outline(under=<page path>) for one branch")

    def read_page(self, path: str, rev: str = "HEAD", offset: int = 0, max_chars: int | None = None,
                  doc: str | None = None) -> str:
        limit = _limit(max_chars)
        if offset < 0:
            raise UsageError("offset must be 0 or more")
        with self._lock:
            snap = self.snapshot(rev)
            path = self._page_path(snap, path, doc)
            doc = path.split("/", 1)[0]
            if path.endswith(".md"):
                page = snap.page(path)
                head = (f"[{path} at {snap.rev}; kind {page.kind or '-'}; links are relative to this page; "
                        f"(Lx-Ly chars a-b) cites {doc}/source.txt: read_source({doc!r}, x, y, start_char=a, end_char=b)]\n")
                text = head + self._page_text(snap, doc, page)
            else:
                text = snap.read_text(path)
            if offset >= len(text) and offset:
                raise UsageError(f"offset {offset} is past the end of {path} ({len(text):,} characters)")
            part = _cut(text[offset:], limit)
            end = offset + len(part)
            head = f"[{path} from character {offset:,}]\n" if offset else ""
            note = (f"\n[truncated: showed characters {offset:,}-{end:,} of {len(text):,}; "
                    f"read on with read_page(path, offset={end})]") if end < len(text) else ""
            return head + part + note

    def _lines(self, snap: Snapshot, doc: str) -> LineMap:
        key = ("lines", doc)
        cache = self._memo.setdefault(snap.sha, {})
        if key not in cache:
            cache[key] = LineMap(snap.read_text(f"{doc}/{SOURCE_FILE}"), source_page_starts(snap, doc))
        return cache[key]

    def _collection(self, snap: Snapshot, docs: list[str]) -> tuple[list[tuple[str, str, str, int, int]], list[str], BM25]:
        """The BM25 collection `search` ranks for `docs` at this commit, built once: every page (title,
        summary, values) and every source passage, as (kind, doc, path, start, end), texts and model."""
        key = ("search", tuple(docs))
        cache = self._memo.setdefault(snap.sha, {})
        if key not in cache:
            items: list[tuple[str, str, str, int, int]] = []
            texts: list[str] = []
            for d in docs:
                for path in sorted(p for p in snap.blob_shas(d) if p.endswith(".md")):
                    page = snap.page(path)
                    values = [str(v.get("text", "")) for f in page.meta.get("fields", []) for v in f.get("values", [])]
                    items.append(("page", d, path, 0, 0))
                    texts.append(" ".join([page.title, page.title, page.summary, *values]))
                source = snap.read_text(f"{d}/{SOURCE_FILE}")
                for s, e in split_passages(source, 0, len(source)):
                    items.append(("source", d, f"{d}/{SOURCE_FILE}", s, e))
                    texts.append(source[s:e])
            cache[key] = (items, texts, BM25([terms(t) for t in texts]))
        return cache[key]

    def _page_text(self, snap: Snapshot, doc: str, page) -> str:
        """A page as an agent reads it: the body, with a subject's values citing lines and characters."""
        meta = page.meta
        if page.kind != "subject" or not meta.get("fields"):
            return _CITE.sub(lambda m: f"(L{m.group(1)}-L{m.group(2)})", page.body)
        return render_subject(page, self._lines(snap, doc), lambda s, e, a, b: f"L{a}-L{b} chars {s}-{e}",
                              lambda text: " ".join(str(text).split()))


    def read_source(self, doc: str, start_line: int, end_line: int | None = None, rev: str = "HEAD",
                    max_chars: int | None = None, start_char: int | None = None, end_char: int | None = None) -> str:
        limit = _limit(max_chars)
        with self._lock:
            snap = self.snapshot(rev)
            doc = self._doc(snap, doc)
            text = snap.read_text(f"{doc}/{SOURCE_FILE}")
            lm = self._lines(snap, doc)
            total = len(lm.starts)
            end_line = start_line if end_line is None else end_line
            if start_line < 1 or end_line < start_line or start_line > total:
                raise UsageError(f"lines must satisfy 1 <= start_line <= end_line <= {total:,} "
                                 f"({doc}/source.txt has {total:,} lines; asked {start_line}-{end_line})")
            end_line = min(end_line, total, start_line + MAX_SOURCE_LINES - 1)
            lo = lm.starts[start_line - 1]
            hi = lm.starts[end_line] - 1 if end_line < total else len(text)
            a, b = start_line, end_line
            if start_char is not None or end_char is not None:
                s0 = lo if start_char is None else start_char
                e0 = hi if end_char is None else end_char
                if not lo <= s0 < e0 <= hi:
                    raise UsageError(f"start_char/end_char must lie inside lines {start_line}-{end_line} "
                                     f"(characters {lo}-{hi}) with start_char < end_char")
                lo, hi = s0, e0
                a, b = lm.lines(lo, hi)
            pdf = lm.pages(lo, max(lo + 1, hi))
            where = f", PDF p. {', '.join(map(str, pdf))}" if pdf else ""
            head = (f"[{doc}/source.txt#L{a}-L{b} chars {lo}-{hi} at {snap.rev}{where}; "
                    f"the source has {total:,} lines, {len(text):,} chars]")
            body = []
            for n in range(a, b + 1):
                line_end = lm.starts[n] - 1 if n < total else len(text)
                body.append(f"L{n}: {text[max(lo, lm.starts[n - 1]):min(hi, line_end)]}")
            return _cap(head + "\n" + "\n".join(body), limit,
                        "ask for fewer lines, or narrow with start_char/end_char")

    def search(self, query: str, doc: str | None = None, rev: str = "HEAD", k: int = 5) -> str:
        if not 1 <= k <= MAX_K:
            raise UsageError(f"k must be between 1 and {MAX_K}")
        q = question_terms(query or "")
        if not q:
            raise UsageError("the query has no searchable words")
        with self._lock:
            snap = self.snapshot(rev)
            docs = [self._doc(snap, doc)] if doc else snap.docs()
            if not docs:
                raise UsageError(f"no compiled documents at {snap.rev}")
            items, texts, model = self._collection(snap, docs)
            scored = sorted(((model.score(q, i), i) for i in range(len(items))), key=lambda x: (-x[0], x[1]))
            hits = [(s, i) for s, i in scored if s > 0][:k]
            if not hits:
                return f"No page or source passage matches {query!r} at {snap.rev}."
            out = [f"{len(hits)} best matches for {query!r} at {snap.rev} (BM25 over index pages and source passages):"]
            maps: dict[str, LineMap] = {}
            for rank, (score, i) in enumerate(hits, 1):
                kind, d, path, s, e = items[i]
                if kind == "page":
                    page = snap.page(path)
                    out.append(f"{rank}. page {path} (score {score:.1f}): {page.title} — {_one_line(page.summary, SNIPPET_CHARS)}")
                else:
                    lm = maps.setdefault(d, LineMap(snap.read_text(f"{d}/{SOURCE_FILE}")))
                    a, b = lm.lines(s, e)
                    out.append(f"{rank}. source {d}/source.txt#L{a}-L{b} chars {s}-{e} (score {score:.1f}): "
                               f"{_one_line(texts[i], SNIPPET_CHARS)}")
            return _cap("\n".join(out), MAX_CHARS)

    def ask(self, question: str, doc: str | None = None, rev: str = "HEAD", method: str = "fast") -> str:
        from hti_git.query.ask import ask_question

        if method not in ("fast", "llm", "auto"):
            raise UsageError(f"method must be fast, llm or auto, not {method!r}")
        with self._lock:
            snap = self.snapshot(rev)
            docs = [self._doc(snap, doc)] if doc else None
            # no_cache: a read-only server writes nothing, not even the response cache.
            answer = ask_question(self.repo, self.settings, question, rev=snap.sha, docs=docs, method=method,
                                  no_cache=True)
        out = [answer.answer if answer.found else "Not found in the index or the source."]
        if answer.citations:
            out.append("")
            out.append("Citations (fallback: read from source.txt):" if answer.fallback else "Citations:")
            for i, c in enumerate(answer.citations, 1):
                out.append(f"[{i}] {c.page}  {c.source_link}  (chars {c.start}-{c.end})")
        u = answer.usage
        out.append(f"\n(method {answer.method}, {u['calls']} model calls, at {rev} {snap.sha[:10]})")
        return _cap("\n".join(out), MAX_CHARS)

    def diff(self, a: str, b: str = "HEAD", doc: str | None = None, max_chars: int | None = None) -> str:
        from hti_git.review.diff import diff_revisions
        from hti_git.review.render import render_text

        limit = _limit(max_chars)
        with self._lock:
            a, b = check_rev(a), check_rev(b)
            self.snapshot(a), self.snapshot(b)  # unknown revisions fail here, with a clear message
            result = diff_revisions(self.repo, a, b, doc)
        text = render_text(result, color=False, limit=25) or f"No index changes between {a} and {b}."
        return _cap(text, limit, "pass doc=<name> for one document")

    def resource(self, rev: str, path: str) -> str:
        """A page as the resource hti://<rev>/<path>: its Markdown body."""
        with self._lock:
            snap = self.snapshot(rev)
            path = self._page_path(snap, path)
            text = snap.page(path).body if path.endswith(".md") else snap.read_text(path)
        return _cap(text, HARD_MAX_CHARS, "use the read_page tool with offset")


# -- the MCP server ----------------------------------------------------------------------------------

TOOL_DOCS = {
    "list_documents": "List the documents compiled in this index at a revision (default HEAD), with the size "
                      "of each source in characters, lines and estimated tokens. Start here, then outline(doc).",
    "outline": "Titles and one-line summaries of a document's index tree, each with its page path: the map "
               "to navigate by. Call this before reading anything. depth (1-6, default 2) is how many levels "
               "below the root to show; under=<page path> outlines one branch only. Then read_page the "
               "branch most likely to hold the answer.",
    "read_page": "Read one index page by its path as outline shows it (relative to the document: pass doc too) "
                 "or as a repository path <doc>/clauses/index.md. Category pages list children with summaries: open the best one. "
                 "Subject pages give values, each ending in a citation (Lx-Ly) of the document's source.txt: "
                 "pass those lines to read_source to read the exact text, and cite it in the answer. Long pages "
                 "are cut; the note says which offset reads on.",
    "read_source": "The exact text of lines start_line..end_line (1-based, inclusive) of a document's "
                   "source.txt: what a citation (Lx-Ly) points at. Lines can be long paragraphs: pass the "
                   "citation's chars a-b as start_char/end_char to read just that span. Read it before "
                   "answering and cite <doc>/source.txt#Lx-Ly. At most 400 lines and max_chars characters per call.",
    "search": "Lexical (BM25) search over a document's index pages and source passages, for when the outline "
              "shows no likely branch. Returns the k best (1-20, default 5) as page paths (read_page) or "
              "source line ranges (read_source), with a snippet each. Omit doc to search every document.",
    "ask": "hti-git's own navigation answers a question: method fast (default; offline, extractive: it "
           "returns the best-supported passages, not a composed answer) or llm (the configured model). "
           "Returns the answer and its citations; verify them with read_source before relying on them.",
    "diff": "Semantic summary of how the index changed between revisions a and b (default HEAD): documents "
            "added/removed/recompiled, subjects added, removed, renamed or changed, summaries that moved.",
}


def build_server(root: str | Path = "."):
    """An MCP server (official SDK) over the index repository at `root`; every tool read-only."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ResourceError, ToolError
        from mcp.types import ToolAnnotations
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise UsageError("hti-git mcp needs the MCP SDK: pip install 'hti-git[mcp]'") from exc

    from hti_git import __version__

    service = IndexService(root)
    server = MCPServer("hti-git", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

    def call(fn, *args, **kwargs) -> str:
        try:
            return fn(*args, **kwargs)
        except HtiError as exc:
            raise ToolError(str(exc)) from None

    @server.tool(description=TOOL_DOCS["list_documents"], annotations=read_only, structured_output=False)
    def list_documents(rev: str = "HEAD") -> str:  # noqa: F811 - the tool's name is the function's
        return call(service.list_documents, rev)

    @server.tool(description=TOOL_DOCS["outline"], annotations=read_only, structured_output=False)
    def outline(doc: str | None = None, rev: str = "HEAD", depth: int = 2, under: str | None = None,
                max_chars: int | None = None) -> str:
        return call(service.outline, doc, rev, depth, under, max_chars)

    @server.tool(description=TOOL_DOCS["read_page"], annotations=read_only, structured_output=False)
    def read_page(path: str, doc: str | None = None, rev: str = "HEAD", offset: int = 0,
                  max_chars: int | None = None) -> str:
        return call(service.read_page, path, rev, offset, max_chars, doc)

    @server.tool(description=TOOL_DOCS["read_source"], annotations=read_only, structured_output=False)
    def read_source(doc: str, start_line: int, end_line: int | None = None, start_char: int | None = None,
                    end_char: int | None = None, rev: str = "HEAD", max_chars: int | None = None) -> str:
        return call(service.read_source, doc, start_line, end_line, rev, max_chars, start_char, end_char)

    @server.tool(description=TOOL_DOCS["search"], annotations=read_only, structured_output=False)
    def search(query: str, doc: str | None = None, rev: str = "HEAD", k: int = 5) -> str:
        return call(service.search, query, doc, rev, k)

    @server.tool(description=TOOL_DOCS["ask"], annotations=read_only, structured_output=False)
    def ask(question: str, doc: str | None = None, rev: str = "HEAD", method: str = "fast") -> str:
        return call(service.ask, question, doc, rev, method)

    @server.tool(description=TOOL_DOCS["diff"], annotations=read_only, structured_output=False)
    def diff(a: str, b: str = "HEAD", doc: str | None = None, max_chars: int | None = None) -> str:
        return call(service.diff, a, b, doc, max_chars)

    @server.resource("hti://{rev}/{+path}", name="page", mime_type="text/markdown",
                     description="An index page at a revision: hti://HEAD/<doc>/index.md, "
                                 "hti://main/<doc>/clauses/index.md (a rev with '/' is percent-encoded).")
    def page(rev: str, path: str) -> str:
        try:
            return service.resource(rev, path)
        except HtiError as exc:
            raise ResourceError(str(exc)) from None

    server.hti_service = service  # for tests and for closing
    return server


def serve(root: str | Path = ".") -> None:
    """Run the server on stdin/stdout until the client disconnects."""
    server = build_server(root)
    try:
        server.run("stdio")
    finally:
        server.hti_service.close()
