"""The systems an evaluation compares, each answering one question at a time.

- `index`: the compiled index at a revision, through `ask_question` (llm navigation with a model,
  else the offline `fast` path).
- `full-document`: the whole source.txt in the prompt (as numbered passages, so citations can be
  checked like the index's); cut at the end, with a note, when it would pass the context limit.
  Offline it cannot answer: it reports what its prompt would cost.
- `chunks`: the RAG baseline, the top-k BM25 passages of source.txt. With a model they go into the
  same answer prompt; offline they are the answer (extractive), under the same found threshold as
  `fast`, so both are judged on equal footing.

Every answer records its measured model usage and `read_tokens`, the estimated tokens of the text the
system read (pages opened, or the prompt): the cost when no model ran, and a check on it when one did.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from hti_git.config import Settings
from hti_git.errors import UsageError
from hti_git.index.layout import SOURCE_FILE
from hti_git.lexical import question_terms
from hti_git.llm.client import ModelClient, run_batch
from hti_git.llm.estimate import prompt_tokens
from hti_git.llm.prompts import load_template
from hti_git.query.answer_llm import answer_step, render_evidence
from hti_git.query.ask import ask_question, resolve_ask_method
from hti_git.query.evidence import Evidence, EvidenceBook
from hti_git.query.offline import DocContext, ask_fast, is_supported
from hti_git.query.types import Answer
from hti_git.store import IndexRepo, Snapshot
from hti_git.tokens import estimate_tokens

BASELINES = ("full-document", "chunks")
READ_ACTIONS = ("open", "descend", "jump", "level-up")  # trace steps that read a whole page
PASSAGE_ACTION = "read"  # a `fast` trace step that read one passage; its `tokens` are the text read


@dataclass
class SystemAnswer:
    """What one system answered to one question, with its cost."""

    answer: str
    found: bool
    answered: bool = True  # False: the system cannot answer in this mode (full-document offline)
    extractive: bool = False  # the answer is source text, not a model's reply
    fallback: bool = False
    citations: list[dict[str, Any]] = field(default_factory=list)  # {doc, page, start, end}
    usage: dict[str, int] = field(default_factory=lambda: {"calls": 0, "input_tokens": 0, "output_tokens": 0})
    read_tokens: int = 0
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SystemAnswer:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


class Sources:
    """source.txt of each document at one revision, split into BM25-scored passages (memoised)."""

    def __init__(self, snapshot: Snapshot):
        self.snapshot = snapshot
        self._contexts: dict[str, DocContext] = {}

    def context(self, doc: str) -> DocContext:
        if doc not in self._contexts:
            self._contexts[doc] = DocContext(self.snapshot, doc)
        return self._contexts[doc]

    def docs_for(self, doc: str | None) -> list[str]:
        """The documents a question is asked of: its own, else every document at the revision."""
        available = self.snapshot.docs()
        if doc is None:
            return available
        if doc not in available:
            raise UsageError(f"no document named {doc!r} at {self.snapshot.rev}")
        return [doc]


def answer_with_index(repo: IndexRepo, settings: Settings, sources: Sources, question: str, doc: str | None,
                      method: str, provider=None) -> SystemAnswer:
    """The index at `sources.snapshot`'s revision answers; fast offline, llm with a model."""
    snapshot = sources.snapshot
    if doc is not None and doc not in snapshot.docs():
        return SystemAnswer("not found", False, notes=[f"document {doc!r} is not in the index at {snapshot.rev}"])
    docs = [doc] if doc else None
    if resolve_ask_method(method, settings) == "fast":
        # ask_question's fast path, on the shared snapshot so pages are parsed once per revision.
        answer: Answer = ask_fast(snapshot, question, docs, max_pages=settings.max_pages,
                                  max_level_ups=settings.max_level_ups)
    else:
        # No response cache: the usage must be what answering costs, not what a re-run costs.
        answer = ask_question(repo, settings, question, rev=snapshot.sha or snapshot.rev, docs=docs,
                              method=method, no_cache=True, provider=provider)
    usage = {k: int(answer.usage.get(k, 0)) for k in ("calls", "input_tokens", "output_tokens")}
    if answer.method == "llm":
        read = usage["input_tokens"]
    else:
        pages = {s.page for s in answer.trace if s.action in READ_ACTIONS and s.page}
        read = sum(estimate_tokens(snapshot.page(p).body) for p in sorted(pages))  # what a reader sees
        read += sum(s.tokens for s in answer.trace if s.action == PASSAGE_ACTION)
        if answer.fallback and not any(s.action == PASSAGE_ACTION for s in answer.trace):
            read += sum(estimate_tokens(c.text) for c in answer.citations)  # source read outside the trace
    return SystemAnswer(answer.answer, answer.found, extractive=answer.method != "llm", fallback=answer.fallback,
                        citations=[_citation(c.doc, c.page, c.start, c.end) for c in answer.citations],
                        usage=usage, read_tokens=read)


def answer_full_document(sources: Sources, question: str, doc: str | None, client: ModelClient | None, *,
                         context_tokens: int, output_reserve: int, repo_root=None) -> SystemAnswer:
    """The whole source in the prompt (cut to fit `context_tokens`); offline, only its cost."""
    template = load_template("answer", repo_root)
    book = EvidenceBook("S")
    base = prompt_tokens(template.messages(question=question, evidence=render_evidence([])))
    budget = context_tokens - output_reserve - base
    used, kept, total, cut = 0, 0, 0, False
    for d in sources.docs_for(doc):
        ctx = sources.context(d)
        for s, e in ctx.passages:
            total += e - s
            cost = estimate_tokens(ctx.text[s:e]) + 3
            if cut or used + cost > budget:
                cut = True
                continue
            used += cost
            kept += e - s
            book.add(d, f"{d}/{SOURCE_FILE}", SOURCE_FILE, ctx.text[s:e], [(s, e)])
    items = list(book.items.values())
    notes = []
    if cut:
        notes.append(f"truncated: the document passes the {context_tokens:,}-token context; "
                     f"kept the first {kept:,} of {total:,} characters")
    read = prompt_tokens(template.messages(question=question, evidence=render_evidence(items)))
    if client is None:
        notes.append("no model: cannot answer; tokens are what the prompt would cost")
        return SystemAnswer("", False, answered=False, read_tokens=read, notes=notes)
    result = _model_answer(sources.snapshot, question, items, client, repo_root)
    result.read_tokens = read
    result.notes = notes + result.notes
    return result


def answer_chunks(sources: Sources, question: str, doc: str | None, client: ModelClient | None, *,
                  k: int, repo_root=None) -> SystemAnswer:
    """Top-k BM25 passages of source.txt: the model answers from them, or (offline) they are the answer."""
    q = question_terms(question)
    scored: list[tuple[float, str, int, int]] = []
    for d in sources.docs_for(doc):
        ctx = sources.context(d)
        ceiling = ctx.model.ceiling(q) or 1.0
        for i, (s, e) in enumerate(ctx.passages):
            score = ctx.model.score(q, i) / ceiling if q else 0.0
            if score > 0:
                scored.append((score, d, s, e))
    scored.sort(key=lambda x: (-x[0], x[1], x[2]))
    top = scored[:k]
    book = EvidenceBook("S")
    for _, d, s, e in sorted(top, key=lambda x: (x[1], x[2])):  # document order, as a reader sees them
        book.add(d, f"{d}/{SOURCE_FILE}", SOURCE_FILE, sources.context(d).text[s:e], [(s, e)])
    items = list(book.items.values())
    template = load_template("answer", repo_root)
    read = prompt_tokens(template.messages(question=question, evidence=render_evidence(items)))
    if client is not None:
        result = _model_answer(sources.snapshot, question, items, client, repo_root)
        result.read_tokens = read
        return result
    supported = False
    if top:  # the same answer rule as the fast index, so the comparison is like for like
        ratio, d, s, e = top[0]
        ctx = sources.context(d)
        supported = is_supported(ctx, q, ratio, ctx.text[s:e])
    if not supported:
        return SystemAnswer("not found", False, extractive=True, read_tokens=read)
    best = [t for t in top if t[0] >= top[0][0] * 0.6]  # fast's rule: the best and close runners-up
    text = "\n\n".join(" ".join(sources.context(d).text[s:e].split()) for _, d, s, e in best)
    return SystemAnswer(text, True, extractive=True, read_tokens=read,
                        citations=[_citation(d, f"{d}/{SOURCE_FILE}", s, e) for _, d, s, e in best])


def _model_answer(snapshot: Snapshot, question: str, items: list[Evidence], client: ModelClient,
                  repo_root) -> SystemAnswer:
    """One answer call over `items` with the index's answer prompt and citation checks."""
    answer = Answer(question=question, answer="", found=False, rev=snapshot.rev, commit=snapshot.sha, method="llm")
    before = client.ledger.total()
    if items:
        run_batch([answer_step(snapshot, question, client, repo_root, items, answer, "answer")],
                  close=client.provider)
    after = client.ledger.total()
    usage = {"calls": after.calls - before.calls, "input_tokens": after.input_tokens - before.input_tokens,
             "output_tokens": after.output_tokens - before.output_tokens}
    notes = [] if items else ["no passage shares a word with the question: nothing to ask"]
    if not answer.found:
        return SystemAnswer("not found", False, usage=usage, notes=notes)
    return SystemAnswer(answer.answer, True, usage=usage, notes=notes,
                        citations=[_citation(c.doc, c.page, c.start, c.end) for c in answer.citations])


def _citation(doc: str, page: str, start: int, end: int) -> dict[str, Any]:
    return {"doc": doc, "page": page, "start": int(start), "end": int(end)}
