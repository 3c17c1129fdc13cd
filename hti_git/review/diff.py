"""Semantic diff of the index between two revisions.

Only what Git says changed is read: one `git diff-tree` names the changed files, and only those
pages (plus each changed document's root page) are parsed, so the cost grows with the change, not
with the size of the index. Subjects are matched across revisions by path, then — for pages that
appear or vanish — by title/aliases, evidence-span overlap and value text, so a renamed or moved
subject is reported as such rather than as one removal plus one addition.

JSON format (`diff_revisions(...)` returns it; `hti-git diff --format json` prints it), "hti-diff/1":

    {"format": "hti-diff/1",
     "a": {"rev", "commit"}, "b": {"rev", "commit"},   # commit is null for an empty repository
     "identical": bool,                                 # no file differs (under --doc, if given)
     "totals": {"docs_added", "docs_removed", "docs_changed", "subjects_added", "subjects_removed",
                "subjects_renamed", "subjects_changed", "subjects_moved", "subjects_shifted",
                "pages_changed"},                       # all ints
     "docs": [{                                         # sorted by name; only documents that differ
        "doc": str, "status": "added" | "removed" | "recompiled" | "modified",
        "change": str,          # "source changed", "same source, new model", "new schema", ...
        "title": {"a", "b"},
        "provenance": [{"key": "model.name", "a": any, "b": any}],   # dotted keys, usage excluded
        "usage": {"a": {calls, input_tokens, ...} | null, "b": ...},
        "counts": {"a": {"subjects", "categories"} | null, "b": ..., "pages_changed": int},
        "schema": null | {"categories_added": [name], "categories_removed": [name],
                   "categories_renamed": [{"a", "b"}],
                   "fields_added" | "fields_removed": [{"category", "field"}],
                   "fields_renamed": [{"category", "a", "b"}], "other": [{"key", "a", "b"}]},
        "summaries": [{"page", "title", "a", "b", "diff"}],         # root and category pages
        "categories": {"added": [{"page", "title"}], "removed": [...]},  # category pages
        "subjects": {
           "added" | "removed": [{"page", "title", "summary"}],
           "renamed": [{"a": {"page", "title"}, "b": {...}, "matched_by": [str], "changes": [change]}],
           "changed": [{"page", "title", "page_a"?, "changes": [change]}],
           "moved": [{"page", "title", "page_a"}],      # same subject, new place, content unchanged
           "shifted": [{"page", "title"}]},              # only spans/pages/keywords changed
     }],
     "other_files": [{"status": "A"|"D"|"M", "path"}]}    # hti.yaml, templates/, ...

    change: {"what": "title"|"summary", "a", "b", "diff"}
          | {"what": "aliases"|"keywords", "added": [str], "removed": [str]}
          | {"what": "value", "op": "changed"|"added"|"removed", "field",
             "a": {"text", "spans"} | null, "b": {...} | null, "diff"?}
          | {"what": "evidence", "field", "text", "a": spans, "b": spans}
          | {"what": "unverified", "field", "text", "a": bool, "b": bool}
    diff: [[op, words], ...] with op "=" kept, "-" removed, "+" added; "…" elides kept words.
    Lists are in a stable order (page path), so the same two commits always give the same JSON.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml.error import YAMLError

from hti_git.errors import PageFormatError, StoreError
from hti_git.index.page import FENCE, Page, parse_page, safe_yaml
from hti_git.review.words import similarity, word_diff
from hti_git.store import IndexRepo, Snapshot

FORMAT = "hti-diff/1"
INDEX_FILE, SCHEMA_FILE = "index.md", "schema.yaml"  # as in index.layout, whose imports cost ~60 ms at startup
MATERIAL = {"title", "summary", "aliases", "value", "unverified"}
_CONTINUATION = re.compile(r"--\d+\.md$")
_WORD = re.compile(r"[a-z0-9]+")
_LOADER = safe_yaml()  # no aliases: a hostile page cannot expand into gigabytes


def diff_revisions(repo: IndexRepo, rev_a: str, rev_b: str, doc: str | None = None) -> dict[str, Any]:
    """The semantic diff of the index from `rev_a` to `rev_b` (optionally one document)."""
    snap_a, snap_b = repo.snapshot(rev_a), repo.snapshot(rev_b)
    result: dict[str, Any] = {
        "format": FORMAT,
        "a": {"rev": rev_a, "commit": snap_a.sha},
        "b": {"rev": rev_b, "commit": snap_b.sha},
        "identical": True,
        "totals": {},
        "docs": [],
        "other_files": [],
    }
    rows = [] if snap_a.sha == snap_b.sha else repo.changed_blobs(rev_a, rev_b, doc or "")
    side_a = _Side(repo, snap_a, {path: sha for _, path, sha, _ in rows})
    side_b = _Side(repo, snap_b, {path: sha for _, path, _, sha in rows})
    by_top: dict[str, list[tuple[str, str]]] = {}
    for status, path, _, _ in rows:
        top, sep, rest = path.partition("/")
        if sep:
            by_top.setdefault(top, []).append((status, rest))
        else:
            result["other_files"].append({"status": status, "path": path})
    docs_a, docs_b = set(snap_a.docs()), set(snap_b.docs())
    for top in sorted(by_top):
        if top in docs_a or top in docs_b:
            result["docs"].append(_DocDiff(side_a, side_b, top, by_top[top], top in docs_a, top in docs_b).run())
        else:
            result["other_files"] += [{"status": s, "path": f"{top}/{p}"} for s, p in by_top[top]]
    result["other_files"].sort(key=lambda r: r["path"])
    result["identical"] = not rows
    result["totals"] = _totals(result["docs"], len(rows))
    return result


class _Side:
    """One revision's files for the diff: changed ones read straight from their blob shas."""

    def __init__(self, repo: IndexRepo, snapshot: Snapshot, changed: dict[str, str | None]):
        self.repo = repo
        self.snapshot = snapshot
        self.changed = changed  # path -> blob sha on this side (None: absent here)

    def exists(self, path: str) -> bool:
        return self.changed[path] is not None if path in self.changed else self.snapshot.exists(path)

    def read(self, path: str) -> bytes | None:
        """The file's bytes, or None when it does not exist on this side."""
        try:
            if path in self.changed:
                sha = self.changed[path]
                return self.repo.read_blob(sha) if sha is not None else None
            return self.snapshot.read_bytes(path)
        except StoreError:
            return None


def _totals(docs: list[dict[str, Any]], pages: int) -> dict[str, int]:
    totals = {
        "docs_added": sum(d["status"] == "added" for d in docs),
        "docs_removed": sum(d["status"] == "removed" for d in docs),
        "docs_changed": sum(d["status"] in ("recompiled", "modified") for d in docs),
    }
    for key in ("added", "removed", "renamed", "changed", "moved", "shifted"):
        totals[f"subjects_{key}"] = sum(len(d["subjects"][key]) for d in docs)
    totals["pages_changed"] = pages
    return totals


@dataclass
class _Subject:
    """A subject read from its page and continuation pages, fields merged."""

    page: str
    title: str
    summary: str
    aliases: list[str]
    keywords: list[str]
    fields: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    body: str = ""

    def names(self) -> set[str]:
        return {n for n in (_norm_name(x) for x in [self.title, *self.aliases]) if n}

    def texts(self) -> set[str]:
        return {" ".join(str(v.get("text", "")).split()) for vs in self.fields.values() for v in vs} - {""}

    def spans(self) -> list[tuple[int, int]]:
        return sorted({(int(s[0]), int(s[1])) for vs in self.fields.values() for v in vs
                       for s in (v.get("spans") or []) if _is_span(s)})

    def ref(self) -> dict[str, str]:
        return {"page": self.page, "title": self.title}


class _DocDiff:
    def __init__(self, side_a: _Side, side_b: _Side, doc: str, rows: list[tuple[str, str]],
                 in_a: bool, in_b: bool):
        self.a, self.b = side_a, side_b
        self.doc = doc
        self.rows = rows
        self.in_a, self.in_b = in_a, in_b
        self.memo: dict[str, Any] = {}  # front-matter block text -> parsed value

    def _root(self, side: _Side, present: bool) -> Page | None:
        return _read_memo(side, f"{self.doc}/{INDEX_FILE}", self.memo) if present else None

    def run(self) -> dict[str, Any]:
        root_a, root_b = self._root(self.a, self.in_a), self._root(self.b, self.in_b)
        prov_a = (root_a.meta.get("provenance") or {}) if root_a else {}
        prov_b = (root_b.meta.get("provenance") or {}) if root_b else {}
        provenance = _provenance_changes(prov_a, prov_b) if root_a and root_b else []
        status = "added" if not self.in_a else "removed" if not self.in_b else (
            "recompiled" if provenance or prov_a.get("usage") != prov_b.get("usage") else "modified")
        out: dict[str, Any] = {
            "doc": self.doc,
            "status": status,
            "change": _verdict(status, provenance),
            "title": {"a": root_a.title if root_a else None, "b": root_b.title if root_b else None},
            "provenance": provenance,
            "usage": {"a": prov_a.get("usage") if root_a else None, "b": prov_b.get("usage") if root_b else None},
            "counts": {"a": _counts(root_a), "b": _counts(root_b), "pages_changed": len(self.rows)},
            "schema": None,
            "summaries": [],
            "categories": {"added": [], "removed": []},
            "subjects": {k: [] for k in ("added", "removed", "renamed", "changed", "moved", "shifted")},
        }
        if status in ("added", "removed"):
            return out  # the whole document is new or gone: counts say enough
        status_of = {f"{self.doc}/{rest}": s for s, rest in self.rows}
        if f"{self.doc}/{SCHEMA_FILE}" in status_of:
            out["schema"] = _schema_changes(_schema(self.a, self.doc), _schema(self.b, self.doc))
        subject_bases: set[str] = set()
        for path, st in sorted(status_of.items()):
            if not path.endswith(".md"):
                continue
            if path.rsplit("/", 1)[-1] == INDEX_FILE:
                self._listing(path, st, out)
            else:
                subject_bases.add(_CONTINUATION.sub(".md", path))
        self._subjects(sorted(subject_bases), status_of, out["subjects"])
        return out

    def _listing(self, path: str, status: str, out: dict[str, Any]) -> None:
        page_a = _heading(self.a, path) if status != "A" else None
        page_b = _heading(self.b, path) if status != "D" else None
        if page_a is None and page_b is not None:
            out["categories"]["added"].append({"page": path, "title": page_b["title"]})
        elif page_b is None and page_a is not None:
            out["categories"]["removed"].append({"page": path, "title": page_a["title"]})
        elif page_a is not None and page_b is not None and page_a["summary"] != page_b["summary"]:
            a, b = page_a["summary"], page_b["summary"]
            out["summaries"].append({"page": path, "title": page_b["title"], "a": a, "b": b, "diff": word_diff(a, b)})

    def _subjects(self, bases: list[str], status_of: dict[str, str], out: dict[str, list]) -> None:
        only_a: list[_Subject] = []
        only_b: list[_Subject] = []
        for base in bases:
            st = status_of.get(base, "M")
            sa = _load_subject(self.a, base, self.memo) if st != "A" else None
            sb = _load_subject(self.b, base, self.memo) if st != "D" else None
            if sa is not None and sb is not None:
                self._pair(sa, sb, ["path"], out)
            elif sa is not None:
                only_a.append(sa)
            elif sb is not None:
                only_b.append(sb)
        matched_b: set[int] = set()
        for ia, ib, how in _match(only_a, only_b):
            matched_b.add(ib)
            only_a[ia] = self._pair(only_a[ia], only_b[ib], how, out)  # type: ignore[assignment]
        out["removed"] += [_brief(s) for s in only_a if s is not None]
        out["added"] += [_brief(s) for i, s in enumerate(only_b) if i not in matched_b]
        for key in out:
            out[key].sort(key=lambda r: r["b"]["page"] if "b" in r else r["page"])

    def _pair(self, sa: _Subject, sb: _Subject, how: list[str], out: dict[str, list]) -> None:
        changes = _subject_changes(sa, sb)
        material = [c for c in changes if c["what"] in MATERIAL]
        renamed = _norm_name(sa.title) != _norm_name(sb.title)
        moved = sa.page != sb.page
        if renamed:
            out["renamed"].append({"a": sa.ref(), "b": sb.ref(), "matched_by": how, "changes": changes})
        elif material:
            entry = {**sb.ref(), "changes": changes}
            if moved:
                entry["page_a"] = sa.page
            out["changed"].append(entry)
        elif moved:
            out["moved"].append({**sb.ref(), "page_a": sa.page})
        elif changes or sa.body != sb.body:
            out["shifted"].append(sb.ref())
        return None


def _heading(side: _Side, path: str) -> dict[str, str] | None:
    """Title and summary of a listing page, parsing only those two front-matter keys.

    A listing's front-matter is mostly its children; parsing them (pure-Python YAML) would cost
    most of a diff's time, and only the summary is compared here.
    """
    text = _text_of(side, path)
    if text is None:
        return None
    blocks = _top_level_blocks(text)
    if blocks is None:
        page = _read(side, path)
        return {"title": page.title, "summary": page.summary} if page is not None else None
    try:
        meta = _LOADER.load(blocks.get("title", "") + blocks.get("summary", "")) or {}
    except YAMLError:
        return None
    return {"title": str(meta.get("title", "")), "summary": str(meta.get("summary", ""))}


def _top_level_blocks(text: str) -> dict[str, str] | None:
    """Front-matter split into its top-level `key:` blocks (raw YAML text); None if not block-style."""
    if not text.startswith(FENCE):
        return None
    end = text.find("\n" + FENCE, len(FENCE) - 1)
    if end == -1:
        return None
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text[len(FENCE): end + 1].splitlines(keepends=True):
        if line[:1].isalpha() and ":" in line:
            current = blocks.setdefault(line.split(":", 1)[0], [])
        elif current is None:
            return None  # a comment, directive or flow mapping first: let the full parser handle it
        current.append(line)
    return {k: "".join(v) for k, v in blocks.items()}


def _read_memo(side: _Side, path: str, memo: dict[str, Any]) -> Page | None:
    """The page at `path`, parsing only front-matter blocks not already seen (on either side).

    A modified subject usually differs in one or two keys; blocks identical on both sides are
    parsed once.
    """
    text = _text_of(side, path)
    if text is None:
        return None
    blocks = _top_level_blocks(text)
    if blocks is None:
        return _read(side, path)
    missing = [b for b in blocks.values() if b not in memo]
    if missing:
        try:
            loaded = _LOADER.load("".join(missing)) or {}
        except YAMLError:
            return _read(side, path)
        for key, block in blocks.items():
            if block in missing:
                memo[block] = loaded.get(key)
    meta = {key: memo[block] for key, block in blocks.items()}
    body = text[text.find("\n" + FENCE, len(FENCE) - 1) + 1 + len(FENCE):]
    return Page(path=path, meta=meta, body=body.removeprefix("\n"))


def _text_of(side: _Side, path: str) -> str | None:
    data = side.read(path)
    try:
        return data.decode("utf-8") if data is not None else None
    except UnicodeDecodeError:
        return None


def _read(side: _Side, path: str) -> Page | None:
    """The fully parsed page, or None when absent or unparseable (reported as missing)."""
    data = side.read(path)
    try:
        return parse_page(path, data) if data is not None else None
    except (PageFormatError, UnicodeDecodeError):
        return None


def _load_subject(side: _Side, base: str, memo: dict[str, Any]) -> _Subject | None:
    page = _read_memo(side, base, memo)
    if page is None:
        return None
    subject = _Subject(base, page.title, page.summary, [str(a) for a in page.meta.get("aliases") or []],
                       [str(k) for k in page.meta.get("keywords") or []])
    seen = {base}
    bodies = []
    while page is not None:
        bodies.append(page.body)
        for fld in page.meta.get("fields") or []:
            if isinstance(fld, dict):
                values = [v if isinstance(v, dict) else {"text": str(v)} for v in fld.get("values") or []]
                subject.fields.setdefault(str(fld.get("name", "")), []).extend(values)
        nxt = page.meta.get("continued")
        path = page.resolve(str(nxt)) if nxt else None
        if path is None or path in seen or not side.exists(path):
            break
        seen.add(path)
        page = _read_memo(side, path, memo)
    subject.body = "\n".join(bodies)
    return subject


def _brief(s: _Subject) -> dict[str, str]:
    return {"page": s.page, "title": s.title, "summary": s.summary}


def _norm_name(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def _is_span(s: Any) -> bool:
    return isinstance(s, (list, tuple)) and len(s) == 2 and all(isinstance(x, int) for x in s)


def _spans(value: dict[str, Any] | None) -> list[list[int]]:
    return [list(s) for s in (value or {}).get("spans") or [] if _is_span(s)]


def _text(value: dict[str, Any]) -> str:
    """A value as a reader sees it: the model's reading (when given) and its evidence text."""
    text = " ".join(str(value.get("text", "")).split())
    reading = " ".join(str(value.get("value") or "").split())
    return f"{reading}: {text}" if reading else text


# -- subject matching ------------------------------------------------------------------------------


def _match(only_a: list[_Subject], only_b: list[_Subject]) -> list[tuple[int, int, list[str]]]:
    """Pairs (index in a, index in b, evidence) of the same subject under different pages, best first.

    Candidates come from inverted indexes (names, value texts, span starts), so the work is
    proportional to the number of vanished/new pages, not their product.
    """
    if not only_a or not only_b:
        return []
    by_name: dict[str, set[int]] = {}
    by_text: dict[str, set[int]] = {}
    intervals: list[tuple[int, int, int]] = []
    for ib, s in enumerate(only_b):
        for n in s.names():
            by_name.setdefault(n, set()).add(ib)
        for t in s.texts():
            by_text.setdefault(t, set()).add(ib)
        intervals += [(start, end, ib) for start, end in s.spans()]
    intervals.sort()
    starts = [iv[0] for iv in intervals]
    longest = max((e - s for s, e, _ in intervals), default=0)
    scored = []
    for ia, sa in enumerate(only_a):
        candidates: set[int] = set()
        for n in sa.names():
            candidates |= by_name.get(n, set())
        for t in sa.texts():
            candidates |= by_text.get(t, set())
        for start, end in sa.spans():
            lo = bisect.bisect_left(starts, start - longest)
            hi = bisect.bisect_left(starts, end)
            candidates |= {ib for s, e, ib in intervals[lo:hi] if e > start}
        for ib in candidates:
            score, how = _score(sa, only_b[ib])
            if score >= 1.0:
                scored.append((-score, ia, ib, how))
    scored.sort()
    used_a: set[int] = set()
    used_b: set[int] = set()
    pairs = []
    for _, ia, ib, how in scored:
        if ia in used_a or ib in used_b:
            continue
        used_a.add(ia)
        used_b.add(ib)
        pairs.append((ia, ib, how))
    return pairs


def _score(a: _Subject, b: _Subject) -> tuple[float, list[str]]:
    how = []
    score = 0.0
    if _norm_name(a.title) == _norm_name(b.title):
        score += 2.0
        how.append("title")
    elif a.names() & b.names():
        score += 1.5
        how.append("aliases")
    overlap = _span_overlap(a.spans(), b.spans())
    if overlap >= 0.5:
        score += 1.5 * overlap
        how.append("spans")
    ta, tb = a.texts(), b.texts()
    if ta and tb:
        shared = len(ta & tb) / len(ta | tb)
        if shared >= 0.5:
            score += shared
            how.append("text")
    return score, how


def _span_overlap(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> float:
    """Overlapping characters over the smaller side's covered characters."""
    if not a or not b:
        return 0.0
    covered = 0
    for s1, e1 in a:
        for s2, e2 in b:
            covered += max(0, min(e1, e2) - max(s1, s2))
    size = min(sum(e - s for s, e in a), sum(e - s for s, e in b))
    return min(1.0, covered / size) if size else 0.0


# -- subject comparison ----------------------------------------------------------------------------


def _subject_changes(a: _Subject, b: _Subject) -> list[dict[str, Any]]:
    changes: list[dict[str, Any]] = []
    for what in ("title", "summary"):
        va, vb = getattr(a, what), getattr(b, what)
        if va != vb:
            changes.append({"what": what, "a": va, "b": vb, "diff": word_diff(va, vb)})
    for what in ("aliases", "keywords"):
        va, vb = getattr(a, what), getattr(b, what)
        if va != vb:
            changes.append({"what": what, "added": [x for x in vb if x not in va],
                            "removed": [x for x in va if x not in vb]})
    names = list(a.fields) + [n for n in b.fields if n not in a.fields]
    for name in names:
        changes += _field_changes(name, a.fields.get(name, []), b.fields.get(name, []))
    return changes


def _field_changes(name: str, va: list[dict[str, Any]], vb: list[dict[str, Any]]) -> list[dict[str, Any]]:
    changes: list[dict[str, Any]] = []
    rest_b = list(range(len(vb)))
    rest_a = []
    for ia, value in enumerate(va):
        text = _text(value)
        hit = next((ib for ib in rest_b if _text(vb[ib]) == text), None)
        if hit is None:
            rest_a.append(ia)
            continue
        rest_b.remove(hit)
        other = vb[hit]
        if _spans(value) != _spans(other):
            changes.append({"what": "evidence", "field": name, "text": text, "a": _spans(value), "b": _spans(other)})
        if bool(value.get("unverified")) != bool(other.get("unverified")):
            changes.append({"what": "unverified", "field": name, "text": text,
                            "a": bool(value.get("unverified")), "b": bool(other.get("unverified"))})
    # Unmatched values: pair the most similar ones as edits, the rest are additions/removals.
    pairs = sorted((-similarity(_text(va[i]), _text(vb[j])), i, j) for i in rest_a for j in rest_b)
    used_a: set[int] = set()
    used_b: set[int] = set()
    edits = []
    for neg, i, j in pairs:
        if -neg < 0.3 or i in used_a or j in used_b:
            continue
        used_a.add(i)
        used_b.add(j)
        edits.append((i, j))
    for i, j in sorted(edits):
        changes.append({"what": "value", "op": "changed", "field": name, "a": _value(va[i]), "b": _value(vb[j]),
                        "diff": word_diff(_text(va[i]), _text(vb[j]))})
    changes += [{"what": "value", "op": "removed", "field": name, "a": _value(va[i]), "b": None}
                for i in rest_a if i not in used_a]
    changes += [{"what": "value", "op": "added", "field": name, "a": None, "b": _value(vb[j])}
                for j in rest_b if j not in used_b]
    return changes


def _value(value: dict[str, Any]) -> dict[str, Any]:
    return {"text": _text(value), "spans": _spans(value)}


# -- provenance, schema, counts ----------------------------------------------------------------------


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k in sorted(value, key=str):
            out.update(_flatten(value[k], f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}


def _provenance_changes(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    fa = _flatten({k: v for k, v in a.items() if k != "usage"})
    fb = _flatten({k: v for k, v in b.items() if k != "usage"})
    keys = sorted((set(fa) | set(fb)) - {"source.page_starts"})  # follows from source.sha256; too long to show
    return [{"key": k, "a": fa.get(k), "b": fb.get(k)} for k in keys
            if json.dumps(fa.get(k), sort_keys=True, default=str) != json.dumps(fb.get(k), sort_keys=True, default=str)]


def _verdict(status: str, provenance: list[dict[str, Any]]) -> str:
    """One phrase a reviewer reads first: why this document differs."""
    if status in ("added", "removed"):
        return f"document {status}"
    keys = {p["key"] for p in provenance}

    def touched(*prefixes: str) -> bool:
        return any(k == p or k.startswith(p + ".") for k in keys for p in prefixes)

    parts = ["source changed" if touched("source.sha256") else "same source"]
    for prefixes, label in ((("model", "provider"), "new model"), (("method",), "new method"),
                            (("schema_sha256",), "new schema"), (("prompts",), "new prompts"),
                            (("layout",), "new layout"), (("format", "hti_git"), "new hti-git version")):
        if touched(*prefixes):
            parts.append(label)
    if parts == ["same source"]:
        return "same source, same settings" if status == "recompiled" else "pages edited"
    if parts[0] == "source changed" and len(parts) == 1:
        return "source changed"
    return ", ".join(parts)


def _counts(root: Page | None) -> dict[str, int] | None:
    if root is None:
        return None
    children = [c for c in root.links() if isinstance(c, dict)]
    subjects = sum(int(c.get("subjects") or 0) if c.get("kind") == "category" else 1
                   for c in children if c.get("kind") in ("category", "subject"))
    return {"subjects": subjects, "categories": sum(c.get("kind") == "category" for c in children)}


def _schema(side: _Side, doc: str) -> dict[str, Any]:
    text = _text_of(side, f"{doc}/{SCHEMA_FILE}")
    if text is None:
        return {}
    try:
        data = safe_yaml().load(text)
    except (YAMLError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _categories(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Category key (slug path) -> {name, parent, fields}, flattened from nested categories."""
    out: dict[str, dict[str, Any]] = {}

    def walk(items: Any, parent: str) -> None:
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue
            name = str(item.get("name", ""))
            key = f"{parent}/{item.get('slug') or _norm_name(name)}".lstrip("/")
            fields = [str(f.get("name", "")) if isinstance(f, dict) else str(f) for f in item.get("fields") or []]
            out[key] = {"name": name, "parent": parent, "fields": fields}
            walk(item.get("categories"), key)

    walk(schema.get("categories"), "")
    return out


def _schema_changes(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    ca, cb = _categories(a), _categories(b)
    out: dict[str, Any] = {k: [] for k in ("categories_added", "categories_removed", "categories_renamed",
                                           "fields_added", "fields_removed", "fields_renamed", "other")}
    gone = [k for k in ca if k not in cb]
    new = [k for k in cb if k not in ca]
    for ka in list(gone):  # a category whose slug changed but whose place and fields did not: renamed
        hit = next((kb for kb in new if cb[kb]["parent"] == ca[ka]["parent"] and cb[kb]["fields"] == ca[ka]["fields"]
                    and ca[ka]["fields"]), None)
        if hit is not None:
            gone.remove(ka)
            new.remove(hit)
            out["categories_renamed"].append({"a": ca[ka]["name"], "b": cb[hit]["name"]})
    out["categories_removed"] = [ca[k]["name"] for k in gone]
    out["categories_added"] = [cb[k]["name"] for k in new]
    for key in ca:
        if key not in cb:
            continue
        if ca[key]["name"] != cb[key]["name"]:
            out["categories_renamed"].append({"a": ca[key]["name"], "b": cb[key]["name"]})
        fa, fb = ca[key]["fields"], cb[key]["fields"]
        removed = [f for f in fa if f not in fb]
        added = [f for f in fb if f not in fa]
        category = cb[key]["name"]
        if len(removed) == 1 and len(added) == 1:  # one out, one in, same category: a rename
            out["fields_renamed"].append({"category": category, "a": removed[0], "b": added[0]})
            continue
        out["fields_removed"] += [{"category": category, "field": f} for f in removed]
        out["fields_added"] += [{"category": category, "field": f} for f in added]
    skip = {"categories", "hti"}
    for key in sorted(set(a) | set(b)):
        if key not in skip and a.get(key) != b.get(key):
            out["other"].append({"key": key, "a": a.get(key), "b": b.get(key)})
    return out
