"""Many documents in one run: expand inputs, prepare in parallel, commit each as it is ready.

One bad file never stops the others; each failure is reported once, with its reason.
"""

from __future__ import annotations

import contextlib
import glob
import multiprocessing
import os
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hti_git.compile.pipeline import (
    CompileJob,
    CompileResult,
    PreparedCompile,
    commit_prepared,
    plan_compile,
    prepare_compile,
)
from hti_git.config import Settings
from hti_git.errors import HtiError, OptionError, SourceError, UsageError
from hti_git.index.slug import doc_slug, name_slug
from hti_git.llm.cache import CACHE_FILE
from hti_git.sources import SUPPORTED_SUFFIXES, SourceText, load_source
from hti_git.store import IndexRepo

if TYPE_CHECKING:
    from hti_git.compile.standard import StandardOptions

MAINTAIN_EVERY = 200  # commits between `git gc --auto` checks within one batch


@dataclass
class CompileRequest:
    """What `compile` was asked to do, as given; `resolve` checks it against itself and the settings."""

    inputs: list[str]  # files, folders, glob patterns
    method: str | None = None  # auto | fast | standard; None: hti.yaml's
    doc: str | None = None  # the index folder of the one document
    branch: str | None = None
    in_place: bool = False
    replace: bool = False
    jobs: int | None = None  # model calls in flight, and documents at once; None: hti.yaml's concurrency
    one_commit: bool = False
    include_all: bool = False
    model: str | None = None
    schema_file: str | None = None  # standard only
    max_tokens: int | None = None  # standard only
    no_cache: bool = False

    @property
    def one_file(self) -> bool:
        """One input that names a file (not a folder or a pattern): its outcome is the command's own."""
        return len(self.inputs) == 1 and not Path(self.inputs[0]).is_dir() and not is_pattern(self.inputs[0])

    def resolve(self, settings: Settings) -> CompilePlan:
        """The settings, method and standard options this request runs with; OptionError for options
        that do not go together, UsageError for an unreadable --schema file."""
        if self.doc and (len(self.inputs) > 1 or Path(self.inputs[0]).is_dir()):
            raise OptionError("--doc names one document; pass a single file with it")
        configured = settings.method
        settings = settings.with_overrides(model=self.model, concurrency=self.jobs)
        # --model asks for a model: without an endpoint that is an error naming what is missing, not fast
        method = self.method or ("standard" if self.model and configured == "auto" else settings.resolved_method())
        standard = None
        if method == "standard":
            from hti_git.compile.schema import load_schema_file
            from hti_git.compile.standard import StandardOptions

            standard = StandardOptions(schema=load_schema_file(self.schema_file) if self.schema_file else None,
                                       no_cache=self.no_cache, max_tokens=self.max_tokens)
        elif self.schema_file or self.max_tokens:
            raise OptionError("--schema and --max-tokens apply to the standard method only")
        fast_because = settings.model_missing() if method == "fast" and self.method is None and configured == "auto" \
            else None
        return CompilePlan(self, settings, method, standard, fast_because)


@dataclass
class CompilePlan:
    """A checked CompileRequest: what `run_compile` and `compile --estimate` (compile/preview.py) run."""

    request: CompileRequest
    settings: Settings  # with --model and -j applied
    method: str  # fast | standard
    standard: StandardOptions | None = None
    fast_because: str | None = None  # `auto` chose fast: what a standard compile still needs


@dataclass
class BatchResult:
    results: list[CompileResult] = field(default_factory=list)
    failures: list[dict[str, str]] = field(default_factory=list)  # {"source", "error"}
    skipped: list[dict[str, str]] = field(default_factory=list)  # {"source", "reason"}
    expanded: list[str] = field(default_factory=list)  # the documents the inputs named, in order

    @property
    def total(self) -> int:
        """Documents attempted: compiled (or unchanged) and failed, inputs that matched nothing included."""
        return len(self.results) + len(self.failures)

    def to_list(self) -> list[dict[str, Any]]:
        return ([r.to_dict() for r in self.results] + [{"status": "failed", **f} for f in self.failures]
                + [{"status": "skipped", **s} for s in self.skipped])


# A folder's own paperwork, not documents to index (explicitly named files are always compiled).
NOT_DOCUMENTS = ("readme", "license", "licence", "changelog")
SKIP_REASON = "a folder's README, LICENSE or CHANGELOG is not indexed (--all includes it)"


def is_folder_paperwork(path: Path) -> bool:
    """README.md, LICENSE, LICENSE.txt, CHANGELOG.md, readme.ja.md ... (the name before its first dot)."""
    return path.name.split(".", 1)[0].lower() in NOT_DOCUMENTS


def is_pattern(item: str) -> bool:
    """An input read as a glob pattern: it has a wildcard and names no existing file."""
    return any(ch in item for ch in "*?[") and not Path(item).exists()


def expand_inputs(inputs: list[str], include_all: bool = False) -> tuple[list[Path], list[dict[str, str]]]:
    """Files as given, supported files under folders (recursively), and glob patterns, deduplicated.

    Returns (paths, failures) where failures name inputs that matched nothing.
    """
    paths, failures, _ = expand_inputs_noting_skips(inputs, include_all)
    return paths, failures


def expand_inputs_noting_skips(
    inputs: list[str], include_all: bool = False
) -> tuple[list[Path], list[dict[str, str]], list[dict[str, str]]]:
    """As expand_inputs, and the files found in folders that were left out: (paths, failures, skipped)."""
    paths: list[Path] = []
    failures: list[dict[str, str]] = []
    skipped: list[dict[str, str]] = []
    for item in inputs:
        p = Path(item)
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in SUPPORTED_SUFFIXES
                           and not any(part.startswith(".") for part in f.relative_to(p).parts))
            if not include_all:
                skipped += [{"source": str(f), "reason": SKIP_REASON} for f in found if is_folder_paperwork(f)]
                found = [f for f in found if not is_folder_paperwork(f)]
            if not found:
                failures.append({"source": item, "error": f"{item}: no supported documents in this folder"})
            paths += found
        elif is_pattern(item):
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
    return unique, failures, skipped


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
    include_all: bool = False,
    on_start: Callable[[int, list[dict[str, str]]], None] | None = None,
    on_done: Callable[[CompileResult | None, dict[str, str] | None], None] | None = None,
    executor: str = "local",
    ray_address: str | None = None,
    **options: Any,
) -> BatchResult:
    """Compile every input; each document becomes its own commit (or one commit with one_commit).

    `on_start(total, skipped)` is called once the inputs are expanded; `on_done(result, failure)`
    once per document as soon as it is committed (or has failed), in the order they finish, so
    a slow document does not hold back the lines of the ones after it. With one_commit, results
    come when the one commit is made. Each failure is reported once.
    """
    paths, failures, skipped = expand_inputs_noting_skips(inputs, include_all)
    batch = BatchResult(skipped=skipped, expanded=[str(p) for p in paths])
    if on_start:
        on_start(len(paths) + len(failures), skipped)

    def fail(failure: dict[str, str]) -> None:
        batch.failures.append(failure)
        if on_done:
            on_done(None, failure)

    for failure in failures:
        fail(failure)
    # Two inputs bound for one index folder: the later one fails, whichever finishes first.
    planned: list[Path] = []
    folders: dict[str, Path] = {}
    for path in paths:
        folder = name_slug(options["doc"], 80) if options.get("doc") else doc_slug(path.name)
        if folder in folders:
            fail({"source": str(path), "error": f"{path}: same index folder as {folders[folder]} ({folder}/)"})
            continue
        folders[folder] = path
        planned.append(path)

    parallel = max(1, min(jobs, len(planned)))
    remote = None
    if executor == "ray" and planned:
        from hti_git.compile.distributed import RayExecutor

        standard = options.get("standard")
        no_cache = standard is not None and standard.no_cache
        remote = RayExecutor(ray_address, settings.concurrency, None if no_cache else repo.hti_dir / CACHE_FILE,
                             options.get("method") or settings.resolved_method())
    elif executor != "local":
        raise UsageError(f"unknown executor {executor!r}; use local or ray")
    if parallel > 1 and remote is None:
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

    def failure(path: Path, exc: HtiError) -> dict[str, str]:
        return {"source": str(path), "error": str(exc) if isinstance(exc, SourceError) else f"{path}: {exc}"}

    def prepare(path: Path) -> PreparedCompile | CompileJob | dict[str, str]:
        try:
            if remote is None:
                return prepare_compile(worker_repo(), path, settings, source=reader.load(path), **options)
            planned = plan_compile(worker_repo(), path, settings, source=reader.load(path), **options)
            if isinstance(planned, CompileJob) and planned.standard is not None:
                from hti_git.compile.standard import load_templates

                # workers have no repository: they get its prompt templates with the job
                planned.standard.templates = load_templates(repo.root, planned.standard.schema is None)
            return planned
        except HtiError as exc:
            return failure(path, exc)

    commits = 0
    ready: list[tuple[int, PreparedCompile]] = []

    def handle(order: int, path: Path, outcome: PreparedCompile) -> None:
        nonlocal commits
        if one_commit:
            ready.append((order, outcome))
            return
        try:
            result = commit_prepared(repo, [outcome])[0]
        except HtiError as exc:
            fail({"source": str(path), "error": f"{path}: {exc}"})
            return
        batch.results.append(result)
        if result.commit:
            commits += 1
            if commits % MAINTAIN_EVERY == 0:
                _maintain(repo)  # a long batch packs as it goes, not only at the end
        if on_done:
            on_done(result, None)

    reader: SourceReader | None = None
    try:  # the Ray executor above is shut down below whatever fails from here, the reader included
        reader = SourceReader(parallel, planned, settings.max_text_bytes)
        sent: dict[Any, tuple[int, Path]] = {}
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = {pool.submit(prepare, path): (i, path) for i, path in enumerate(planned)}
            for future in as_completed(futures):
                order, path = futures[future]
                outcome = future.result()
                if isinstance(outcome, dict):
                    fail(outcome)
                elif isinstance(outcome, CompileJob):
                    sent[remote.submit(outcome)] = (order, path)  # built on the cluster, committed below
                else:
                    handle(order, path, outcome)
        if remote is not None and sent:
            _collect(remote, sent, repo, handle, fail, failure)
        if one_commit and ready:
            committed = commit_prepared(repo, [p for _, p in sorted(ready, key=lambda item: item[0])], one_commit=True)
            batch.results += committed
            if on_done:
                for r in committed:
                    on_done(r, None)
    finally:
        if reader is not None:
            reader.close()
        for r in opened:
            r.close()
        if remote is not None:
            remote.close()
    if any(r.commit for r in batch.results):
        _maintain(repo)  # pack loose objects once Git's threshold is passed (a count below it)
    return batch


def run_compile(
    repo: IndexRepo,
    plan: CompilePlan,
    *,
    on_start: Callable[[int, list[dict[str, str]]], None] | None = None,
    on_done: Callable[[CompileResult | None, dict[str, str] | None], None] | None = None,
    progress: Callable[[str], None] | None = None,
    executor: str = "local",
    ray_address: str | None = None,
) -> BatchResult:
    """`compile`: every document of a checked request, as compile_many runs them."""
    r = plan.request
    return compile_many(repo, list(r.inputs), plan.settings, jobs=r.jobs or 1, one_commit=r.one_commit,
                        include_all=r.include_all, on_start=on_start, on_done=on_done, method=plan.method,
                        doc=r.doc, branch=r.branch, in_place=r.in_place, replace=r.replace,
                        standard=plan.standard, progress=progress, executor=executor, ray_address=ray_address)


def _collect(remote, sent: dict, repo: IndexRepo, handle, fail, failure) -> None:
    """Commit each document built on the cluster as it finishes; the responses its worker fetched
    from the model go into this repository's response cache."""
    from hti_git.compile.distributed import task_error
    from hti_git.llm.cache import ResponseCache

    cache: ResponseCache | None = None
    try:
        for ref, value, error in remote.finished(list(sent)):
            order, path = sent[ref]
            if error is not None:
                cause = task_error(error)
                fail(failure(path, cause) if isinstance(cause, HtiError)
                     else {"source": str(path), "error": f"{path}: {type(cause).__name__}: {cause}"})
                continue
            prepared, responses = value
            if responses:
                cache = cache or ResponseCache(repo.hti_dir / CACHE_FILE)
                for key, completion in responses:
                    cache.put(key, completion)
            handle(order, path, prepared)
    finally:
        if cache is not None:
            cache.close()


def _maintain(repo: IndexRepo) -> None:
    """Pack under the writers' lock; packing is housekeeping, so a failure never fails the batch."""
    with contextlib.suppress(HtiError), repo.lock():
        repo.maintain()
