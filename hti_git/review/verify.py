"""verify: check that an index at one revision is internally true.

For each document: every evidence span lies inside `source.txt` and the value's text is found at
it (whitespace-normalised: the text equals, or lies within, the text of its spans joined; values
flagged `unverified` are skipped but counted); the root page's
hashes match `source.txt` and `schema.yaml`; every link (front-matter and body) resolves; every
page body fits the layout's page budget (with 1.5x slack, since a single value is never cut).
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import posixpath
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

from ruamel.yaml.error import YAMLError

from hti_git.errors import PageFormatError, UsageError
from hti_git.index.catalog import CATALOG_DIR, LEGACY_FILE, entry_from_snapshot, make_entry, shard_path
from hti_git.index.layout import INDEX_FILE, SCHEMA_FILE, SOURCE_FILE
from hti_git.index.page import Page, load_yaml, parse_page
from hti_git.store import IndexRepo, Snapshot
from hti_git.text import canonical_sha256
from hti_git.tokens import estimate_tokens

BUDGET_TOLERANCE = 1.5
_BODY_LINK = re.compile(r"\]\(([^)\s]+)\)")
_LINE_ANCHOR = re.compile(r"^L(\d+)(?:-L(\d+))?$")
_SCHEMA_ENVELOPE = ("hti", "method")  # keys schema.yaml carries besides the hashed schema


@dataclass(frozen=True)
class Problem:
    """One thing that is not true about the index: the page, which check failed, and where."""

    page: str
    check: str  # span | quote | source-hash | schema-hash | link | budget | format | missing | catalog
    message: str
    where: str = ""

    def line(self) -> str:
        return f"{self.page}: {self.check}: {self.message}" + (f" [{self.where}]" if self.where else "")


@dataclass
class VerifyReport:
    """What verify looked at and what it found."""

    rev: str
    commit: str | None
    docs: list[str] = field(default_factory=list)
    pages: int = 0
    values: int = 0
    spans: int = 0
    unverified_skipped: int = 0
    links: int = 0
    problems: list[Problem] = field(default_factory=list)
    catalog: str = "absent"  # current | stale | absent (an index compiled before catalogues)
    since: str | None = None  # only documents changed since this revision were checked
    workers: int = 1  # processes that checked documents

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["ok"] = self.ok
        return data


PARALLEL_MIN_DOCS = 16  # fewer documents are checked in this process (starting workers costs ~0.5 s)


def verify_snapshot(snapshot: Snapshot, docs: list[str] | None = None) -> VerifyReport:
    """Check every document (or only `docs`) of `snapshot` and the catalogue; problems are
    collected, never raised."""
    report = _new_report(snapshot, docs)
    entries = {doc: _DocChecker(snapshot, doc, report).run() for doc in report.docs}
    check_catalog(snapshot, report.docs, report, entries)
    return report


def verify_revision(repo: IndexRepo, rev: str = "HEAD", docs: list[str] | None = None, since: str | None = None,
                    jobs: int | None = None) -> VerifyReport:
    """verify at `rev`: every document (or `docs`, or those changed since `since`), in `jobs`
    worker processes when there are many (default: one per core)."""
    snapshot = repo.snapshot(rev)
    if since is not None:
        present = set(snapshot.docs())
        changed = {path.partition("/")[0] for _, path in repo.changed_paths(since, rev) if "/" in path}
        chosen = sorted(d for d in changed if d in present and (not docs or d in docs))
        report = _new_report(snapshot, docs)
        report.docs, report.since = chosen, since
    else:
        report = _new_report(snapshot, docs)
    jobs = max(1, jobs if jobs is not None else (os.cpu_count() or 1))
    workers = min(jobs, len(report.docs) // (PARALLEL_MIN_DOCS // 2) or 1)
    entries: dict[str, dict[str, Any]] = {}
    if workers <= 1 or len(report.docs) < PARALLEL_MIN_DOCS or snapshot.sha is None:
        for doc in report.docs:
            entries[doc] = _DocChecker(snapshot, doc, report).run()
    else:
        report.workers = workers
        chunks = [report.docs[i::workers] for i in range(workers)]
        ctx = multiprocessing.get_context("spawn")  # never fork a process running GitPython's readers
        with ProcessPoolExecutor(workers, mp_context=ctx) as pool:
            parts = list(pool.map(_verify_chunk, [str(repo.git_dir)] * workers, [snapshot.sha] * workers,
                                  [rev] * workers, chunks))
        by_doc = {doc: (part, entry) for chunk in parts for doc, part, entry in chunk}
        for doc in report.docs:  # merged in document order: the same report as one process gives
            part, entries[doc] = by_doc[doc]
            for key in ("pages", "values", "spans", "unverified_skipped", "links"):
                setattr(report, key, getattr(report, key) + getattr(part, key))
            report.problems += part.problems
    check_catalog(snapshot, report.docs, report, entries)
    return report


def _verify_chunk(git_dir: str, sha: str, rev: str, docs: list[str]) -> list[tuple[str, VerifyReport, dict[str, Any]]]:
    """A worker process: check `docs` at commit `sha`: a report and the catalogue entry per document."""
    with IndexRepo(git_dir) as repo:
        snapshot = repo.snapshot(sha)
        snapshot.rev = rev
        out = []
        for doc in docs:
            part = VerifyReport(rev=rev, commit=sha, docs=[doc])
            entry = _DocChecker(snapshot, doc, part).run()
            out.append((doc, part, entry))
        return out


def _new_report(snapshot: Snapshot, docs: list[str] | None) -> VerifyReport:
    present = snapshot.docs()
    if docs:
        known = set(present)
        missing = [d for d in docs if d not in known]
        if missing:
            from hti_git.index.tree import unknown_document

            raise UsageError(unknown_document(missing[0], present, snapshot.rev))
    return VerifyReport(rev=snapshot.rev, commit=snapshot.sha, docs=list(docs or present))


def check_catalog(snapshot: Snapshot, docs: list[str], report: VerifyReport,
                  rebuilt: dict[str, dict[str, Any]] | None = None) -> None:
    """The catalogue lists exactly the documents at the revision, and each checked document's entry
    says what its root page says. Absent (an index compiled before catalogues) is not a problem, nor
    is an entry whose folder was edited by hand without changing what it says (its tree id is out
    of date: readers then read that root page; the next compile refreshes it). `rebuilt`: the
    entries the document checks already made from the root pages they read (else read here)."""
    catalog = snapshot.catalog()
    if not catalog.present:
        report.catalog = "absent"
        return
    before = len(report.problems)

    def where(doc: str | None = None) -> str:
        return LEGACY_FILE if catalog.legacy else shard_path(doc) if doc else CATALOG_DIR

    for message in catalog.invalid:
        report.problems.append(Problem(where(), "catalog", message))
    for doc in catalog.dropped:
        report.problems.append(Problem(where(doc), "catalog", f"lists {doc}, which is not an index at this revision"))
    roots = snapshot.root_entries()
    for doc in docs:
        stored = catalog.stored.get(doc)
        if stored is None:
            if not any(doc in m for m in catalog.invalid):
                report.problems.append(Problem(where(doc), "catalog", f"{doc} is not listed"))
            continue
        if doc in catalog.rebuilt:
            expected = catalog.entries[doc]
        elif rebuilt is not None and doc in rebuilt:
            expected = rebuilt[doc]
        else:
            expected = entry_from_snapshot(snapshot, doc, roots[doc][1])
        wrong = sorted(k for k in set(stored) | set(expected) if k != "tree" and stored.get(k) != expected.get(k))
        if wrong:
            report.problems.append(Problem(where(doc), "catalog", f"entry for {doc} does not match its root page",
                                           ", ".join(wrong)))
    if len(report.problems) > before:
        report.catalog = "stale"
    elif catalog.rebuilt:
        report.catalog = f"current ({len(catalog.rebuilt)} edited by hand since)"
    else:
        report.catalog = "current"


@lru_cache(maxsize=4096)
def _resolve(folder: str, link: str) -> str:
    """Page.resolve for a page in `folder`; the same few links recur on every page of a folder."""
    return posixpath.normpath(posixpath.join(folder, link.split("#", 1)[0]))


def _norm(text: str) -> str:
    return " ".join(text.split())


class _DocChecker:
    """Checks one document: its files listed and read in bulk (one request for all its blobs), each
    parsed once, nothing kept in the snapshot's caches (a worker checks thousands of documents)."""

    def __init__(self, snapshot: Snapshot, doc: str, report: VerifyReport):
        self.snapshot = snapshot
        self.doc = doc
        self.report = report
        self.shas = snapshot.files(doc)
        self.paths = set(self.shas)
        self.data: dict[str, bytes] = {}
        self.source: str | None = None
        self.source_lines = 0
        self.budget: int | None = None

    def problem(self, page: str, check: str, message: str, where: str = "") -> None:
        self.report.problems.append(Problem(page, check, message, where))

    def run(self) -> dict[str, Any]:
        """Check the document; returns its catalogue entry rebuilt from the root page read."""
        source_path = f"{self.doc}/{SOURCE_FILE}"
        root_path = f"{self.doc}/{INDEX_FILE}"
        self.data = dict(zip(self.shas, self.snapshot.read_blobs(list(self.shas.values()))))
        if source_path in self.paths:
            raw = self.data[source_path]
            try:
                self.source = raw.decode("utf-8")
            except UnicodeDecodeError:
                self.problem(source_path, "format", "source.txt is not valid UTF-8")
            else:
                self.source_lines = self.source.count("\n") + (0 if self.source.endswith("\n") else 1)
        else:
            self.problem(source_path, "missing", "the document has no source.txt")
        root = self._page(root_path)
        if root is not None:
            self.check_root(root, raw if self.source is not None else None)
        for path in sorted(self.paths):
            if not path.endswith(".md"):
                continue
            page = root if path == root_path else self._page(path)
            if page is None:
                continue
            self.report.pages += 1
            self.check_links(page)
            self.check_values(page)
            self.check_budget(page)
        entry_root = root if root is not None else Page(root_path)
        tree = self.snapshot.root_entries().get(self.doc, ("", ""))[1]
        entry = make_entry(self.doc, entry_root, [p[len(self.doc) + 1:] for p in self.shas], tree)
        self.data = {}
        return entry

    def _page(self, path: str) -> Page | None:
        if path not in self.paths:
            self.problem(path, "missing", "page does not exist")
            return None
        try:
            return parse_page(path, self.data[path])
        except (PageFormatError, UnicodeDecodeError) as exc:
            self.problem(path, "format", str(exc).removeprefix(f"{path}: "))
            return None

    def check_root(self, root: Page, source_bytes: bytes | None) -> None:
        prov = root.meta.get("provenance") or {}
        if not prov:
            self.problem(root.path, "format", "root page has no provenance")
            return
        budget = (prov.get("layout") or {}).get("page_budget")
        self.budget = int(budget) if isinstance(budget, (int, float)) and budget > 0 else None
        recorded = (prov.get("source") or {}).get("sha256")
        if source_bytes is not None:
            actual = "sha256:" + hashlib.sha256(source_bytes).hexdigest()
            if recorded != actual:
                self.problem(root.path, "source-hash", "source.txt does not match provenance.source.sha256",
                             f"recorded {_short(recorded)}, source.txt is {_short(actual)}")
        schema_path = f"{self.doc}/{SCHEMA_FILE}"
        recorded_schema = prov.get("schema_sha256")
        if schema_path not in self.paths:
            self.problem(schema_path, "missing", "the document has no schema.yaml")
            return
        try:
            text = self.data[schema_path].decode("utf-8")
            schema = load_yaml(text) or {}
        except (YAMLError, UnicodeDecodeError) as exc:
            self.problem(schema_path, "format", f"invalid YAML ({str(exc).splitlines()[0]})")
            return
        if not isinstance(schema, dict):
            self.problem(schema_path, "format", "schema.yaml must be a mapping")
            return
        actual_schema = canonical_sha256({k: v for k, v in schema.items() if k not in _SCHEMA_ENVELOPE})
        if recorded_schema != actual_schema:
            self.problem(root.path, "schema-hash", "schema.yaml does not match provenance.schema_sha256",
                         f"recorded {_short(recorded_schema)}, schema.yaml is {_short(actual_schema)}")

    def check_links(self, page: Page) -> None:
        targets: list[tuple[str, str]] = []
        for i, child in enumerate(page.links()):
            link = child.get("link") if isinstance(child, dict) else None
            if not link:
                self.problem(page.path, "link", "child entry without a link", f"children[{i}]")
                continue
            targets.append((str(link), f"children[{i}]"))
        for key in ("parent", "continued", "continues"):
            if page.meta.get(key):
                targets.append((str(page.meta[key]), key))
        for match in _BODY_LINK.finditer(page.body):
            targets.append((match.group(1), "body"))
        folder = posixpath.dirname(page.path)
        for link, where in targets:
            if "://" in link or link.startswith(("mailto:", "#")):
                continue
            self.report.links += 1
            target = _resolve(folder, link)
            if target.startswith("../") or target.startswith("/") or not self._exists(target):
                self.problem(page.path, "link", f"link {link!r} does not resolve", where)
                continue
            anchor = link.partition("#")[2]
            if anchor and posixpath.basename(target) == SOURCE_FILE and self.source is not None:
                self._check_anchor(page, link, anchor, where)

    def _exists(self, path: str) -> bool:
        return path in self.paths or (not path.startswith(self.doc + "/") and self.snapshot.exists(path))

    def _check_anchor(self, page: Page, link: str, anchor: str, where: str) -> None:
        match = _LINE_ANCHOR.match(anchor)
        if not match:
            return
        first, last = int(match.group(1)), int(match.group(2) or match.group(1))
        if not 1 <= first <= last <= max(self.source_lines, 1):
            self.problem(page.path, "link", f"link {link!r} points past the end of source.txt "
                         f"({self.source_lines} lines)", where)

    def check_values(self, page: Page) -> None:
        fields = page.meta.get("fields") or []
        for fld in fields:
            name = fld.get("name", "?") if isinstance(fld, dict) else "?"
            for i, value in enumerate((fld.get("values") or []) if isinstance(fld, dict) else []):
                self.report.values += 1
                where = f"field {name!r} value {i + 1}"
                if not isinstance(value, dict):
                    self.problem(page.path, "format", "value is not a mapping", where)
                    continue
                if value.get("unverified"):
                    self.report.unverified_skipped += 1
                    continue
                self._check_value(page, value, where)

    def _check_value(self, page: Page, value: dict[str, Any], where: str) -> None:
        spans = value.get("spans") or []
        if not spans or self.source is None:
            return
        size = len(self.source)
        pieces = []
        for span in spans:
            self.report.spans += 1
            ok = (isinstance(span, (list, tuple)) and len(span) == 2
                  and all(isinstance(x, int) for x in span) and 0 <= span[0] <= span[1] <= size)
            if not ok:
                self.problem(page.path, "span", f"span {_span(span)} is outside source.txt (0-{size})", where)
                return
            pieces.append(self.source[span[0]: span[1]])
        text = _norm(str(value.get("text", "")))
        evidence = _norm(" ".join(pieces))
        if text and text not in evidence:
            self.problem(page.path, "quote", f"text {_clip(text)!r} is not at {_span(spans)} "
                         f"(source.txt there: {_clip(evidence)!r})", where)

    def check_budget(self, page: Page) -> None:
        if self.budget is None:
            return
        tokens = estimate_tokens(page.body)
        if tokens > self.budget * BUDGET_TOLERANCE:
            self.problem(page.path, "budget", f"body is ~{tokens} tokens, over the page budget "
                         f"{self.budget} (x{BUDGET_TOLERANCE:g} tolerance)")


def _short(value: Any) -> str:
    text = str(value)
    return text[:19] + "…" if len(text) > 20 else text


def _span(span: Any) -> str:
    return str(span).replace(" ", "")


def _clip(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
