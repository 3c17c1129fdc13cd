"""An agent answering CUAD questions only through `hti-git mcp`: what it reads, per question.

The agent (a person or a model at a terminal) drives the MCP server with the SDK's own client, one
tool call per command; every result is printed and logged with its size. It never opens the contract
or source.txt except through the tools. Answers are written down before the gold is looked at.

    python bench/mcp_agent_tokens.py setup                      # fast-compile one CUAD contract
    python bench/mcp_agent_tokens.py questions                  # the sampled questions (no answers)
    python bench/mcp_agent_tokens.py call Q1 outline depth=2    # one tool call for question Q1, logged
    python bench/mcp_agent_tokens.py answer Q1 "New York" L21-L21   # the agent's answer and citation
    python bench/mcp_agent_tokens.py report                     # tokens read vs the document; then gold
    python bench/mcp_agent_tokens.py judge Q1 correct|partial|wrong  # after report shows the gold

Tokens use hti_git.tokens.estimate_tokens (the project's estimator), with characters/4 beside it.
The whole document's tokens are source.txt's, counted by the script (never shown to the agent).
State lives in bench/out/mcp-agent/ (index repository, calls.jsonl, answers.json, judgments.json).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from benchlib import CUAD, ROOT, bench_identity, require_cuad

from hti_git.tokens import estimate_tokens

DOC = "microgenics-corporation-collaborative-development-and-commer"
OUT = Path(os.environ.get("HTI_BENCH_OUT", ROOT / "bench" / "out" / "mcp-agent"))
IDX = OUT / "idx"
CALLS, ANSWERS, JUDGMENTS = OUT / "calls.jsonl", OUT / "answers.json", OUT / "judgments.json"
EVERY = 5  # every 5th question of the document: a sample chosen without looking at the answers


def _questions() -> list[dict]:
    rows = [json.loads(line) for line in (require_cuad() / "qa.jsonl").read_text().splitlines() if line.strip()]
    mine = [r for r in rows if r["doc"] == DOC]
    return [{**r, "id": f"Q{i + 1}"} for i, r in enumerate(mine[::EVERY])]


def _load(path: Path, default):
    return json.loads(path.read_text()) if path.exists() else default


def setup(_: argparse.Namespace) -> None:
    from click.testing import CliRunner

    from hti_git.cli import main
    from hti_git.workspace import init_index

    bench_identity()
    OUT.mkdir(parents=True, exist_ok=True)
    init_index(IDX)
    result = CliRunner().invoke(main, ["-C", str(IDX), "compile", "--method", "fast",
                                       str(CUAD / "contracts" / f"{DOC}.txt")])
    print(result.output.strip())


def questions(_: argparse.Namespace) -> None:
    for q in _questions():
        print(f"{q['id']}  [{q['category']}, {q['kind']}]  {q['question']}")


async def _call(tool: str, args: dict) -> tuple[str, bool]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "hti_git", "-C", str(IDX), "mcp"],
                                   env=dict(os.environ))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool(tool, args)
        return "\n".join(c.text for c in result.content if getattr(c, "text", None)), bool(result.is_error)


def _value(text: str):
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return text


def call(ns: argparse.Namespace) -> None:
    import anyio

    args = dict(a.split("=", 1) for a in ns.args)
    args = {k: _value(v) for k, v in args.items()}
    text, is_error = anyio.run(_call, ns.tool, args)
    with CALLS.open("a", encoding="utf-8") as f:
        f.write(json.dumps({"q": ns.qid, "tool": ns.tool, "args": args, "error": is_error, "chars": len(text),
                            "tokens": estimate_tokens(text), "text": text}) + "\n")
    print(text)
    print(f"\n<<{ns.qid} {ns.tool}: {len(text):,} chars, ~{estimate_tokens(text):,} tokens{' ERROR' if is_error else ''}>>")


def answer(ns: argparse.Namespace) -> None:
    answers = _load(ANSWERS, {})
    answers[ns.qid] = {"answer": ns.text, "citation": ns.citation}
    ANSWERS.write_text(json.dumps(answers, indent=2))


def judge(ns: argparse.Namespace) -> None:
    judgments = _load(JUDGMENTS, {})
    judgments[ns.qid] = ns.verdict
    JUDGMENTS.write_text(json.dumps(judgments, indent=2))


def _gold_lines(source: str, passages: list[str]) -> list[tuple[int, int]]:
    """Line ranges of the gold passages in source.txt; a passage broken by a page header that cleaning
    kept is located by its first 12 words."""
    out = []
    for passage in passages:
        words = passage.split()
        m = re.search(r"\s+".join(map(re.escape, words)), source) or (
            re.search(r"\s+".join(map(re.escape, words[:12])), source) if len(words) >= 12 else None)
        if m:
            out.append((source.count("\n", 0, m.start()) + 1, source.count("\n", 0, m.end()) + 1))
    return out


def report(ns: argparse.Namespace) -> None:
    source = (IDX / DOC / "source.txt").read_text(encoding="utf-8")
    doc_tokens, doc_chars = estimate_tokens(source), len(source)
    calls = [json.loads(line) for line in CALLS.read_text().splitlines()] if CALLS.exists() else []
    answers, judgments = _load(ANSWERS, {}), _load(JUDGMENTS, {})
    rows, totals = [], []
    print(f"document {DOC}: {doc_chars:,} chars, ~{doc_tokens:,} tokens (chars/4: {doc_chars // 4:,})\n")
    print("| question | category | tool calls | tokens read | chars/4 | share of document | evidence hit | verdict |")
    print("|---|---|---:|---:|---:|---:|---|---|")
    for q in _questions():
        mine = [c for c in calls if c["q"] == q["id"]]
        if not mine:
            continue
        tokens, chars = sum(c["tokens"] for c in mine), sum(c["chars"] for c in mine)
        cited = [tuple(map(int, m)) for m in re.findall(r"L(\d+)-L(\d+)", answers.get(q["id"], {}).get("citation", ""))]
        gold = _gold_lines(source, q["evidence"])
        hit = "n/a (no gold passage)" if not q["evidence"] else (
            "yes" if any(a <= gb and ga <= b for a, b in cited for ga, gb in gold) else "no")
        verdict = judgments.get(q["id"], "-")
        rows.append((q, tokens, chars, hit, verdict))
        totals.append(tokens)
        print(f"| {q['id']} | {q['category']} | {len(mine)} | {tokens:,} | {chars // 4:,} | "
              f"{tokens / doc_tokens:.1%} | {hit} | {verdict} |")
    if totals:
        mean = sum(totals) / len(totals)
        judged = [v for *_, v in rows if v != "-"]
        acc = sum(v == "correct" for v in judged) + 0.5 * sum(v == "partial" for v in judged)
        print(f"\nmean tokens read per question: {mean:,.0f} ({mean / doc_tokens:.1%} of the document's {doc_tokens:,}); "
              f"median {sorted(totals)[len(totals) // 2]:,}; max {max(totals):,}")
        if judged:
            print(f"accuracy (judged {len(judged)}/{len(rows)}; partial counts half): {acc / len(judged):.0%}")
    if ns.calls:
        print("\n## tool calls (what the agent read)\n")
        for c in calls:
            args = ", ".join(f"{k}={v!r}" for k, v in c["args"].items() if k != "doc")
            print(f"- {c['q']} {c['tool']}({args}): {c['chars']:,} chars, ~{c['tokens']:,} tokens"
                  f"{' (error)' if c['error'] else ''}")
    if ns.gold:
        print("\n## answers against gold (look only after every answer is written)\n")
        for q, *_ in rows:
            a = answers.get(q["id"], {})
            print(f"{q['id']} {q['question']}\n  agent: {a.get('answer')}  [{a.get('citation')}]\n"
                  f"  gold:  {q['answer']}\n  gold evidence: {' | '.join(e[:200] for e in q['evidence'])}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("setup").set_defaults(fn=setup)
    sub.add_parser("questions").set_defaults(fn=questions)
    p = sub.add_parser("call")
    p.add_argument("qid")
    p.add_argument("tool")
    p.add_argument("args", nargs="*", help="key=value tool arguments")
    p.set_defaults(fn=call)
    p = sub.add_parser("answer")
    p.add_argument("qid")
    p.add_argument("text")
    p.add_argument("citation", nargs="?", default="")
    p.set_defaults(fn=answer)
    p = sub.add_parser("judge")
    p.add_argument("qid")
    p.add_argument("verdict", choices=["correct", "partial", "wrong"])
    p.set_defaults(fn=judge)
    p = sub.add_parser("report")
    p.add_argument("--gold", action="store_true", help="also print the gold answers (after answering)")
    p.add_argument("--calls", action="store_true", help="also list every tool call with its size")
    p.set_defaults(fn=report)
    ns = parser.parse_args()
    ns.fn(ns)


if __name__ == "__main__":
    main()
