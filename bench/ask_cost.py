"""Benchmark the per-question cost of model answering: `python bench/ask_cost.py`.

1. Compiles the six shared CUAD contracts (with `fast`, then with `standard` against the compile stub
   model; `python bench/ask_cost.py fast` for one) into a fresh index repository and asks every question of
   qa.jsonl with `llm` navigation through the real openai SDK against the local stub server, whose
   handler decides like a model would (route/open by word overlap with the question, answer from the
   best evidence with a verbatim quote). Prints mean/median input tokens per question for index
   navigation and, in the same run, for the full-document baseline (whole source.txt + question,
   hti_git.tokens.estimate_tokens), as a ratio. Target: index <= 10% of full-document on contracts
   over 50K characters.
2. Builds a synthetic index of over 1,000 pages and times the non-model overhead of one ask at a revision
   (wall time minus the time inside the provider, scripted in-process). Target: < 50 ms median.

The stub answers are plausible, not correct: this measures tokens and overhead, not accuracy.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "query"))
sys.path.insert(0, str(ROOT / "tests" / "compile"))

from model_stub import decide, stub_handler  # noqa: E402
from standard_stub import stub_handler as compile_stub_handler  # noqa: E402

from hti_git.compile.pipeline import compile_path  # noqa: E402
from hti_git.config import Settings  # noqa: E402
from hti_git.llm.cache import ResponseCache  # noqa: E402
from hti_git.llm.client import ModelClient, build_provider  # noqa: E402
from hti_git.llm.ledger import UsageLedger  # noqa: E402
from hti_git.llm.scripted import ScriptedProvider  # noqa: E402
from hti_git.query.answer_llm import ask_llm_async  # noqa: E402
from hti_git.store import IndexRepo  # noqa: E402
from hti_git.tokens import estimate_tokens  # noqa: E402
from hti_git.workspace import init_index  # noqa: E402
from tests.support.openai_stub import OpenAIStub  # noqa: E402

SHARED = Path(os.environ.get("HTI_SHARED", ROOT.parent / "shared"))
CUAD = SHARED / "data" / "cuad"
LARGE = 50_000  # characters: the target applies to contracts at least this long
OVERHEAD_QUESTIONS = 60


def _env() -> None:
    for name, value in {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
                        "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}.items():
        os.environ.setdefault(name, value)


def compile_contracts(repo: IndexRepo, method: str) -> None:
    """Compile the six contracts with `fast`, or with `standard` against the compile stub model."""
    paths = sorted((CUAD / "contracts").glob("*.txt"))
    if method == "fast":
        for path in paths:
            compile_path(repo, path, Settings(), method="fast")
        return
    with OpenAIStub(compile_stub_handler) as stub:
        settings = Settings(model="stub-compiler", base_url=stub.base_url)
        for path in paths:
            compile_path(repo, path, settings, method="standard")


async def ask_all(repo: IndexRepo, questions: list[dict], base_url: str) -> list[dict]:
    provider = build_provider(Settings(model="stub-model", base_url=base_url))
    snapshot = repo.snapshot()
    rows = []

    async def one(q: dict) -> dict:
        # One client (ledger) per question so usage is per question; the provider is shared.
        client = ModelClient(provider, ResponseCache.disabled(), UsageLedger(), concurrency=16, max_retries=0,
                             model="stub-model", params={"temperature": 0.0, "max_output_tokens": 4096})
        answer = await ask_llm_async(snapshot, q["question"], client, [q["doc"]])
        source = snapshot.read_text(f"{q['doc']}/source.txt")
        return {"doc": q["doc"], "chars": len(source), "index": answer.usage["input_tokens"],
                "calls": answer.usage["calls"], "full": estimate_tokens(source + "\n\n" + q["question"]),
                "found": answer.found, "fallback": answer.fallback}

    try:
        for start in range(0, len(questions), 16):
            rows += await asyncio.gather(*(one(q) for q in questions[start:start + 16]))
    finally:
        await provider.aclose()
    return rows


def _line(label: str, rows: list[dict]) -> str:
    idx = [r["index"] for r in rows]
    full = [r["full"] for r in rows]
    ratio = statistics.mean(idx) / statistics.mean(full)
    return (f"{label:<44} {len(rows):>4} {statistics.mean(idx):>8.0f} {statistics.median(idx):>8.0f} "
            f"{statistics.mean(full):>8.0f} {statistics.median(full):>8.0f} {ratio:>7.1%} "
            f"{statistics.mean(r['calls'] for r in rows):>6.1f} {sum(r['found'] for r in rows) / len(rows):>6.0%} "
            f"{sum(r['fallback'] for r in rows) / len(rows):>6.0%}")


def cost_report(tmp: Path, method: str) -> None:
    questions = [json.loads(line) for line in (CUAD / "qa.jsonl").read_text().splitlines() if line.strip()]
    init_index(tmp / f"cuad-{method}")
    with IndexRepo(tmp / f"cuad-{method}") as repo:
        compile_contracts(repo, method)
        pages = sum(1 for p in repo.snapshot().blob_shas() if p.endswith(".md"))
        print(f"== Index compiled with '{method}'"
              + (" (against the compile stub model: schema from headings, verbatim quotes)" if method == "standard" else "")
              + f": {len(repo.snapshot().docs())} contracts, {pages} pages")
        with OpenAIStub(stub_handler) as stub:
            started = time.perf_counter()
            rows = asyncio.run(ask_all(repo, questions, stub.base_url))
            seconds = time.perf_counter() - started
    print(f"Asked {len(rows)} questions with llm navigation against the stub in {seconds:.1f}s "
          f"({sum(r['calls'] for r in rows)} model calls).\n")
    print(f"{'input tokens per question':<44} {'n':>4} {'idx mean':>8} {'idx med':>8} {'doc mean':>8} "
          f"{'doc med':>8} {'ratio':>7} {'calls':>6} {'found':>6} {'fallbk':>6}")
    for doc in sorted({r["doc"] for r in rows}, key=lambda d: next(r["chars"] for r in rows if r["doc"] == d)):
        sub = [r for r in rows if r["doc"] == doc]
        print(_line(f"{doc[:34]} ({sub[0]['chars'] // 1000}K)", sub))
    large = [r for r in rows if r["chars"] >= LARGE]
    print(_line("all contracts", rows))
    print(_line(f"contracts over {LARGE // 1000}K characters", large))
    ratio = statistics.mean(r["index"] for r in large) / statistics.mean(r["full"] for r in large)
    print(f"\nIndex ({method}) vs full document on contracts over {LARGE // 1000}K characters: {ratio:.1%} "
          f"(with the stub's fixed walk; <= 10%: {'yes' if ratio <= 0.10 else 'no'}). ratio = mean index / mean full. "
          f"Issue 15's target is measured with a capable model: README, runs 30-34.\n")


TOPICS = ("payment delivery warranty notice termination audit licence territory insurance escrow indemnity "
          "royalty software hardware training support renewal exclusivity").split()


def synthetic_index(repo: IndexRepo, subjects: int) -> tuple[str, int]:
    """Commit a synthetic document whose index has `subjects` subject pages under 10 categories
    (laid out by the real layout code, fan-out 12); returns (commit sha, pages)."""
    from hti_git.index.layout import LayoutOptions, build_pages
    from hti_git.index.model import Category, FieldValue, Record, Subject
    from hti_git.sources.types import SourceText

    parts, cats = [], [Category(f"Area {c + 1} {TOPICS[c].title()}", f"area-{c + 1}") for c in range(10)]
    offset = 0
    for i in range(subjects):
        topic = f"{TOPICS[i % len(TOPICS)]} {TOPICS[(i * 7) % len(TOPICS)]} {i}"
        text = (f"Clause {i}: the {topic} obligations apply for {i + 3} days after written notice, "
                f"unless the parties agree otherwise in writing.")
        parts.append(text)
        cats[i % 10].subjects.append(Subject(f"Clause on {topic}", f"clause-{i}", text[:80], [], topic.split()[:2],
                                             {"text": [FieldValue(text, [(offset, offset + len(text))])]}))
        offset += len(text) + 2
    body = "\n\n".join(parts) + "\n"
    source = SourceText("synthetic.txt", body, "text/plain", "sha256:synthetic", len(body))
    record = Record("Synthetic services agreement", f"A synthetic agreement of {subjects} clauses.", cats)
    pages = build_pages("synthetic", record, source, {"method": "synthetic"}, LayoutOptions(2000, 12))
    files = {p.path: p.render() for p in pages}
    files["synthetic/source.txt"] = body.encode("utf-8")
    with repo.lock():
        result = repo.commit(files, "Synthetic index for the ask overhead benchmark", replace_dirs=("synthetic",))
    return result.sha, len(pages)


def overhead_report(tmp: Path) -> None:
    init_index(tmp / "synthetic")
    with IndexRepo(tmp / "synthetic") as repo:
        subjects = 920
        sha, pages = synthetic_index(repo, subjects)
        step = subjects // OVERHEAD_QUESTIONS
        questions = [f"How long do the {TOPICS[i % len(TOPICS)]} {TOPICS[(i * 7) % len(TOPICS)]} {i} obligations apply?"
                     for i in range(3, subjects, step)]
        provider_seconds = 0.0

        class Timed(ScriptedProvider):
            async def complete(self, messages, schema=None, **params):
                nonlocal provider_seconds
                t = time.perf_counter()
                try:
                    return await super().complete(messages, schema, **params)
                finally:
                    provider_seconds += time.perf_counter() - t

        overheads, reads, found = [], [], 0
        for q in questions:
            provider_seconds = 0.0
            started = time.perf_counter()
            snapshot = repo.snapshot(sha)  # a fresh snapshot per question: nothing read is reused
            client = ModelClient(Timed(default=decide))
            answer = asyncio.run(ask_llm_async(snapshot, q, client))
            overheads.append((time.perf_counter() - started - provider_seconds) * 1000)
            reads.append(sum(s.action in ("read", "descend", "jump", "level-up") for s in answer.trace))
            found += answer.found and not answer.fallback
    median = statistics.median(overheads)
    print(f"\nNon-model overhead of ask at a revision, synthetic index of {pages} pages, {len(questions)} questions "
          f"({statistics.mean(reads):.1f} pages read on average, {found} answered from the index):")
    print(f"  median {median:.1f} ms, p90 {sorted(overheads)[int(len(overheads) * 0.9)]:.1f} ms, "
          f"max {max(overheads):.1f} ms (target < 50 ms median: {'met' if median < 50 else 'NOT met'})")


def main() -> None:
    _env()
    if not (CUAD / "qa.jsonl").exists():
        sys.exit(f"shared data not found under {CUAD} (set HTI_SHARED)")
    with tempfile.TemporaryDirectory(prefix="hti-ask-cost-") as tmp:
        methods = sys.argv[1:] or ["fast", "standard"]
        for method in methods:
            cost_report(Path(tmp), method)
        overhead_report(Path(tmp))


if __name__ == "__main__":
    main()
