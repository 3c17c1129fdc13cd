"""One entry point for `hti-git ask`: the `fast` (no model) or `llm` method at a revision."""

from __future__ import annotations

from hti_git.config import Settings
from hti_git.errors import UsageError
from hti_git.llm.cache import CACHE_FILE
from hti_git.query.types import Answer
from hti_git.store import IndexRepo

ASK_METHODS = ("auto", "fast", "llm")


def resolve_ask_method(method: str, settings: Settings) -> str:
    """auto: llm when a model endpoint is configured (as compile's auto picks standard), else fast."""
    if method not in ASK_METHODS:
        raise UsageError(f"ask method must be one of {', '.join(ASK_METHODS)}, not {method!r}")
    if method != "auto":
        return method
    return "llm" if settings.model_configured() else "fast"


def ask_question(repo: IndexRepo, settings: Settings, question: str, *, rev: str = "HEAD",
                 docs: list[str] | None = None, method: str = "auto", max_pages: int | None = None,
                 max_level_ups: int | None = None, use_fallback: bool = True, no_cache: bool = False,
                 provider=None) -> Answer:
    """Answer `question` from the index at `rev`; never writes to the repository (the cache aside)."""
    if not question.strip():
        raise UsageError("the question is empty")
    pages = settings.max_pages if max_pages is None else max_pages
    level_ups = settings.max_level_ups if max_level_ups is None else max_level_ups
    if pages <= 0 or level_ups < 0:
        raise UsageError("--max-pages must be positive and --max-level-ups at least 0")
    snapshot = repo.snapshot(rev)
    if resolve_ask_method(method, settings) == "fast":
        from hti_git.query.offline import ask_fast

        return ask_fast(snapshot, question, docs, max_pages=pages, max_level_ups=level_ups, use_fallback=use_fallback)

    from hti_git.llm.client import build_client
    from hti_git.query.answer_llm import ask_llm

    client = build_client(settings, repo.hti_dir / CACHE_FILE, no_cache=no_cache, provider=provider)
    try:
        return ask_llm(snapshot, question, client, docs, max_pages=pages, max_level_ups=level_ups,
                       use_fallback=use_fallback, repo_root=None if repo.bare else repo.root)
    finally:
        client.cache.close()
