"""Many documents in one run: expand inputs, prepare in parallel, commit in input order.

One bad file never stops the others; each failure is reported with its reason.
"""

from __future__ import annotations

import glob
import multiprocessing
import os
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hti_git.compile.pipeline import CompileResult, PreparedCompile, commit_prepared, prepare_compile
from hti_git.config import Settings
from hti_git.errors import HtiError, SourceError
from hti_git.sources import SUPPORTED_SUFFIXES, SourceText, load_source
from hti_git.store import IndexRepo


@dataclass
class BatchResult:
    results: list[CompileResult] = field(default_factory=list)
    failures: list[dict[str, str]] = field(default_factory=list)  # {"source", "error"}

    def to_list(self) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self.results] + [{"status": "failed", **f} for f in self.failures]


def expand_inputs(inputs: list[str]) -> tuple[list[Path], list[dict[str, str]]]:
    """Files as given, supported files under folders (recursively), and glob patterns, deduplicated.

    Returns (paths, failures) where failures name inputs that matched nothing.
    """
    paths: list[Path] = []
    failures: list[dict[str, str]] = []
    for item in inputs:
        p = Path(item)
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in SUPPORTED_SUFFIXES
                           and not any(part.startswith(".") for part in f.relative_to(p).parts))
            if not found:
                failures.append({"source": item, "error": f"{item}: no supported documents in this folder"})
            paths += found
        elif any(ch in item for ch in "*?[") and not p.exists():
            found = sorted(Path(m) for m in glob.glob(item, recursive=True) if Path(m).is_file())
            if not found:
                failures.append({"source": item, "error": f"{item}: pattern matched no files"})
            paths += found
        else:
            paths.append(p)
    unique: list[Path] = []
    seen: set[Path] = set()
    for p in paths:
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique, failures


class SourceReader:
    """Reads documents for a batch; with -j N > 1, PDFs are read in worker processes.

    PDFium is not thread-safe, so within one process every PDFium call waits on one lock
    (sources/pdf.py). Worker processes each hold their own PDFium and read PDFs on every core;
    `bench/pdf_parallel.py` measures both ways. Workers are spawned, never forked: forking a process
    that already runs threads (the batch's pool, SQLite, GitPython's cat-file readers) is unsafe.
    """

    def __init__(self, jobs: int, paths: list[Path], max_text_bytes: int = 50_000_000):
        self.max_text_bytes = max_text_bytes
        pdfs = sum(1 for p in paths if p.suffix.lower() == ".pdf")
        workers = min(jobs, os.cpu_count() or 1, pdfs)
        self._pool = (ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
                      if workers > 1 else None)

    def load(self, path: Path) -> SourceText:
        """The cleaned source of `path` (SourceError when unreadable), from a worker for PDFs."""
        if self._pool is not None and path.suffix.lower() == ".pdf":
            return self._pool.submit(load_source, path, self.max_text_bytes).result()
        return load_source(path, self.max_text_bytes)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)

    def __enter__(self) -> SourceReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def compile_many(
    repo: IndexRepo,
    inputs: list[str],
    settings: Settings,
    *,
    jobs: int = 1,
    one_commit: bool = False,
    on_done: Callable[[CompileResult | None, dict[str, str] | None], None] | None = None,
    **options: Any,
) -> BatchResult:
    """Compile every input; each document becomes its own commit (or one commit with one_commit)."""
    paths, failures = expand_inputs(inputs)
    batch = BatchResult(failures=list(failures))
    parallel = max(1, min(jobs, len(paths)))
    if parallel > 1:
        # `concurrency` bounds the model calls in flight across the whole run: documents prepared
        # in parallel share it evenly (each runs its own event loop, so they cannot share a semaphore).
        settings = settings.with_overrides(concurrency=max(1, settings.concurrency // parallel))
    local = threading.local()
    opened: list[IndexRepo] = []
    lock = threading.Lock()

    def worker_repo() -> IndexRepo:
        # GitPython objects are not thread-safe, and even with -j 1 the pool thread prepares the next
        # document while this thread commits the last one with `repo`: one reader per worker.
        r = getattr(local, "repo", None)
        if r is None:
            r = IndexRepo(repo.root)
            local.repo = r
            with lock:
                opened.append(r)
        return r

    def prepare(path: Path) -> PreparedCompile | dict[str, str]:
        try:
            return prepare_compile(worker_repo(), path, settings, source=reader.load(path), **options)
        except HtiError as exc:
            return {"source": str(path), "error": str(exc) if isinstance(exc, SourceError) else f"{path}: {exc}"}

    docs_seen: dict[str, str] = {}
    ready: list[PreparedCompile] = []
    reader = SourceReader(parallel, paths, settings.max_text_bytes)
    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            for path, outcome in zip(paths, pool.map(prepare, paths)):
                if isinstance(outcome, dict):
                    batch.failures.append(outcome)
                    if on_done:
                        on_done(None, outcome)
                    continue
                other = docs_seen.get(outcome.result.doc)
                if other is not None:
                    failure = {"source": str(path), "error": f"{path}: same index folder as {other} ({outcome.result.doc}/)"}
                    batch.failures.append(failure)
                    if on_done:
                        on_done(None, failure)
                    continue
                docs_seen[outcome.result.doc] = str(path)
                if one_commit:
                    ready.append(outcome)
                    continue
                try:
                    result = commit_prepared(repo, [outcome])[0]
                except HtiError as exc:
                    failure = {"source": str(path), "error": f"{path}: {exc}"}
                    batch.failures.append(failure)
                    if on_done:
                        on_done(None, failure)
                    continue
                batch.results.append(result)
                if on_done:
                    on_done(result, None)
        if one_commit and ready:
            batch.results += commit_prepared(repo, ready, one_commit=True)
            if on_done:
                for r in batch.results:
                    on_done(r, None)
    finally:
        reader.close()
        for r in opened:
            r.close()
    return batch
