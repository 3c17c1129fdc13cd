"""Recall on wording the shared contracts do not use: typical clauses inserted into contracts that lack them.

`bench/data/clause-probe.json` holds 35 clause types in 4 drafting styles each (two under a numbered
heading, two as bare paragraphs), written by a capable model from its own knowledge. For each clause type
that CUAD asks about, each of the first two shared contracts whose CUAD gold says the clause is absent
gets one variant inserted at the paragraph break nearest its middle; `fast` answers CUAD's question for
that clause type. A hit is an answer citing the inserted clause. The baseline, measured in the same run,
is plain BM25 over source.txt (`hti-git eval --baseline chunks`: top-3 passages, the same answer rule).

With `--llm RUN`, a model answers too (`hti-git ask --method llm` on the same `fast` index) for one case
a clause type: the bare paragraph of its third variant in the agency agreement, for the 28 clause types
it lacks. Its replies
come from the capable-model run recorded in bench/records/RUN-navigate.jsonl.gz (`replay_runs.py`'s
replayer); a request the record does not hold is a miss, or, with `--ask-misses URL`, is asked of a live
endpoint (a capable model behind ../shared/tools/manual_endpoint.py) and recorded.

    python bench/clause_probe.py [--hosts N] [--llm RUN [--ask-misses URL]]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchlib import CUAD, ROOT, bench_identity, require_cuad

from hti_git.compile.pipeline import compile_path
from hti_git.config import Settings
from hti_git.eval.systems import Sources, answer_chunks
from hti_git.query.offline import SOURCE_PASSAGES, ask_fast
from hti_git.store import IndexRepo
from hti_git.workspace import init_index

DATA = ROOT / "bench" / "data" / "clause-probe.json"
LLM_VARIANT = 2  # the model pass asks about each clause type's third variant (a bare paragraph) ...
LLM_HOST = "alcostoresinc-12-14-2005-ex-10-26-agency-agreement"  # ... inserted in this contract, where it lacks it
CUAD_NAME = {  # the probe's clause type -> CUAD's category
    "Right of First Refusal / First Offer / First Negotiation": "Rofr/Rofo/Rofn",
    "IP Ownership Assignment": "Ip Ownership Assignment",
    "Joint IP Ownership": "Joint Ip Ownership",
    "Unlimited / All-You-Can-Eat / Enterprise License": "Unlimited/All-You-Can-Eat-License",
}


def inserted(text: str, clause: str) -> str:
    """`text` with `clause` as its own paragraph at the line break nearest after its middle."""
    at = text.find("\n", len(text) // 2)
    at = len(text) // 2 if at < 0 else at
    return f"{text[:at]}\n\n{clause}\n\n{text[at:]}"


def span_of(source: str, clause: str) -> tuple[int, int]:
    """Where the clause landed in source.txt (the compile normalises white space)."""
    words = clause.split()
    m = re.search(r"\s+".join(re.escape(w) for w in words[:10]), source)
    if m is None:
        raise SystemExit(f"inserted clause not found in source.txt: {clause[:60]!r}")
    end = re.search(r"\s+".join(re.escape(w) for w in words[-6:]), source[m.start():])
    return m.start(), m.start() + (end.end() if end else len(clause))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=2, help="contracts lacking the clause to insert it into")
    parser.add_argument("--llm", metavar="RUN", help="also ask the model, replaying bench/records/RUN-navigate")
    parser.add_argument("--ask-misses", metavar="URL", help="with --llm: ask requests the record lacks here, record them")
    args = parser.parse_args()
    require_cuad()
    bench_identity()
    qa = [json.loads(line) for line in (CUAD / "qa.jsonl").read_text().splitlines() if line.strip()]
    question = {q["category"]: q["question"] for q in qa}
    lacking: dict[str, list[str]] = defaultdict(list)
    for q in qa:
        if not q["evidence"]:
            lacking[q["category"]].append(q["doc"])
    clauses = json.loads(DATA.read_text())["clauses"]
    cases = []  # (document name, category, host, variant, clause): a name of its own whatever --hosts is
    for t, (kind, variants) in enumerate(clauses.items()):
        category = CUAD_NAME.get(kind, kind)
        if category not in question:
            continue
        for h, host in enumerate(sorted(lacking.get(category, []))[:args.hosts]):
            cases += [(f"probe-{t:02d}-{h}-{v}", category, host, v, clause) for v, clause in enumerate(variants)]

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        init_index(Path(tmp) / "idx")
        with IndexRepo(Path(tmp) / "idx") as repo:
            for doc, _, host, _, clause in cases:
                path = Path(tmp) / f"{doc}.txt"
                path.write_text(inserted((CUAD / "contracts" / f"{host}.txt").read_text(), clause))
                compile_path(repo, path, Settings(method="fast"))
            snapshot = repo.snapshot()
            sources = Sources(snapshot)
            for doc, category, host, variant, clause in cases:
                s, e = span_of(snapshot.read_text(f"{doc}/source.txt"), clause)
                fast = ask_fast(snapshot, question[category], docs=[doc])
                flat = answer_chunks(sources, question[category], doc, None, k=SOURCE_PASSAGES)
                rows.append({"category": category, "headed": variant < 2, "doc": doc, "span": (s, e),
                             "llm_case": variant == LLM_VARIANT and host == LLM_HOST,
                             "fast": any(c.start < e and c.end > s for c in fast.citations), "fast_found": fast.found,
                             "chunks": any(c["start"] < e and c["end"] > s for c in flat.citations),
                             "chunks_found": flat.found})
            if args.llm:
                model_pass(Path(tmp) / "idx", [r for r in rows if r["llm_case"]], question, args.llm, args.ask_misses)

    def line(label: str, rs: list[dict]) -> str:
        f, c = sum(r["fast"] for r in rs), sum(r["chunks"] for r in rs)
        return (f"{label:<36} {len(rs):>4} {f:>5} ({f / len(rs):>4.0%}) {c:>6} ({c / len(rs):>4.0%})"
                f" {sum(r['fast_found'] for r in rs):>6}")

    print(f"{'clause type':<36} {'n':>4} {'fast hit':>12} {'chunks hit':>13} {'found':>6}")
    by = defaultdict(list)
    for r in rows:
        by[r["category"]].append(r)
    for category in sorted(by):
        print(line(category[:36], by[category]))
    print(line("under a numbered heading", [r for r in rows if r["headed"]]))
    print(line("bare paragraph", [r for r in rows if not r["headed"]]))
    print(line("all", rows))
    f, c = sum(r["fast"] for r in rows), sum(r["chunks"] for r in rows)
    print(f"fast / chunks hit ratio: {f / c:.2f}x" if c else "chunks hit nothing")
    if args.llm:
        model = [r for r in rows if r["llm_case"]]
        print(f"model pass ({len(model)} cases, a bare paragraph a clause type): llm hit {sum(r['llm'] for r in model)}, "
              f"found {sum(r['llm_found'] for r in model)}; fast hit {sum(r['fast'] for r in model)}, "
              f"chunks hit {sum(r['chunks'] for r in model)}; {sum(r['calls'] for r in model)} calls, "
              f"{sum(r['input_tokens'] for r in model):,} input tokens")
    return 0


def model_pass(index: Path, rows: list[dict], question: dict[str, str], run: str, ask: str | None) -> None:
    """`hti-git ask --method llm` for each row, replies from the record `run` (misses asked at `ask`)."""
    from replay_runs import Replayer, hti  # the model runs' replayer

    from tests.support.openai_stub import OpenAIStub

    if ask:  # a reply written by hand takes minutes: the model calls must wait for it
        config = index / "hti.yaml"
        config.write_text(re.sub(r"(?m)^timeout: *\d+", "timeout: 3600", config.read_text()))
    replies = Replayer((f"{run}-navigate",), ask)
    with OpenAIStub(replies) as stub:
        def one(row: dict) -> None:
            out = hti(["ask", question[row["category"]], "--doc", row["doc"], "--method", "llm", "--json"], index, stub)
            answer = json.loads(out) if out.strip() else {"found": False, "citations": [], "usage": {}}
            s, e = row["span"]
            row["llm"] = any(c["doc"] == row["doc"] and c["start"] < e and c["end"] > s for c in answer["citations"])
            row["llm_found"] = bool(answer["found"])
            usage = answer.get("usage") or {}
            row["calls"], row["input_tokens"] = usage.get("calls", 0), usage.get("input_tokens", 0)

        with ThreadPoolExecutor(4) as pool:
            list(pool.map(one, rows))
    if ask:
        replies.save(f"{run}-navigate")
    print(f"model pass ({run}-navigate): {replies.hits} requests replayed, {len(replies.misses)} never asked before"
          + (f", {len(replies.asked)} asked and recorded" if ask else ""))


if __name__ == "__main__":
    raise SystemExit(main())
