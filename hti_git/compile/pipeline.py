"""One compile, end to end: source -> record -> pages -> one commit (or nothing, if unchanged)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ruamel.yaml.error import YAMLError

from hti_git import FORMAT_VERSION, __version__
from hti_git.compile.fast import compile_fast
from hti_git.compile.schema import CategorySpec, FieldSpec, Schema
from hti_git.config import Settings
from hti_git.errors import HtiError, UsageError
from hti_git.index.catalog import CATALOG_DIR, LEGACY_FILE, make_entry, updated_catalog
from hti_git.index.layout import INDEX_FILE, SCHEMA_FILE, SOURCE_FILE, LayoutOptions, build_pages
from hti_git.index.model import Record
from hti_git.index.page import dump_yaml, load_yaml
from hti_git.index.slug import doc_slug, name_slug, slugify
from hti_git.llm.cache import CACHE_FILE
from hti_git.llm.ledger import usage_trailers
from hti_git.sources import SourceText, load_source
from hti_git.store import IndexRepo, tree_sha
from hti_git.text import canonical_sha256

if TYPE_CHECKING:
    from hti_git.compile.standard import StandardOptions

Progress = Callable[[str], None]
SOURCES_TRAILER = "HTI-Sources"  # {doc: source path relative to the repository root}, JSON


@dataclass
class CompileResult:
    """What one document's compile did, for the CLI to render as text or JSON."""

    doc: str
    source: str
    method: str
    status: str  # committed | unchanged | branch
    commit: str | None = None
    branch: str | None = None
    pages: int = 0
    subjects: int = 0
    seconds: float = 0.0
    usage: dict[str, int] = field(default_factory=dict)
    changed: int = 0
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def schema_of(record: Record) -> dict[str, Any]:
    """The schema a fast record follows, in the same form as a standard compile's schema.yaml."""

    def category(c) -> CategorySpec:
        names: list[str] = []
        for s in c.subjects:
            names += [name for name in s.fields if name not in names]
        return CategorySpec(c.name, c.slug, fields=[FieldSpec(n) for n in names],
                            children=[category(k) for k in c.children])

    overview = "Categories found in the document's own structure (fast method, no model)."
    return Schema(overview, [category(c) for c in record.categories]).to_dict()


def method_identity(method: str, settings: Settings, prompts: dict[str, str] | None = None,
                    schema_sha: str | None = None) -> dict[str, Any]:
    """Everything besides the source that decides a compile's output; differing -> new branch.

    For `standard`: the model and its parameters, chunking, the prompt templates' hashes and, when
    the schema is given (--schema FILE), its hash; a discovered schema follows from the rest.
    """
    identity: dict[str, Any] = {
        "method": method,
        "layout": {"page_budget": settings.page_budget, "fanout": settings.fanout},
    }
    if method == "standard":
        identity["model"] = {
            "provider": settings.provider,
            "name": settings.model,
            "temperature": settings.temperature,
            "max_output_tokens": settings.max_output_tokens,
        }
        identity["layout"].update(chunk_size=settings.chunk_size, chunk_overlap=settings.chunk_overlap)
        identity["prompts"] = dict(sorted((prompts or {}).items()))
        if schema_sha is not None:
            identity["schema_sha256"] = schema_sha
    return identity


def provenance_for(source: SourceText, identity: dict[str, Any], schema_sha: str, usage: dict[str, int]) -> dict[str, Any]:
    return {
        "format": FORMAT_VERSION,
        "hti_git": __version__,
        "source": {
            "name": source.name,
            "media_type": source.media_type,
            "sha256": "sha256:" + source.sha256,
            "raw_sha256": "sha256:" + source.raw_sha256,
            "bytes": source.raw_bytes,
            "chars": len(source.text),
            "pages": source.page_count,
            **({"page_starts": list(source.page_starts)} if source.page_starts else {}),
        },
        **identity,
        "schema_sha256": schema_sha,
        "prompts": identity.get("prompts", {}),
        "usage": usage,
    }


@dataclass
class RecordBuild:
    """What a compile method produces before layout: the record, its schema and what it cost."""

    record: Record
    schema: dict[str, Any]
    usage: dict[str, Any]
    prompts: dict[str, str] = field(default_factory=dict)  # template name -> sha256
    notes: list[str] = field(default_factory=list)  # what the method dropped or repaired, for the user


@dataclass
class PreparedCompile:
    """A compile computed but not yet committed: the files to write and where they go."""

    result: CompileResult
    files: dict[str, bytes] = field(default_factory=dict)
    message: str = ""
    trailers: dict[str, str] = field(default_factory=dict)
    branch: str | None = None
    catalog_entry: dict[str, Any] = field(default_factory=dict)  # this document's line of its catalogue shard


def build_record(method: str, source: SourceText, settings: Settings, repo_root: Path | None, progress: Progress,
                 standard: StandardOptions | None = None, cache_path: Path | None = None) -> RecordBuild:
    """Run one compile method over a source. `fast` needs nothing else; `standard` calls a model."""
    if method == "fast":
        record = compile_fast(source)
        usage = {"calls": 0, "cached_calls": 0, "input_tokens": 0, "output_tokens": 0}
        return RecordBuild(record, schema_of(record), usage)
    if method != "standard":
        raise UsageError(f"unknown compile method {method!r}; use fast or standard")
    from hti_git.compile.standard import compile_standard

    built = compile_standard(source, settings, repo_root, cache_path, progress, standard)
    return RecordBuild(built.record, built.schema, built.usage, built.prompts, notes=built.notes)


def existing_schema(snapshot, doc: str):
    """The schema a document's index at `snapshot` was compiled with (None if absent or unreadable)."""
    from hti_git.compile.schema import schema_from_data

    path = f"{doc}/{SCHEMA_FILE}"
    if not snapshot.exists(path):
        return None
    try:
        data = load_yaml(snapshot.read_text(path))
        return schema_from_data(data, strict=True)
    except (HtiError, YAMLError, UnicodeDecodeError):  # an unreadable schema is rediscovered, never fatal
        return None


def compile_identity(method: str, settings: Settings, repo_root: Path | None,
                     standard: StandardOptions | None) -> tuple[dict[str, Any], StandardOptions | None]:
    """The settings identity a compile records (and compares), and the standard options it runs with."""
    if method != "standard":
        return method_identity(method, settings), standard
    from hti_git.compile.standard import StandardOptions, prompt_hashes

    standard = StandardOptions(**vars(standard)) if standard is not None else StandardOptions()
    given_sha = canonical_sha256(standard.schema.to_dict()) if standard.schema is not None else None
    return method_identity(method, settings, prompt_hashes(repo_root, standard), given_sha), standard


def same_settings(provenance: dict[str, Any] | None, identity: dict[str, Any]) -> bool:
    """True when an index's provenance was compiled under these settings."""
    return provenance is not None and {k: provenance.get(k) for k in identity} == identity


def is_current(provenance: dict[str, Any] | None, identity: dict[str, Any], source: SourceText) -> bool:
    """True when an index is exactly what compiling `source` under these settings would give."""
    return (same_settings(provenance, identity) and provenance.get("format") == FORMAT_VERSION
            and (provenance.get("source") or {}).get("sha256") == "sha256:" + source.sha256)


@dataclass
class CompileJob:
    """A document planned for compiling: everything build_compile needs, no repository (picklable)."""

    result: CompileResult
    source: SourceText
    settings: Settings
    method: str
    identity: dict[str, Any]
    standard: StandardOptions | None
    origin: str  # the source's path relative to the repository (the HTI-Sources trailer)
    existing: bool  # the document has an index already (the commit says "Recompile")
    branch: str | None  # where to commit: None the current branch, "" a branch named after the settings
    seconds_before: float = 0.0  # time spent planning


def prepare_compile(
    repo: IndexRepo,
    path: str | Path,
    settings: Settings,
    **options: Any,
) -> PreparedCompile:
    """Read (unless `source` is given, already read from `path`), compile and lay out one document;
    nothing is written to the repository."""
    planned = plan_compile(repo, path, settings, **options)
    if isinstance(planned, PreparedCompile):
        return planned
    return build_compile(planned, None if repo.bare else repo.root, repo.hti_dir / CACHE_FILE, options.get("progress"))


def plan_compile(
    repo: IndexRepo,
    path: str | Path,
    settings: Settings,
    *,
    method: str | None = None,
    doc: str | None = None,
    branch: str | None = None,
    in_place: bool = False,
    replace: bool = False,
    progress: Progress | None = None,
    standard: StandardOptions | None = None,
    source: SourceText | None = None,
) -> PreparedCompile | CompileJob:
    """Read the source (unless given), decide what a compile of it does, against the repository:
    a PreparedCompile with nothing to commit when the index is already current, else the job to
    build. Writes nothing."""
    started = time.perf_counter()
    note = progress or (lambda _msg: None)
    if repo.bare:
        raise UsageError("cannot compile into a bare repository; use a clone with a working tree")
    method = method or settings.resolved_method()
    if source is None:
        note("reading source")
        source = load_source(path, settings.max_text_bytes)
    doc = name_slug(doc, 80) if doc else doc_slug(source.name)
    origin = source_origin(repo.root, path)
    identity, standard = compile_identity(method, settings, repo.root, standard)

    head = repo.snapshot("HEAD")
    # A compile replaces its folder wholesale, so a file or folder of the user's own that happens
    # to have the document's name must never be taken for an index and replaced.
    if head.exists(doc) and not (head.exists(f"{doc}/{INDEX_FILE}") and head.exists(f"{doc}/{SOURCE_FILE}")):
        raise UsageError(f"{doc} already exists in the repository and is not an hti-git index; "
                         "name the index folder with --doc NAME")
    existing = head.page(f"{doc}/{INDEX_FILE}").meta.get("provenance", {}) if head.exists(f"{doc}/{INDEX_FILE}") else None
    same_identity = same_settings(existing, identity)
    result = CompileResult(doc=doc, source=str(path), method=method, status="unchanged")
    if is_current(existing, identity, source) and not branch:
        result.seconds = round(time.perf_counter() - started, 3)
        return PreparedCompile(result)
    if existing is not None and not replace:
        known = recorded_source(repo, doc)
        _refuse_other_source(repo.root, doc, known, (existing.get("source") or {}).get("name"), origin,
                             source.name, Path(path))
    if existing is not None and not same_identity and not in_place:
        # A recompile under other settings lands on a branch; if one already holds exactly this
        # compile (same settings, same source), there is nothing to do.
        for name in _recompile_branches(repo, doc, branch):
            if is_current(_provenance_at(repo, name, doc), identity, source):
                result.branch = name
                result.seconds = round(time.perf_counter() - started, 3)
                return PreparedCompile(result)

    if method == "standard" and same_identity and standard.schema is None:
        # A new version of the source, same settings: compile against the index's own schema, so
        # categories stay put and unchanged chunks are answered from the cache.
        standard.reuse_schema = existing_schema(head, doc)
    job = CompileJob(result, source, settings, method, identity, standard, origin, existing is not None,
                     branch if branch is not None else (None if existing is None or same_identity or in_place else ""),
                     round(time.perf_counter() - started, 3))
    return job


def build_compile(job: CompileJob, repo_root: Path | None, cache_path: Path | None,
                  progress: Progress | None = None) -> PreparedCompile:
    """Compile and lay out a planned document: the files, message, trailers and catalogue entry.

    Reads no repository: `repo_root` only locates the prompt templates (unless the job carries
    them) and `cache_path` the response cache (unless the job's options carry a cache), so it runs
    as well in a worker of another machine (compile/distributed.py) as here.
    """
    started = time.perf_counter()
    note = progress or (lambda _msg: None)
    result, source, method, doc = job.result, job.source, job.method, job.result.doc
    note(f"compiling {doc} ({method})")
    built = build_record(method, source, job.settings, repo_root, note, job.standard, cache_path)
    schema_sha = canonical_sha256(built.schema)
    provenance = provenance_for(source, job.identity, schema_sha, built.usage)
    provenance["prompts"] = dict(sorted(built.prompts.items()))
    layout_options = LayoutOptions(job.settings.page_budget, job.settings.fanout)
    pages = build_pages(doc, built.record, source, provenance, layout_options)
    files = {p.path: p.render() for p in pages}
    files[f"{doc}/{SOURCE_FILE}"] = source.text.encode("utf-8")
    files[f"{doc}/{SCHEMA_FILE}"] = dump_yaml({"hti": FORMAT_VERSION, "method": method, **built.schema}, block_lists=True).encode("utf-8")

    prefix = doc + "/"
    inside = {p[len(prefix):]: data for p, data in files.items()}
    root_page = next(p for p in pages if p.path == f"{doc}/{INDEX_FILE}")
    catalog_entry = make_entry(doc, root_page, inside, tree_sha(inside))

    target_branch = job.branch
    if target_branch == "":  # a recompile under other settings: its own branch, named after them
        label = (job.identity.get("model") or {}).get("name") or method
        target_branch = f"hti/{doc}/{slugify(label, 40)}-{schema_sha.split(':')[1][:8]}"
    usage_total = built.usage.get("total", built.usage)
    trailers = {
        "HTI-Doc": doc,
        "HTI-Method": method,
        "HTI-Model": (job.identity.get("model") or {}).get("name") or "none",
        "HTI-Source-SHA256": "sha256:" + source.sha256,  # the form provenance and schema hashes take
        "HTI-Schema": schema_sha,
        "HTI-Pages": str(len(pages)),
        **usage_trailers(usage_total),
        SOURCES_TRAILER: json.dumps({doc: job.origin}, ensure_ascii=False),
    }
    verb = "Recompile" if job.existing else "Compile"
    message = f"{verb} {doc} ({method})\n\nSource: {source.name}, {len(source.text):,} chars; {len(pages)} pages."
    result.pages = len(pages)
    result.subjects = sum(1 for p in pages if p.kind == "subject" and "continues" not in p.meta)
    result.usage = usage_total
    result.warnings = list(source.warnings) + list(built.notes)
    result.seconds = round(job.seconds_before + time.perf_counter() - started, 3)
    return PreparedCompile(result, files, message, trailers, target_branch, catalog_entry)


def source_origin(root: Path, path: str | Path) -> str:
    """Where a source file lives, as a POSIX path relative to the repository root.

    Recorded in the compile commit's HTI-Sources trailer (not in the pages, whose bytes depend only
    on the document's content and the settings), so a later compile can tell a recompile of the
    same file (same path, perhaps edited) from a different file that happens to have the same name.
    Relative, so the record holds for every clone that keeps the sources in the same place.
    """
    return Path(os.path.relpath(Path(path).resolve(), Path(root).resolve())).as_posix()


def recorded_source(repo: IndexRepo, doc: str, depth: int = 200) -> str | None:
    """The source path the newest compile of `doc` at HEAD recorded (None: none recorded)."""
    for row in repo.log("HEAD", paths=[doc], max_count=depth):
        try:
            sources = json.loads(row["trailers"].get(SOURCES_TRAILER) or "{}")
        except ValueError:
            continue
        if isinstance(sources, dict) and isinstance(sources.get(doc), str):
            return sources[doc]
    return None


def _refuse_other_source(root: Path, doc: str, known: str | None, known_name: str | None, origin: str,
                         name: str, path: Path) -> None:
    """Raise when `doc` already indexes a different source file than the one at `origin`.

    An index whose commits recorded no source path (compiled before they did) is matched by file
    name alone.
    """
    if known == origin or (not known and known_name in (None, name)):
        return
    folder = name_slug(path.resolve().parent.name, 20, fallback="")
    suggestion = name_slug(f"{folder}-{doc}", 80) if folder and f"{folder}-" not in doc else f"{doc}-2"
    shown = known_name
    if known:
        where = os.path.normpath(Path(root) / known)
        shown = os.path.relpath(where) if not os.path.relpath(where).startswith(f"..{os.sep}..") else where
    raise UsageError(f"{doc}/ already indexes {shown}, a different file: give this one its own index with "
                     f"--doc {suggestion}, or pass --replace to replace it")


def _recompile_branches(repo: IndexRepo, doc: str, branch: str | None) -> list[str]:
    """Branches that may hold a recompile of `doc`: the one named, or every hti/<doc>/* branch."""
    if branch is not None:
        return [branch] if repo.branch_exists(branch) else []
    return [b for b in repo.branch_names() if b.startswith(f"hti/{doc}/")]


def _provenance_at(repo: IndexRepo, rev: str, doc: str) -> dict[str, Any] | None:
    snapshot = repo.snapshot(rev)
    if not snapshot.exists(f"{doc}/{INDEX_FILE}"):
        return None
    return snapshot.page(f"{doc}/{INDEX_FILE}").meta.get("provenance") or {}


def commit_prepared(
    repo: IndexRepo,
    prepared: list[PreparedCompile],
    *,
    one_commit: bool = False,
    before_ref_move: Callable[[], None] | None = None,
) -> list[CompileResult]:
    """Commit prepared compiles: one commit each (or one for all), under the repository lock."""
    todo = [p for p in prepared if p.files]
    with repo.lock():
        current = repo.current_branch()
        groups = [todo] if one_commit and todo else [[p] for p in todo]
        for group in groups:
            if not group:
                continue
            started = time.perf_counter()
            branches = {p.branch for p in group}
            if len(branches) > 1:
                raise UsageError("--one-commit cannot mix documents going to different branches")
            target = group[0].branch
            on_current = target is None or target == current
            files: dict[str, bytes] = {}
            for p in group:
                files.update(p.files)
            if len(group) == 1:
                message, trailers = group[0].message, group[0].trailers
            else:
                docs = ", ".join(p.result.doc for p in group)
                message = f"Compile {len(group)} documents\n\n{docs}"
                sources: dict[str, str] = {}
                for p in group:
                    sources.update(json.loads(p.trailers.get(SOURCES_TRAILER) or "{}"))
                trailers = {"HTI-Doc": " ".join(p.result.doc for p in group), "HTI-Method": group[0].result.method,
                            SOURCES_TRAILER: json.dumps(sources, ensure_ascii=False)}
            replaced = tuple(p.result.doc for p in group)
            entries = {p.result.doc: p.catalog_entry for p in group}

            def catalog(base, entries=entries, replaced=replaced) -> dict[str, bytes | None]:
                return updated_catalog(base, entries, replaced)

            commit = repo.commit(
                files,
                message,
                trailers,
                branch=target,
                replace_dirs=replaced,
                # the catalogue is rewritten too: a hand edit of it in the working tree is never overwritten
                require_clean=replaced + (CATALOG_DIR, LEGACY_FILE) if on_current else (),
                before_ref_move=before_ref_move,
                derive=catalog,
            )
            for p in group:
                r = p.result
                r.commit, r.branch = commit.sha, commit.branch
                r.status = "unchanged" if commit.sha is None else ("committed" if on_current else "branch")
                r.changed = sum(1 for c in commit.changed if c.startswith(r.doc + "/"))
                r.seconds = round(r.seconds + time.perf_counter() - started, 3)
    return [p.result for p in prepared]


def compile_path(
    repo: IndexRepo,
    path: str | Path,
    settings: Settings,
    *,
    method: str | None = None,
    doc: str | None = None,
    branch: str | None = None,
    in_place: bool = False,
    replace: bool = False,
    progress: Progress | None = None,
    before_ref_move: Callable[[], None] | None = None,
    standard: StandardOptions | None = None,
) -> CompileResult:
    """Compile the document at `path` into the index repository and commit it."""
    prepared = prepare_compile(repo, path, settings, method=method, doc=doc, branch=branch,
                               in_place=in_place, replace=replace, progress=progress, standard=standard)
    return commit_prepared(repo, [prepared], before_ref_move=before_ref_move)[0]
