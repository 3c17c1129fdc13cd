"""Benchmark the standard compile: `python bench/compile_standard.py`.

Against the local OpenAI-compatible stub (fixed latency, a deterministic handler that answers from
the prompt: numbered headings become clause subjects and quoted definitions defined terms, quotes
copied verbatim) on the six shared CUAD contracts, through the real openai SDK. Prints, all
measured in this run:

- model calls, input and output tokens per document, as ratios of the document's own tokens
  (targets: input <= 1.8x, output <= 1.25x: passages of ~0.7x the output limit, see
  compile/sizing.py), next to what `compile --estimate` predicted before the compile (target:
  within 25% on input and output, 35% on calls). The stub answers like a capable model: its replies
  grow with the passage (one subject per ~600 characters, up to the prompt's cap), and the server
  cuts any reply at max_tokens with finish_reason "length". It files its subjects under fewer
  categories than a model does, so it needs fewer section summaries and groupings than the
  estimate counts; against a capable model (run 42, three CUAD PDFs) the estimate was within 3% of
  the calls and input tokens and 13% of the output;
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
from hti_git.compile.standard import estimate_standard  # noqa: E402
from hti_git.config import load_settings  # noqa: E402
from hti_git.index.slug import doc_slug  # noqa: E402
from hti_git.sources import load_source  # noqa: E402
from hti_git.store import IndexRepo  # noqa: E402
from hti_git.tokens import estimate_tokens  # noqa: E402
from hti_git.workspace import init_index  # noqa: E402
from tests.support.openai_stub import OpenAIStub  # noqa: E402

LATENCY = 0.05
SHARED = Path(os.environ.get("HTI_SHARED", ROOT.parent / "shared"))
CONTRACTS = SHARED / "data" / "cuad" / "contracts"
KINDS = {"You design the index": "discover", "You fill in a document's index": "extract",
         "You write the one-line summaries": "summarize subject", "You summarize sections": "summarize category",
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
            estimates = [estimate_standard(load_source(p), load_settings(work / "idx-j1"), work / "idx-j1") for p in docs]
            repo, settings, batch, wall8 = compile_all(stub, work / "idx-j8", docs, 8, 8)
            requests = len(stub.requests)

            print(f"standard compile of {len(docs)} CUAD contracts via the stub ({LATENCY * 1000:.0f} ms per call), "
                  f"default settings (max_output_tokens {settings.max_output_tokens})\n")
            print(f"{'document':<32} {'doc tok':>7} {'chunks':>6} {'calls est/real':>15} {'input est/real':>17} "
                  f"{'in x':>5} {'output est/real':>16} {'out x':>5}")
            total = Counter()
            by_doc = {r.doc: r for r in batch.results}  # results come in the order documents finish
            for path, est in zip(docs, estimates):
                r = by_doc[doc_slug(load_source(path).name)]
                doc_tokens = estimate_tokens(load_source(path).text)
                chunks = r.usage and _chunks(repo, r.doc)
                u = r.usage
                total.update(doc=doc_tokens, calls=u["calls"], input=u["input_tokens"], output=u["output_tokens"],
                             est_calls=est["calls"], est_input=est["input_tokens"], est_output=est["output_tokens"])
                print(f"{r.doc[:32]:<32} {doc_tokens:>7,} {chunks:>6} {est['calls']:>7}/{u['calls']:<7} "
                      f"{est['input_tokens']:>8,}/{u['input_tokens']:<8,} {u['input_tokens'] / doc_tokens:>4.2f}x "
                      f"{est['output_tokens']:>7,}/{u['output_tokens']:<8,} {u['output_tokens'] / doc_tokens:>4.2f}x")
            print(f"{'all six':<32} {total['doc']:>7,} {'':>6} {total['est_calls']:>7}/{total['calls']:<7} "
                  f"{total['est_input']:>8,}/{total['input']:<8,} {total['input'] / total['doc']:>4.2f}x "
                  f"{total['est_output']:>7,}/{total['output']:<8,} {total['output'] / total['doc']:>4.2f}x")
            for name, target in (("calls", 35), ("input", 25), ("output", 25)):
                print(f"  estimate vs real, {name}: {total['est_' + name] / max(1, total[name]) - 1:+.0%} "
                      f"(target within {target}%)")
            print(f"stub requests: {requests} (= calls: {requests == total['calls']}); "
                  f"targets: input <= 1.8x, output <= 1.25x of the document's tokens\n")
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
