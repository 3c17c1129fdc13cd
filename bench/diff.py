"""Benchmark `hti-git diff` on a synthetic 2,000-subject index (python bench/diff.py).

Writes the index pages directly in the page format (no compile), commits them with
IndexRepo.commit, then makes three revisions with 1%, 5% and 20% of subjects changed (one clause
amended in source.txt with same-length text, so other spans stay put). For each, prints the
semantic diff's wall time as a whole process (`hti-git diff main <rev> --format json`) next to
`git diff --stat` on the same revisions. A second, 4x larger index with the same number of changed
subjects shows that the time follows the changed pages, not the index size.

Targets: under 1 s at 5%; time that grows with changed pages, not with the size of the index.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hti_git.index.linemap import LineMap
from hti_git.index.page import Page
from hti_git.store import IndexRepo
from hti_git.text import canonical_sha256
from hti_git.workspace import init_index

DOC = "synthetic"
PER_PART = 10  # subjects per sub-category page
PARTS = 10  # sub-categories per category
ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


def clause(i: int, days: str = "thirty") -> str:
    return (f"{i}. Delivery {i}. The Supplier shall deliver the goods of order {i} within {days} days of each "
            f"written purchase order from the Buyer, at the Buyer's site, with the documents Schedule {i % 7} lists.")


def _listing(meta: dict, source_link: bool = False) -> str:
    out = [f"# {meta['title']}", "", meta["summary"], "", "## Contents", ""]
    out += [f"- [{c['title']}]({c['link']}) — {c['summary']}" for c in meta["children"]]
    if source_link:
        out += ["", "Source text: [source.txt](source.txt)"]
    return "\n".join(out) + "\n"


def build(n: int, changed: set[int] = frozenset()) -> dict[str, bytes]:
    """All files of a synthetic index with `n` subjects; subjects in `changed` have an amended clause."""
    texts = [clause(i, "ninety" if i in changed else "thirty") for i in range(n)]
    source = "\n\n".join(texts) + "\n"
    lines = LineMap(source)
    files: dict[str, bytes] = {f"{DOC}/source.txt": source.encode()}
    offset = 0
    areas = []
    schema = {"categories": [{"name": f"Area {a}", "slug": f"area-{a:02d}", "fields": ["heading", "text"]}
                             for a in range((n + PER_PART * PARTS - 1) // (PER_PART * PARTS))]}
    files[f"{DOC}/schema.yaml"] = ("hti: 1\nmethod: synthetic\ncategories:\n" + "".join(
        f"  - name: {c['name']}\n    slug: {c['slug']}\n    fields:\n      - heading\n      - text\n"
        for c in schema["categories"])).encode()
    for a, cat in enumerate(schema["categories"]):
        parts = []
        for p in range(PARTS):
            children = []
            for k in range(PER_PART):
                i = (a * PARTS + p) * PER_PART + k
                if i >= n:
                    break
                text = texts[i]
                head_end = text.index(". ", text.index(". ") + 2) + 1
                heading, body = text[:head_end], text[head_end + 1:]
                spans_h, spans_b = [offset, offset + len(heading)], [offset + head_end + 1, offset + len(text)]
                offset += len(text) + 2
                path = f"{DOC}/{cat['slug']}/part-{p:02d}/delivery-{i:05d}.md"
                meta = {"hti": 1, "kind": "subject", "doc": DOC, "title": f"Delivery {i}", "summary": body[:120],
                        "aliases": [f"Section {i}"], "keywords": ["delivery", "supplier", "order"], "parent": "index.md",
                        "fields": [{"name": "heading", "values": [{"text": heading, "spans": [spans_h]}]},
                                   {"name": "text", "values": [{"text": body, "spans": [spans_b]}]}]}
                line = lines.line(spans_b[0])
                page_body = (f"# Delivery {i}\n\n{meta['summary']}\n\n[Up](index.md)\n\n## text\n\n- {body} "
                             f"([L{line}-L{line}](../../source.txt#L{line}-L{line}))\n")
                files[path] = Page(path, meta, page_body).render()
                children.append({"title": meta["title"], "link": path.rsplit("/", 1)[1], "kind": "subject",
                                 "summary": meta["summary"]})
            if not children:
                break
            path = f"{DOC}/{cat['slug']}/part-{p:02d}/index.md"
            meta = {"hti": 1, "kind": "category", "doc": DOC, "title": f"{cat['name']} part {p}",
                    "summary": f"{len(children)} deliveries", "parent": "../index.md", "children": children}
            files[path] = Page(path, meta, _listing(meta)).render()
            parts.append({"title": meta["title"], "link": f"part-{p:02d}/index.md", "kind": "category",
                          "summary": meta["summary"], "subjects": len(children)})
        path = f"{DOC}/{cat['slug']}/index.md"
        meta = {"hti": 1, "kind": "category", "doc": DOC, "title": cat["name"], "summary": f"{len(parts)} parts",
                "parent": "../index.md", "children": parts}
        files[path] = Page(path, meta, _listing(meta)).render()
        areas.append({"title": cat["name"], "link": f"{cat['slug']}/index.md", "kind": "category",
                      "summary": meta["summary"], "subjects": sum(c["subjects"] for c in parts)})
    provenance = {"format": 1, "source": {"name": "synthetic.txt", "sha256": "sha256:" + hashlib.sha256(
        source.encode()).hexdigest(), "chars": len(source)}, "method": "synthetic",
        "layout": {"page_budget": 2000, "fanout": 12}, "schema_sha256": canonical_sha256(schema), "prompts": {},
        "usage": {"calls": 0, "input_tokens": 0, "output_tokens": 0}}
    meta = {"hti": 1, "kind": "root", "doc": DOC, "title": "Synthetic supply agreement",
            "summary": f"{n} delivery clauses", "provenance": provenance, "children": areas}
    files[f"{DOC}/index.md"] = Page(f"{DOC}/index.md", meta, _listing(meta, source_link=True)).render()
    return files


def _wall(cmd: list[str], cwd: Path, runs: int) -> tuple[float, str]:
    times, out = [], ""
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=True)
        times.append(time.perf_counter() - t0)
        out = proc.stdout
    return statistics.median(times), out


def _hti() -> list[str]:
    exe = shutil.which("hti-git")
    return [exe] if exe else [sys.executable, "-m", "hti_git"]


def bench_index(root: Path, n: int, fractions: list[float], runs: int, fixed: int | None = None) -> list[dict]:
    """Build an n-subject index at `root`, one branch per change size; time both diffs on each."""
    init_index(root)  # an index repository (hti.yaml): hti-git's commands refuse a bare Git repository
    t0 = time.perf_counter()
    base = build(n)
    with IndexRepo(root) as repo:
        with repo.lock():
            repo.commit(base, "Synthetic index")
        build_s = time.perf_counter() - t0
        rows = []
        sizes = [fixed] if fixed else [max(1, round(n * f)) for f in fractions]
        for k in sizes:
            step = n / k
            changed = {int(j * step) for j in range(k)}
            files = build(n, changed)
            delta = {p: b for p, b in files.items() if base.get(p) != b}
            with repo.lock():
                repo.commit(delta, f"Amend {k} clauses", branch=f"bench/{k}")
            semantic, out = _wall([*_hti(), "diff", "main", f"bench/{k}", "--format", "json"], root, runs)
            stat, stat_out = _wall(["git", "diff", "--stat", "main", f"bench/{k}"], root, runs)
            totals = json.loads(out)["totals"]
            assert totals["subjects_changed"] == k, totals
            rows.append({"subjects": n, "changed": k, "pct": 100 * k / n, "files": totals["pages_changed"],
                         "semantic_s": semantic, "git_stat_s": stat, "build_s": build_s})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subjects", type=int, default=2000)
    parser.add_argument("--scale", type=int, default=4, help="Also an index this many times larger (0: skip).")
    parser.add_argument("--runs", type=int, default=3, help="Timed runs per command (median reported).")
    args = parser.parse_args()
    os.environ.update(ENV)
    print(f"hti-git diff benchmark: synthetic index, {args.subjects} subjects; median of {args.runs} runs")
    print(f"{'subjects':>8} {'changed':>8} {'pct':>6} {'files':>6} {'hti-git diff':>13} {'git diff --stat':>16}")
    with tempfile.TemporaryDirectory(prefix="hti-bench-diff-") as tmp:
        rows = bench_index(Path(tmp) / "small", args.subjects, [0.01, 0.05, 0.20], args.runs)
        if args.scale:
            mid = rows[1]["changed"]
            rows += bench_index(Path(tmp) / "large", args.subjects * args.scale, [], args.runs, fixed=mid)
        for r in rows:
            print(f"{r['subjects']:>8} {r['changed']:>8} {r['pct']:>5.1f}% {r['files']:>6} "
                  f"{r['semantic_s']:>12.3f}s {r['git_stat_s']:>15.3f}s")
    five = rows[1]
    print(f"\ntarget: < 1 s at 5% -> {five['semantic_s']:.3f} s ({'met' if five['semantic_s'] < 1 else 'MISSED'})")
    if args.scale:
        big = rows[-1]
        print(f"same {big['changed']} changed subjects in a {args.scale}x larger index: "
              f"{big['semantic_s']:.3f} s vs {five['semantic_s']:.3f} s")


if __name__ == "__main__":
    main()
