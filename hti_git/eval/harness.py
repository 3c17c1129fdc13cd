"""`hti-git eval`: answer a question set with the index at each revision and with baselines, score
every answer, and sum accuracy and cost per system (the paper's §4 measures, on your documents).

    run = run_eval(repo, settings, load_questions("qa.jsonl"), EvalOptions(revs=("main", "hti/x/y"),
                   baselines=("full-document", "chunks")))
    write_outputs(run, Path("eval-out"))          # report.md, results.jsonl, plot.png

Scoring: the deterministic match of match.py first; what it cannot decide goes to the LLM judge when
a model is configured, else counts as a miss labelled "judge unavailable". Evidence recall: of the gold
evidence passages located in source.txt, the share a citation overlaps. Answers and rulings are cached
under .git/hti/eval/, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hti_git import __version__
from hti_git.config import Settings
from hti_git.errors import UsageError
from hti_git.eval.cache import CACHE_FILE, EvalCache, eval_key
from hti_git.eval.evidence import EvidenceLocator, overlaps
from hti_git.eval.judge import Ruling, judge, judge_template
from hti_git.eval.match import match_answer
from hti_git.eval.parallel import answer_in_workers
from hti_git.eval.questions import Question
from hti_git.eval.systems import (
    BASELINES,
    Sources,
    SystemAnswer,
    answer_chunks,
    answer_full_document,
    answer_with_index,
)
from hti_git.index.layout import INDEX_FILE, SOURCE_FILE
from hti_git.llm.client import build_client, run_batch
from hti_git.llm.prompts import load_template
from hti_git.query.ask import CACHE_FILE as RESPONSE_CACHE_FILE
from hti_git.query.ask import resolve_ask_method
from hti_git.store import IndexRepo, Snapshot

Progress = Callable[[int, int, str], None]
DEFAULT_CONTEXT_TOKENS = 128_000
DEFAULT_CHUNKS_K = 3


@dataclass(frozen=True)
class EvalOptions:
    """What to compare and how: revisions of the index, baselines, answering method and judge."""

    revs: tuple[str, ...] = ("HEAD",)
    baselines: tuple[str, ...] = ()
    method: str = "auto"  # auto | fast | llm, as for `ask`; decides the baselines' mode too
    judge: bool = True
    judge_model: str | None = None
    chunks_k: int = DEFAULT_CHUNKS_K
    context_tokens: int = DEFAULT_CONTEXT_TOKENS
    use_cache: bool = True
    index: bool = True  # False: the baselines only (served by another model or answerer)
    jobs: int = 1  # questions answered at once, each in a worker process (eval/parallel.py)


@dataclass
class EvalRun:
    """One evaluation: per-question results, a summary per system, and revision comparisons."""

    questions: int
    mode: str  # "offline" (fast index, extractive chunks) | "model"
    model: str | None
    judge: dict[str, Any]
    revisions: list[dict[str, Any]]
    systems: list[dict[str, Any]] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)
    comparisons: list[dict[str, Any]] = field(default_factory=list)
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Everything but the per-question rows (those go to results.jsonl)."""
        return {"source": self.source, "questions": self.questions, "mode": self.mode, "model": self.model,
                "judge": self.judge, "revisions": self.revisions, "systems": self.systems,
                "comparisons": self.comparisons}


def run_eval(repo: IndexRepo, settings: Settings, questions: list[Question], options: EvalOptions, *,
             source: str = "", provider=None, judge_provider=None, progress: Progress | None = None) -> EvalRun:
    """Answer and score every question with every system; never writes to the repository's refs."""
    revs = tuple(dict.fromkeys(options.revs or ("HEAD",)))
    bad = [b for b in options.baselines if b not in BASELINES]
    if bad:
        raise UsageError(f"unknown baseline {bad[0]!r} (choose from {', '.join(BASELINES)})")
    if not options.index and not options.baselines:
        raise UsageError("--baselines-only needs at least one --baseline")
    if options.chunks_k < 1:
        raise UsageError("--chunks-k must be at least 1")
    if options.context_tokens <= settings.max_output_tokens:
        raise UsageError(f"--context-tokens must exceed max_output_tokens ({settings.max_output_tokens})")
    method = resolve_ask_method(options.method, settings)
    snapshots = [repo.snapshot(rev) for rev in revs]
    for snap in snapshots:
        if snap.sha is None or not snap.docs():
            raise UsageError(f"no compiled documents at {snap.rev}; run 'hti-git compile FILE' first")
    first_docs = snapshots[0].docs()
    missing = sorted({q.doc for q in questions if q.doc and q.doc not in first_docs})
    if missing:
        raise UsageError(f"question set names {len(missing)} document(s) not in the index at {revs[0]}: "
                         f"{', '.join(missing[:3])}")
    judge_settings = settings.with_overrides(model=options.judge_model)
    if not options.judge:
        judge_state = {"status": "off", "model": None, "note": "judge turned off (--no-judge)"}
    elif not judge_settings.model_configured():
        judge_state = {"status": "unavailable", "model": None,
                       "note": "no model configured: scored by the deterministic match only"}
    else:
        judge_state = {"status": "used", "model": judge_settings.model}
    judge_state.update(calls=0, input_tokens=0, output_tokens=0)

    run = EvalRun(len(questions), "model" if method == "llm" else "offline",
                  settings.model if method == "llm" else None, judge_state,
                  [{"rev": s.rev, "commit": s.sha} for s in snapshots], source=source)
    root = None if repo.bare else repo.root
    cache = EvalCache(repo.hti_dir / "eval" / CACHE_FILE if options.use_cache else None)
    try:
        plan = [(f"index@{s.rev}", "index", s) for s in snapshots] if options.index else []
        plan += [(b, b, snapshots[0]) for b in options.baselines]
        sources = {s.sha: Sources(s) for s in snapshots}
        total, done = len(plan) * len(questions), 0
        identity = _identity(settings, method, options, root)
        for label, kind, snap in plan:
            keys = [eval_key(kind=kind, commit=snap.sha if kind == "index" else _source_sha(snap, q.doc),
                             question=q.question, doc=q.doc, **identity[kind]) for q in questions]
            answers: dict[int, SystemAnswer] = {}
            for i, key in enumerate(keys):
                cached = cache.get(key)
                if cached is not None:
                    answers[i] = SystemAnswer.from_dict(cached)
            todo = [(i, q) for i, q in enumerate(questions) if i not in answers]
            done += len(answers)
            if answers and progress is not None:
                progress(done, total, label)
            if options.jobs > 1 and len(todo) > 1 and provider is None and snap.sha is not None:
                found = answer_in_workers(options.jobs, str(repo.git_dir), snap.sha, snap.rev, kind, settings,
                                          todo, method, options, root, _answer)
            else:
                found = ((i, _answer(kind, repo, settings, sources[snap.sha], q, method, options, provider, root))
                         for i, q in todo)
            for i, answer in found:  # each answer is cached as it comes: an interrupted run resumes
                cache.put(keys[i], answer.to_dict())
                answers[i] = answer
                done += 1
                if progress is not None:
                    progress(done, total, label)
            fresh = {i for i, _ in todo}
            for i, q in enumerate(questions):
                run.results.append(_row(label, kind, snap, q, answers[i], method, i not in fresh))
        _score(run, questions, sources, cache, judge_settings, options, judge_provider, repo, root)
    finally:
        cache.close()
    run.systems = [_summary(run, label, kind, snap, questions) for label, kind, snap in plan]
    run.comparisons = [_compare(run, f"index@{snapshots[0].rev}", f"index@{s.rev}") for s in snapshots[1:]] \
        if options.index else []
    return run


def _identity(settings: Settings, method: str, options: EvalOptions, root) -> dict[str, dict[str, Any]]:
    """Per system, what besides the commit/source and question decides its answer (the cache key)."""
    common: dict[str, Any] = {"hti_git": __version__, "method": method}
    if method == "llm":
        common.update(model=settings.model, temperature=settings.temperature,
                      answer=load_template("answer", root).sha256)
    index = dict(common, max_pages=settings.max_pages, max_level_ups=settings.max_level_ups)
    if method == "llm":
        index.update(navigate=load_template("navigate", root).sha256, route=load_template("route", root).sha256)
    return {"index": index,
            "full-document": dict(common, context=options.context_tokens, reserve=settings.max_output_tokens),
            "chunks": dict(common, k=options.chunks_k)}


def _source_sha(snap: Snapshot, doc: str | None) -> dict[str, str]:
    docs = [doc] if doc else snap.docs()
    return {d: snap.blob_shas(d).get(f"{d}/{SOURCE_FILE}", "") for d in docs}


def _answer(kind: str, repo: IndexRepo, settings: Settings, sources: Sources, q: Question, method: str,
            options: EvalOptions, provider, root) -> SystemAnswer:
    if kind == "index":
        return answer_with_index(repo, settings, sources, q.question, q.doc, method, provider)
    client = build_client(settings, None, no_cache=True, provider=provider) if method == "llm" else None
    if kind == "full-document":
        return answer_full_document(sources, q.question, q.doc, client, context_tokens=options.context_tokens,
                                    output_reserve=settings.max_output_tokens, repo_root=root)
    return answer_chunks(sources, q.question, q.doc, client, k=options.chunks_k, repo_root=root)


def _row(label: str, kind: str, snap: Snapshot, q: Question, a: SystemAnswer, method: str, cached: bool) -> dict:
    measured = method == "llm"
    return {
        "system": label, "kind": kind, "rev": snap.rev, "commit": snap.sha, "id": q.id, "line": q.line,
        "doc": q.doc, "category": q.category, "question_kind": "yes-no" if q.yes_no else "value",
        "question": q.question, "reference": q.answer, "answer": a.answer, "found": a.found,
        "answered": a.answered, "extractive": a.extractive, "fallback": a.fallback,
        "correct": None, "rule": "", "judge_reason": "", "evidence": None,
        "citations": a.citations, "usage": a.usage, "read_tokens": a.read_tokens,
        "tokens": (a.usage["input_tokens"] + a.usage["output_tokens"]) if measured else a.read_tokens,
        "tokens_basis": "measured" if measured else "estimated", "notes": a.notes, "cached": cached,
    }


def _score(run: EvalRun, questions: list[Question], sources: dict, cache: EvalCache, judge_settings: Settings,
           options: EvalOptions, judge_provider, repo: IndexRepo, root) -> None:
    """Deterministic match and evidence recall for every row; the judge for rows the match left open."""
    by_id = {q.id: q for q in questions}
    locators: dict[tuple[str, str], EvidenceLocator] = {}
    pending: list[dict] = []
    for row in run.results:
        q = by_id[row["id"]]
        row["evidence"] = _evidence(q, row, sources[row["commit"]].snapshot, locators)
        if not row["answered"]:
            row["rule"] = "cannot answer without a model"
            continue
        m = match_answer(q.answer, row["answer"], row["found"], extractive=row["extractive"])
        row["correct"], row["rule"] = m.correct, m.rule
        if m.correct is None:
            pending.append(row)
    if not pending:
        return
    if run.judge["status"] != "used":
        for row in pending:
            row["correct"] = False
            row["rule"] += f" (judge {run.judge['status']})"
        return
    template = judge_template(root)
    keys = [eval_key(kind="judge", model=judge_settings.model, template=template.sha256, question=r["question"],
                     reference=r["reference"], answer=r["answer"]) for r in pending]
    todo = [(r, k) for r, k in zip(pending, keys) if cache.get(k) is None]
    if todo:
        client = build_client(judge_settings, repo.hti_dir / RESPONSE_CACHE_FILE, provider=judge_provider)
        try:
            rulings = run_batch([judge(client, template, r["question"], r["reference"], r["answer"]) for r, _ in todo],
                                close=client.provider)
        finally:
            client.cache.close()
        for (_, key), ruling in zip(todo, rulings):
            cache.put(key, ruling.__dict__)
            run.judge["calls"] += 1
            run.judge["input_tokens"] += ruling.input_tokens
            run.judge["output_tokens"] += ruling.output_tokens
    for row, key in zip(pending, keys):
        ruling = Ruling(**cache.get(key))
        row["correct"], row["rule"], row["judge_reason"] = ruling.equivalent, "judge", ruling.reason


def _evidence(q: Question, row: dict, snap: Snapshot, locators: dict) -> dict | None:
    """{gold, covered, recall} over the gold passages located in source.txt; None without gold."""
    if not q.evidence:
        return None
    docs = [q.doc] if q.doc else snap.docs()
    located = covered = 0
    for text in q.evidence:
        spans = []
        for d in docs:
            if not snap.exists(f"{d}/{SOURCE_FILE}"):
                continue
            key = (snap.sha, d)
            if key not in locators:
                locators[key] = EvidenceLocator(snap.read_text(f"{d}/{SOURCE_FILE}"))
            spans += [(d, s, e) for s, e in locators[key].find(text)]
        if not spans:
            continue
        located += 1
        if any(c["doc"] == d and overlaps((c["start"], c["end"]), (s, e)) for c in row["citations"] for d, s, e in spans):
            covered += 1
    if not located:
        return {"gold": 0, "covered": 0, "recall": None}
    return {"gold": located, "covered": covered, "recall": covered / located}


def _build_tokens(snap: Snapshot, questions: list[Question]) -> int:
    """Tokens the compile of the documents asked about spent, from their root pages' provenance."""
    docs = {q.doc for q in questions if q.doc}
    if any(q.doc is None for q in questions):
        docs = set(snap.docs())
    total = 0
    for d in sorted(docs):
        if not snap.exists(f"{d}/{INDEX_FILE}"):
            continue
        usage = (snap.page(f"{d}/{INDEX_FILE}").meta.get("provenance") or {}).get("usage") or {}
        total += int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)
    return total


def _summary(run: EvalRun, label: str, kind: str, snap: Snapshot, questions: list[Question]) -> dict[str, Any]:
    rows = [r for r in run.results if r["system"] == label]
    n = len(rows)
    answered = all(r["answered"] for r in rows)

    def accuracy(subset: list[dict]) -> float | None:
        return (sum(r["correct"] is True for r in subset) / len(subset)) if (subset and answered) else None

    gold = [r["evidence"]["recall"] for r in rows if r["evidence"] and r["evidence"]["recall"] is not None]
    inference = sum(r["tokens"] for r in rows)
    build = _build_tokens(snap, questions) if kind == "index" else 0
    return {
        "system": label, "kind": kind, "rev": snap.rev if kind == "index" else None, "commit": snap.sha,
        "questions": n, "answered": answered,
        "correct": sum(r["correct"] is True for r in rows) if answered else None,
        "accuracy": accuracy(rows),
        "accuracy_yes_no": accuracy([r for r in rows if r["question_kind"] == "yes-no"]),
        "accuracy_value": accuracy([r for r in rows if r["question_kind"] == "value"]),
        "judged": sum(r["rule"] == "judge" for r in rows),
        "unmatched": sum("judge unavailable" in r["rule"] or "judge off" in r["rule"] for r in rows),
        "found": sum(bool(r["found"]) for r in rows),
        "fallback": sum(bool(r["fallback"]) for r in rows),
        "evidence_recall": (sum(gold) / len(gold)) if gold and answered else None,
        "evidence_questions": len(gold),
        "calls": sum(r["usage"]["calls"] for r in rows),
        "input_tokens": sum(r["usage"]["input_tokens"] for r in rows),
        "output_tokens": sum(r["usage"]["output_tokens"] for r in rows),
        "tokens_basis": rows[0]["tokens_basis"] if rows else "estimated",
        "tokens_per_question": inference / n if n else 0.0,
        "inference_tokens": inference,
        "build_tokens": build,
        "total_tokens": build + inference,
        "truncated": sum(any(str(x).startswith("truncated") for x in r["notes"]) for r in rows),
    }


def _compare(run: EvalRun, base: str, other: str) -> dict[str, Any]:
    """Per-question wins (right at `other`, not at `base`) and losses (the reverse)."""
    before = {r["id"]: r for r in run.results if r["system"] == base}
    wins, losses, same = [], [], 0
    for r in (r for r in run.results if r["system"] == other):
        a, b = before[r["id"]]["correct"] is True, r["correct"] is True
        entry = {"id": r["id"], "doc": r["doc"], "question": r["question"], "reference": r["reference"],
                 "before": before[r["id"]]["answer"], "after": r["answer"]}
        if b and not a:
            wins.append(entry)
        elif a and not b:
            losses.append(entry)
        else:
            same += 1
    return {"base": base, "other": other, "wins": wins, "losses": losses, "unchanged": same}
