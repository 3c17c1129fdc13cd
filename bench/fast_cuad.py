"""Benchmark the offline `fast` method on the shared CUAD contracts.

Compiles the six contracts with `fast`, asks each of the 227 questions, and prints pages per
document, compile seconds, ask milliseconds per question, and the evidence hit rate: the share
of questions with CUAD gold evidence whose citations overlap a gold evidence span. As a baseline
measured in the same run, the same questions go to plain BM25 over source.txt passages (no index),
so the index's navigation is compared against flat retrieval of the same size (3 passages).

    python bench/fast_cuad.py            # HTI_SHARED=/path/to/shared to point elsewhere
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchlib import CUAD, bench_identity, require_cuad

from hti_git.compile.pipeline import compile_path
from hti_git.config import Settings
from hti_git.eval.evidence import EvidenceLocator, overlaps
from hti_git.lexical import question_terms
from hti_git.query.offline import DocContext, ask_fast, search_source
from hti_git.store import IndexRepo
from hti_git.workspace import init_index


def main() -> int:
    require_cuad()
    bench_identity()
    questions = [json.loads(line) for line in (CUAD / "qa.jsonl").read_text().splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        init_index(Path(tmp) / "idx")
        repo = IndexRepo(Path(tmp) / "idx")
        settings = Settings(method="fast")
        print(f"{'document':<48} {'chars':>7} {'pages':>5} {'compile s':>9}")
        compile_times = []
        for path in sorted((CUAD / "contracts").glob("*.txt")):
            t0 = time.perf_counter()
            result = compile_path(repo, path, settings)
            dt = time.perf_counter() - t0
            compile_times.append(dt)
            chars = len(repo.snapshot().read_text(f"{result.doc}/source.txt"))
            print(f"{result.doc[:48]:<48} {chars:>7} {result.pages:>5} {dt:>9.2f}")

        snap = repo.snapshot()
        locators: dict[str, EvidenceLocator] = {}
        contexts: dict[str, DocContext] = {}
        ask_ms, rows = [], []
        for q in questions:
            doc = q["doc"]
            if doc not in locators:
                locators[doc] = EvidenceLocator(snap.read_text(f"{doc}/source.txt"))
                contexts[doc] = DocContext(snap, doc)
            t0 = time.perf_counter()
            answer = ask_fast(snap, q["question"], docs=[doc])
            ask_ms.append((time.perf_counter() - t0) * 1000)
            gold = [s for e in q["evidence"] for s in locators[doc].find(e)]
            cites = [(c.start, c.end) for c in answer.citations]
            flat = [(c.start, c.end) for c in search_source(contexts[doc], question_terms(q["question"]))]
            rows.append({
                "has_gold": bool(q["evidence"]), "located": bool(gold), "found": answer.found,
                "fallback": answer.fallback,
                "hit": any(overlaps(c, g) for c in cites for g in gold),
                "flat_hit": any(overlaps(c, g) for c in flat for g in gold),
            })
        repo.close()

    with_gold = [r for r in rows if r["has_gold"]]
    located = [r for r in with_gold if r["located"]]
    without = [r for r in rows if not r["has_gold"]]
    hit = sum(r["hit"] for r in with_gold)
    flat_hit = sum(r["flat_hit"] for r in with_gold)
    print()
    print(f"questions: {len(rows)} ({len(with_gold)} with gold evidence, {len(located)} of them located in source.txt)")
    print(f"compile: {sum(compile_times):.2f} s for 6 contracts")
    print(f"ask: median {statistics.median(ask_ms):.1f} ms, p95 {sorted(ask_ms)[int(len(ask_ms) * 0.95)]:.1f} ms per question")
    print(f"evidence hit rate (index navigation): {hit}/{len(with_gold)} = {hit / len(with_gold):.1%}"
          f"  (fallback used on {sum(r['fallback'] for r in with_gold)})")
    print(f"evidence hit rate (flat BM25 top-3, baseline): {flat_hit}/{len(with_gold)} = {flat_hit / len(with_gold):.1%}"
          f"  ratio {hit / max(flat_hit, 1):.2f}x")
    print(f"answered 'found' on questions with gold: {sum(r['found'] for r in with_gold)}/{len(with_gold)}; "
          f"on questions without (clause absent): {sum(r['found'] for r in without)}/{len(without)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
