"""Benchmark the standard compile: `python bench/compile_standard.py`.

Against the local OpenAI-compatible stub (fixed latency, a deterministic handler that answers from
the prompt: numbered headings become clause subjects and quoted definitions defined terms, quotes
copied verbatim) on the six shared CUAD contracts, through the real openai SDK. Prints, all
measured in this run:

- model calls and input tokens per document, and input tokens as a ratio of the document's own
  tokens (target <= 1.5x, overlap and prompts included);
- wall time of the six at -j 1 (one document and one call at a time) and at -j 8 (eight documents
  sharing `concurrency: 8`, i.e. at most eight calls in flight in all);
- an unchanged recompile (target: zero calls) and a recompile after a one-paragraph edit of the
  largest contract (target: <= 2 extraction calls + the summaries on the changed path).

Set HTI_SHARED to the shared folder if it is not ../shared next to the repository.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "compile"))

from standard_stub import stub_handler  # noqa: E402

from hti_git.compile.batch import compile_many  # noqa: E402
from hti_git.config import load_settings  # noqa: E402
from hti_git.sources import load_source  # noqa: E402
from hti_git.store import IndexRepo  # noqa: E402
from hti_git.tokens import estimate_tokens  # noqa: E402
from hti_git.workspace import init_index  # noqa: E402
from tests.support.openai_stub import OpenAIStub  # noqa: E402

LATENCY = 0.05
SHARED = Path(os.environ.get("HTI_SHARED", ROOT.parent / "shared"))
CONTRACTS = SHARED / "data" / "cuad" / "contracts"
KINDS = {"You design the index": "discover", "You fill in a document's index": "extract",
         "You write the one-line summary": "summarize subject", "You summarize a section": "summarize category",
         "You write the root page": "summarize root", "A section of a document index has too many": "group"}


def kind(request) -> str:
    system = next((m["content"] for m in request.messages if m["role"] == "system"), "")
    return next((v for k, v in KINDS.items() if system.startswith(k)), "other")


def compile_all(stub: OpenAIStub, folder: Path, docs: list[Path], jobs: int, concurrency: int):
    init_index(folder)
    repo = IndexRepo(folder)
    settings = load_settings(folder).with_overrides(concurrency=concurrency)
    stub.reset()
    started = time.perf_counter()
    batch = compile_many(repo, [str(p) for p in docs], settings, jobs=jobs, method="standard")
    wall = time.perf_counter() - started
    if batch.failures:
        raise SystemExit(f"compile failed: {batch.failures}")
    return repo, settings, batch, wall


def main() -> None:
    if not CONTRACTS.is_dir():
        raise SystemExit(f"no contracts at {CONTRACTS} (set HTI_SHARED)")
    work = Path(tempfile.mkdtemp(prefix="hti-bench-standard-"))
    try:
        docs = []
        for path in sorted(CONTRACTS.glob("*.txt")):
            shutil.copy(path, work / path.name)
            docs.append(work / path.name)
        with OpenAIStub(stub_handler, latency=LATENCY) as stub:
            os.environ.update(OPENAI_BASE_URL=stub.base_url, OPENAI_API_KEY="sk-bench", HTI_MODEL="bench-model")
            repo1, _, serial, wall1 = compile_all(stub, work / "idx-j1", docs, 1, 1)
            repo1.close()
            repo, settings, batch, wall8 = compile_all(stub, work / "idx-j8", docs, 8, 8)
            requests = len(stub.requests)

            print(f"standard compile of {len(docs)} CUAD contracts via the stub ({LATENCY * 1000:.0f} ms per call)\n")
            print(f"{'document':<44} {'doc tok':>8} {'chunks':>6} {'calls':>5} {'input tok':>9} {'ratio':>6}")
            total_doc = total_in = total_calls = 0
            for path, r in zip(docs, batch.results):
                doc_tokens = estimate_tokens(load_source(path).text)
                chunks = r.usage and _chunks(repo, r.doc)
                total_doc += doc_tokens
                total_in += r.usage["input_tokens"]
                total_calls += r.usage["calls"]
                print(f"{r.doc[:44]:<44} {doc_tokens:>8,} {chunks:>6} {r.usage['calls']:>5} "
                      f"{r.usage['input_tokens']:>9,} {r.usage['input_tokens'] / doc_tokens:>5.2f}x")
            print(f"{'all six':<44} {total_doc:>8,} {'':>6} {total_calls:>5} {total_in:>9,} "
                  f"{total_in / total_doc:>5.2f}x   (target <= 1.5x)")
            print(f"stub requests: {requests} (= calls: {requests == total_calls})\n")
            print(f"wall time -j 1 (1 call in flight): {wall1:6.2f} s")
            print(f"wall time -j 8 (8 docs sharing concurrency 8): {wall8:6.2f} s   speed-up {wall1 / wall8:.1f}x\n")

            stub.reset()
            again = compile_many(repo, [str(p) for p in docs], settings, jobs=8, method="standard")
            statuses = Counter(r.status for r in again.results)
            print(f"unchanged recompile: {len(stub.requests)} model calls, statuses {dict(statuses)} (target: 0 calls)")

            big = max(docs, key=lambda p: p.stat().st_size)
            text = big.read_text(encoding="utf-8")
            # a substantial paragraph in the middle of the document gains a sentence
            starts = [m.end() for m in re.finditer(r"\n\s*\n", text)]
            paragraphs = [(a, b) for a, b in zip(starts, starts[1:]) if b - a > 300]
            at, end = paragraphs[len(paragraphs) // 2]
            edited = text[:at] + "The parties amend this paragraph as follows. " + text[at:]
            big.write_text(edited, encoding="utf-8")
            stub.reset()
            result = compile_many(repo, [str(big)], settings, method="standard").results[0]
            by_kind = Counter(kind(r) for r in stub.requests)
            print(f"one-paragraph edit of {big.name[:40]}: {len(stub.requests)} model calls "
                  f"({', '.join(f'{k} {v}' for k, v in sorted(by_kind.items()))}); "
                  f"{result.usage.get('cached_calls', 0)} answered by the cache; {result.changed} files changed "
                  f"(target: <= 2 extract calls + summaries on the changed path)")
            repo.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _chunks(repo: IndexRepo, doc: str) -> int:
    page = repo.snapshot("HEAD").page(f"{doc}/index.md")
    stages = page.meta["provenance"]["usage"]["stages"]
    extract = stages.get("extract", {})
    return extract.get("calls", 0) + extract.get("cached_calls", 0)


if __name__ == "__main__":
    main()
