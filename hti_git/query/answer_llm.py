"""`llm` answering: route, navigate with the model, answer with checked citations, fall back to source.

    client = build_client(settings, repo.hti_dir / "cache.sqlite")
    answer = ask_llm(repo.snapshot("v1"), "Who may terminate?", client, repo_root=repo.root)

Reads the index at one revision from Git objects and never writes to the repository; the response
cache (SQLite, WAL) is the only thing an ask writes, so several asks can run at once.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from hti_git.index.layout import SOURCE_FILE
from hti_git.index.linemap import LineMap
from hti_git.index.tree import requested_documents, source_page_starts
from hti_git.lexical import question_terms
from hti_git.llm.client import ModelClient, run_batch
from hti_git.llm.prompts import Template, fence, load_template
from hti_git.query.evidence import Evidence, EvidenceBook, cite, table_suffix
from hti_git.query.model_nav import CITATIONS_SCHEMA, Budget, DocNavigation, step_tokens
from hti_git.query.offline import DocContext, holds_clause_words
from hti_git.query.route import route
from hti_git.query.types import Answer, Citation, Step
from hti_git.sentences import widen_to_sentence
from hti_git.store import Snapshot
from hti_git.text import one_line, table_note
from hti_git.tokens import estimate_tokens

ANSWER_SCHEMA = {
    "type": "object",
    "properties": {
        "found": {"type": "boolean"},
        "answer": {"type": "string"},
        "citations": CITATIONS_SCHEMA,
    },
    "required": ["found", "answer", "citations"],
    "additionalProperties": False,
}
FALLBACK_TOKENS = 1200  # source.txt read on a miss: the best BM25 windows up to this many tokens
LEAN_FALLBACK_TOKENS = 400  # ... when no clause holds the question's own words (`fast` finds none)
WINDOW_EDGE_CHARS = 300  # a fallback window grows at most this much at each edge to end on a sentence
MAX_CITATIONS = 6


def ask_llm(snapshot: Snapshot, question: str, client: ModelClient, docs: list[str] | None = None, *,
            max_pages: int = 12, max_level_ups: int = 2, use_fallback: bool = True,
            repo_root: Path | None = None, fallback_tokens: int = FALLBACK_TOKENS) -> Answer:
    """Answer `question` from the index at `snapshot` with the model (sync; closes the provider)."""
    coro = ask_llm_async(snapshot, question, client, docs, max_pages=max_pages, max_level_ups=max_level_ups,
                         use_fallback=use_fallback, repo_root=repo_root, fallback_tokens=fallback_tokens)
    return run_batch([coro], close=client.provider)[0]


async def ask_llm_async(snapshot: Snapshot, question: str, client: ModelClient, docs: list[str] | None = None, *,
                        max_pages: int = 12, max_level_ups: int = 2, use_fallback: bool = True,
                        repo_root: Path | None = None, fallback_tokens: int = FALLBACK_TOKENS) -> Answer:
    """The async form of ask_llm, for callers that ask many questions in one event loop."""
    answer = Answer(question=question, answer="", found=False, rev=snapshot.rev, commit=snapshot.sha, method="llm")
    before = client.ledger.total()
    stages_before = client.ledger.to_dict()["stages"]
    available, candidates = requested_documents(snapshot, docs)
    if candidates is None:
        candidates = await route(snapshot, question, available, client, load_template("route", repo_root), answer.trace)

    book = EvidenceBook("E")
    walks: list[DocNavigation] = []
    if candidates:
        navigate = load_template("navigate", repo_root)
        share = max(1, max_pages // len(candidates))  # the page budget is split; each tree has its own level-ups
        walks = [DocNavigation(snapshot, d, question, client, navigate, Budget(share, max_level_ups), book)
                 for d in candidates]
        await asyncio.gather(*(w.run() for w in walks))
        for walk in walks:
            answer.trace += walk.trace
        read = [item for w in walks for path in w.pages for item in book.for_page(path)]
        walk = walks[0]
        if len(walks) == 1 and walk.reply is not None:
            # navigation answered in its last reply, from the pages shown, the items it kept and
            # the descriptions of the links it was shown
            take_reply(snapshot, walk.reply, read + walk.link_items(), answer, "answer", tokens=0,
                       where=walk.pages[-1])
            if not answer.found and walk.left_out:
                answer.trace.append(Step("", "answer", note="some values were not shown: asking over all pages read"))
                await answer_step(snapshot, question, client, repo_root, read, answer, "answer")
        elif read:
            await answer_step(snapshot, question, client, repo_root, read, answer, "answer")
        else:
            answer.trace.append(Step("", "stop", note="no subject page reached: nothing to answer from"))

    concluded = len(walks) == 1 and walks[0].absent
    if not answer.found and use_fallback and concluded:
        # navigation opened the likeliest branch and says the document lacks it: no source read
        answer.trace.append(Step("", "fallback", note="skipped: navigation read the likeliest branch and "
                                                      "found the document lacks it (no source check asked)"))
    elif not answer.found and use_fallback:
        docs = candidates or available
        budget = fallback_tokens
        if not holds_clause_words(snapshot, question, docs):
            # `fast` finds no clause holding the question's own words either: the clause is most
            # likely absent, so the fallback reads only the best passages, a last check at less cost
            budget = min(fallback_tokens, LEAN_FALLBACK_TOKENS)
            answer.trace.append(Step("", "fallback", note=f"no clause holds the question's own words: "
                                                          f"reading {budget:,} tokens of source.txt, not {fallback_tokens:,}"))
        windows = source_windows(snapshot, docs, question, budget)
        if windows:
            answer.fallback = True
            await answer_step(snapshot, question, client, repo_root, windows, answer, "fallback")
        else:
            answer.trace.append(Step("", "fallback", note="no passage of source.txt shares a word with the question"))
    if not answer.found:
        answer.answer = "not found"
        answer.citations = []
    after = client.ledger.total()
    answer.usage = {
        "calls": after.calls - before.calls,
        "cached_calls": after.cached_calls - before.cached_calls,
        "input_tokens": after.input_tokens - before.input_tokens,
        "output_tokens": after.output_tokens - before.output_tokens,
        "stages": _stage_deltas(stages_before, client.ledger.to_dict()["stages"]),
    }
    return answer


def _stage_deltas(before: dict, after: dict) -> dict:
    """Per-stage counters spent between two ledger readings (route, navigate, answer)."""
    out = {}
    for stage, counts in after.items():
        delta = {k: v - before.get(stage, {}).get(k, 0) for k, v in counts.items()}
        if any(delta.values()):
            out[stage] = delta
    return out


def render_evidence(items: list[Evidence]) -> str:
    """Evidence grouped by page (or window), each item with its id, fenced as document data."""
    rows: list[str] = []
    last = None
    for item in items:
        if item.page != last:
            rows.append(f"From {item.page}:" if item.label == SOURCE_FILE else f"Page {item.page.split('/', 1)[-1]}:")
            last = item.page
        text = " ".join(item.text.split()) + table_suffix(item)
        rows.append(f"[{item.id}] {text}" if item.label == SOURCE_FILE else f"[{item.id}] {item.label}: {text}")
    return fence("\n".join(rows))


async def answer_step(snapshot: Snapshot, question: str, client: ModelClient, repo_root: Path | None,
                       items: list[Evidence], answer: Answer, stage_action: str) -> None:
    """One `answer` call over `items`; sets answer.found/answer/citations only when a citation holds."""
    template: Template = load_template("answer", repo_root)
    messages = template.messages(question=question, evidence=render_evidence(items))
    label = "fallback" if stage_action == "fallback" else f"{len(items)} evidence items"
    completion = await client.complete("answer", messages, ANSWER_SCHEMA, label=label)
    data = completion.json if isinstance(completion.json, dict) else {}
    page = items[0].page if stage_action == "fallback" else ""
    take_reply(snapshot, data, items, answer, stage_action, step_tokens(completion), page)


def take_reply(snapshot: Snapshot, data: dict, items: list[Evidence], answer: Answer, stage_action: str,
               tokens: int, where: str = "") -> None:
    """Set answer.found/answer/citations from a reply {found, answer, citations} when a citation of
    one of `items` holds; otherwise leave the answer not found and say why in the trace."""
    found = bool(data.get("found")) and bool(str(data.get("answer") or "").strip())
    if found and str(data.get("answer")).strip().lower().rstrip(".") == "not found":
        found = False
    if not found:
        answer.trace.append(Step(where, stage_action, note=f"not found in {len(items)} evidence items", tokens=tokens))
        return
    by_id = {i.id: i for i in items}
    line_maps: dict[str, LineMap] = {}
    citations: list[Citation] = []
    dropped: list[str] = []
    for raw in (data.get("citations") or [])[: MAX_CITATIONS * 2]:
        ref = str((raw or {}).get("evidence", "")).strip().strip("[]").upper() if isinstance(raw, dict) else ""
        item = by_id.get(ref)
        if item is None:
            dropped.append(f"{ref or '?'}: no such evidence item")
            continue
        source = snapshot.read_text(f"{item.doc}/{SOURCE_FILE}")
        if item.doc not in line_maps:
            line_maps[item.doc] = LineMap(source, source_page_starts(snapshot, item.doc))
        found, why = cite(item, str(raw.get("quote") or ""), source, line_maps[item.doc])
        if not found:
            dropped.append(why)
        for citation in found:
            if not any(c.doc == citation.doc and c.start == citation.start and c.end == citation.end for c in citations):
                citations.append(citation)
    for why in dropped:
        answer.trace.append(Step(where, "drop", note=f"citation dropped: {why}"))
    if not citations:
        answer.trace.append(Step(where, stage_action, tokens=tokens,
                                 note="answered without a citation that holds: treated as a miss"))
        return
    answer.found = True
    answer.answer = str(data["answer"]).strip()
    answer.citations = citations[:MAX_CITATIONS]
    answer.trace.append(Step(citations[0].page, stage_action, tokens=tokens,
                             note=f"{len(citations)} citation(s): {one_line(answer.answer, 80)}"))


def source_windows(snapshot: Snapshot, docs: list[str], question: str, budget_tokens: int) -> list[Evidence]:
    """The best BM25 passages of each document's source.txt, up to `budget_tokens`, in document order."""
    q = question_terms(question)
    if not q:
        return []
    scored = []
    contexts = {d: DocContext(snapshot, d) for d in docs}
    for doc, ctx in contexts.items():
        for i, (s, e) in enumerate(ctx.passages):
            score = ctx.model.score(q, i) / (ctx.model.ceiling(q) or 1.0)
            if score > 0:
                scored.append((score, doc, s, e))
    scored.sort(key=lambda x: (-x[0], x[1], x[2]))
    chosen: list[tuple[str, int, int]] = []
    used = 0
    for _, doc, s, e in scored:
        cost = estimate_tokens(contexts[doc].text[s:e]) + 8
        if used + cost > budget_tokens:
            if chosen:
                break
            e = min(e, s + budget_tokens * 4)  # one passage larger than the whole budget: its head
            cost = budget_tokens
        chosen.append((doc, s, e))
        used += cost
    # a window starts and ends on sentence (or list-item, or table-row) edges, never mid-clause;
    # windows that then touch are one
    windows: list[list] = []
    for doc, s, e in sorted(chosen):
        s, e = widen_to_sentence(contexts[doc].text, s, e, WINDOW_EDGE_CHARS)
        if windows and windows[-1][0] == doc and s <= windows[-1][2]:
            windows[-1][2] = max(windows[-1][2], e)
        else:
            windows.append([doc, s, e])
    book = EvidenceBook("S")
    for doc, s, e in windows:
        item = book.add(doc, f"{doc}/{SOURCE_FILE}", SOURCE_FILE, contexts[doc].text[s:e], [(s, e)])
        item.table = table_note(contexts[doc].text, s, e)  # "118,254" of a statement "(In millions)"
    return list(book.items.values())
