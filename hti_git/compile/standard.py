"""The `standard` method (paper §3.2-3.3): discover -> extract -> merge -> group -> summarize.

One event loop runs the whole compile so the model calls of a stage go out together (bounded by
the client's concurrency); every call passes through the response cache, so a re-run after a
crash, or a recompile after a one-paragraph edit, only pays for what changed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hti_git.compile.discover import discover_schema, discovery_messages, sample_budget, sample_text
from hti_git.compile.extract import Extracted, extract_chunk, extract_schema, extraction_messages
from hti_git.compile.group import group_category, overflows
from hti_git.compile.merge import merge
from hti_git.compile.quotes import QuoteLocator
from hti_git.compile.schema import CategorySpec, FieldSpec, Schema
from hti_git.compile.sizing import ExtractionSize, extraction_size
from hti_git.compile.summarize import (
    CATEGORY_BATCH_TOKENS,
    fallback_subject_summary,
    subject_batches,
    summarize_categories,
    summarize_subjects,
    write_overview,
)
from hti_git.config import Settings
from hti_git.index.layout import LayoutOptions
from hti_git.index.model import Record
from hti_git.llm.client import ModelClient, build_client
from hti_git.llm.estimate import prompt_tokens
from hti_git.llm.prompts import Template, load_template
from hti_git.llm.provider import Provider
from hti_git.sources.chunk import chunk_text
from hti_git.sources.types import SourceText
from hti_git.tokens import estimate_tokens

TEMPLATES = ("discover", "extract", "summarize", "category", "overview", "group")
Progress = Callable[[str], None]


@dataclass
class StandardOptions:
    """How to run a standard compile beyond Settings (set from CLI flags, or by tests)."""

    schema: Schema | None = None  # a reviewed schema (--schema FILE): no discovery
    no_cache: bool = False
    max_tokens: int | None = None  # stop (BudgetExceededError) before spending more
    provider: Provider | None = None  # tests inject a scripted provider
    reuse_schema: Schema | None = None  # set by the pipeline: the index's own schema, for an edited source
    # Set by a distributed compile (compile/distributed.py), whose workers have no repository:
    templates: dict[str, Template] | None = None  # the index repository's templates, read by the driver
    cache: Any = None  # instead of opening the cache file: an object with get(key) and put(key, completion)


@dataclass
class StandardBuild:
    record: Record
    schema: dict[str, Any]
    usage: dict[str, Any]
    prompts: dict[str, str]
    notes: list[str] = field(default_factory=list)


def load_templates(repo_root: Path | None, with_discover: bool = True) -> dict[str, Template]:
    """The prompt templates a standard compile uses (the index repo's own, else the packaged ones)."""
    return {name: load_template(name, repo_root) for name in TEMPLATES if with_discover or name != "discover"}


def prompt_hashes(repo_root: Path | None, options: StandardOptions | None) -> dict[str, str]:
    """Template name -> sha256 for the provenance and the compile identity."""
    given = options is not None and options.schema is not None
    return {name: t.sha256 for name, t in sorted(load_templates(repo_root, not given).items())}


def extraction_plan(template: Template, schema: Schema, settings: Settings, text: str) -> ExtractionSize:
    """Chunk size and subject cap for this template, schema and model limits."""
    overhead = prompt_tokens(extraction_messages(template, schema, "", 0))
    return extraction_size(settings, text, overhead)


class _Tracker:
    """Progress lines: stage, item k of n, calls and tokens so far."""

    def __init__(self, client: ModelClient, progress: Progress | None, label: str):
        self.client, self.progress, self.label = client, progress, label
        self.last = 0.0

    def __call__(self, stage: str, k: int = 0, n: int = 0, force: bool = False) -> None:
        if self.progress is None:
            return
        now = time.monotonic()
        if not force and now - self.last < 0.1 and k != n:
            return
        self.last = now
        total = self.client.ledger.total()
        where = f" {k} of {n}" if n else ""
        cached = f" ({total.cached_calls} cached)" if total.cached_calls else ""
        self.progress(f"{self.label}: {stage}{where} · {total.calls} calls{cached} · "
                      f"{total.input_tokens + total.output_tokens:,} tokens")


def compile_standard(source: SourceText, settings: Settings, repo_root: Path | None, cache_path: Path | None,
                     progress: Progress | None = None, options: StandardOptions | None = None) -> StandardBuild:
    """The merged, summarised record of `source`, built with the model Settings describe."""
    options = options or StandardOptions()
    client = build_client(settings, cache_path, no_cache=options.no_cache, provider=options.provider,
                          max_total_tokens=options.max_tokens, cache=options.cache)
    try:
        return client.run([_compile(client, source, settings, repo_root, progress, options)])[0]
    finally:
        client.cache.close()


async def _compile(client: ModelClient, source: SourceText, settings: Settings, repo_root: Path | None,
                   progress: Progress | None, options: StandardOptions) -> StandardBuild:
    given = options.schema or options.reuse_schema
    templates = (options.templates if options.templates is not None
                 else load_templates(repo_root, options.schema is None))
    notes: list[str] = []
    track = _Tracker(client, progress, source.name)

    if given is None:
        track("discover", force=True)
        schema = await discover_schema(client, templates["discover"], [source], notes)
    else:
        schema = given

    size = extraction_plan(templates["extract"], schema, settings, source.text)
    chunks = chunk_text(source.text, size.chunk_chars, size.overlap_chars)
    locator = QuoteLocator(source.text)
    max_value_tokens = max(50, settings.page_budget // 2)
    done = 0
    track("extract chunk", 0, len(chunks), force=True)

    async def one(chunk) -> list[Extracted]:
        nonlocal done
        result = await extract_chunk(client, templates["extract"], schema, chunk, locator, max_value_tokens, notes,
                                     size.max_subjects)
        done += 1
        track("extract chunk", done, len(chunks))
        return result

    per_chunk = await asyncio.gather(*(one(c) for c in chunks))
    title = source.name.rsplit(".", 1)[0]
    merged = merge(schema, list(per_chunk), title, notes)
    record = merged.record
    if not merged.subjects:
        notes.append("extract: no subjects were found in the document")

    # Subjects seen in several chunks get a summary of their merged values, SUBJECTS_PER_CALL to a
    # call in document order; the rest keep the one-line summary extraction wrote while reading them.
    many = [m.subject for m in merged.subjects if m.multi_chunk]
    track("summarize subjects", 0, len(many), force=True)
    await asyncio.gather(*(summarize_subjects(client, templates["summarize"], batch, f"subjects {i + 1}")
                           for i, batch in enumerate(subject_batches(many))))
    for m in merged.subjects:
        if not m.subject.summary:
            m.subject.summary = fallback_subject_summary(m.subject)

    layout = LayoutOptions(settings.page_budget, settings.fanout)
    crowded = [c for c in merged.categories.values() if overflows(c, layout) and c.subjects]
    if crowded:
        track("group", 0, len(crowded), force=True)
        await asyncio.gather(*(group_category(client, templates["group"], c, layout, notes) for c in crowded))

    track("summarize categories", force=True)
    await summarize_categories(client, templates["category"], record.categories, settings.max_output_tokens)
    track("summarize root", force=True)
    record.title, record.overview = await write_overview(client, templates["overview"], source.text, schema,
                                                         record.categories, title)
    track("done", force=True)
    ledger = client.ledger.to_dict()
    usage = {**ledger["total"], "stages": ledger["stages"]}  # flat totals, as every provenance reader expects
    return StandardBuild(record, schema.to_dict(), usage, {name: t.sha256 for name, t in sorted(templates.items())},
                         notes)


# -- estimate ------------------------------------------------------------------------------------

# What a discovered schema typically looks like in the extraction prompt, for --estimate before
# any schema exists.
_TYPICAL_SCHEMA = Schema(
    "A typical schema of six categories of four fields.",
    [CategorySpec(f"Category {i}", f"category-{i}", "A broad area of the document with its specific items.",
                  [FieldSpec(f"field {j}", "what this field records about each subject") for j in range(4)])
     for i in range(6)],
)
# How a capable model's replies run, for the parts of a compile that depend on them. Calibrated on
# real replies to these prompts (README, "The standard compile with a capable model").
CHARS_PER_SUBJECT = 600  # one subject per this much passage, up to the subject cap
SUBJECT_REPLY_TOKENS = 145  # one subject in an extraction reply (capable-model runs: 140-150 at the cap)
SUBJECTS_PER_CATEGORY = 8  # capable-model runs: 38 subjects in 5 categories, 57 in 7, 190 in 9
MULTI_CHUNK_SHARE = 0.1  # subjects met again in a later chunk (parties, defined terms): re-summarised
DISCOVER_REPLY_TOKENS = 700
SUBJECT_LINE_TOKENS = 45  # a one-line summary, or a subject's line in a category prompt
SUBJECT_PROMPT_TOKENS = 110  # a subject's values in a summary prompt
CATEGORY_REPLY_TOKENS = 110
GROUP_SUMMARY_TOKENS = 55  # a group's summary, written in its category's call
ROOT_REPLY_TOKENS = 180
GROUP_REPLY_TOKENS_PER_SUBJECT = 6
CATEGORY_PROMPT_TOKENS = 150  # a category prompt without its entries
CATEGORY_ENTRY_TOKENS = 25  # a section's header lines in a batched summary prompt
ROOT_PROMPT_TOKENS = 350  # the root prompt without its category lines


def estimate_standard(source: SourceText, settings: Settings, repo_root: Path | None,
                      schema: Schema | None = None, cache_path: Path | None = None) -> dict[str, Any]:
    """Calls, input and output tokens a standard compile of `source` would spend, calling nothing.

    Discovery and extraction prompts are built exactly as a compile builds them (with a typical
    schema when none is known yet), so their input is exact up to the tokenizer; replies, and the
    summary and layout calls that follow from the number of subjects, come from the constants
    above. With a known schema, extraction calls already in the response cache count as cached.
    """
    from hti_git.compile.group import groups_for
    from hti_git.llm.cache import ResponseCache, cache_key

    templates = load_templates(repo_root, schema is None)
    stages: dict[str, dict[str, int]] = {}

    def add(stage: str, tokens: int, output: int, cached: bool = False, calls: int = 1) -> None:
        entry = stages.setdefault(stage, {"calls": 0, "cached_calls": 0, "input_tokens": 0, "output_tokens": 0})
        entry["cached_calls" if cached else "calls"] += calls
        if not cached:
            entry["input_tokens"] += tokens
            entry["output_tokens"] += output

    if schema is None:
        sample = sample_text(source.text, sample_budget(source.text))
        add("discover", prompt_tokens(discovery_messages(templates["discover"], [(source.name, sample)])),
            DISCOVER_REPLY_TOKENS)
    used = schema or _TYPICAL_SCHEMA
    size = extraction_plan(templates["extract"], used, settings, source.text)
    chunks = chunk_text(source.text, size.chunk_chars, size.overlap_chars)
    cache = ResponseCache(cache_path) if schema is not None and cache_path and Path(cache_path).exists() else None
    subjects = 0
    try:
        for chunk in chunks:
            messages = extraction_messages(templates["extract"], used, chunk.text, size.max_subjects)
            found = min(size.max_subjects, -(-len(chunk.text) // CHARS_PER_SUBJECT))
            subjects += found
            params = {"temperature": settings.temperature, "max_output_tokens": settings.max_output_tokens}
            hit = cache is not None and cache.get(cache_key(settings.model or "unknown", messages,
                                                            extract_schema(size.max_subjects), params)) is not None
            add("extract", prompt_tokens(messages), found * SUBJECT_REPLY_TOKENS, hit)
    finally:
        if cache is not None:
            cache.close()
    # a short document fills only some of its categories: one per SUBJECTS_PER_CATEGORY subjects
    leaves = max(1, sum(1 for c in used.keyed().values() if c.fields))
    categories = max(1, min(leaves, -(-subjects // SUBJECTS_PER_CATEGORY)))
    # subjects met in more than one chunk: SUBJECTS_PER_CALL to a call
    again = int(subjects * MULTI_CHUNK_SHARE) if len(chunks) > 1 else 0
    if again:
        calls = len(subject_batches([None] * again))
        add("summarize", calls * CATEGORY_PROMPT_TOKENS // 2 + again * SUBJECT_PROMPT_TOKENS,
            again * SUBJECT_LINE_TOKENS, calls=calls)
    # Categories fill unevenly (one usually holds most subjects): the i-th largest takes a share
    # proportional to 1/i. One that overflows a page is grouped (one call); its groups are
    # summarised in the category's own summary call.
    layout = LayoutOptions(settings.page_budget, settings.fanout)
    weights = [1 / (i + 1) for i in range(categories)]
    group_count = 0
    for weight in weights:
        held = subjects * weight / sum(weights)
        if held > layout.fanout or held * (SUBJECT_LINE_TOKENS + 16) > layout.page_budget:
            groups = groups_for(round(held), 0, layout)
            group_count += groups
            add("layout", CATEGORY_PROMPT_TOKENS // 2 + int(held * 12),
                int(held * GROUP_REPLY_TOKENS_PER_SUBJECT + groups * 15))
    # sections are summarised several to a call (their entries up to CATEGORY_BATCH_TOKENS a call)
    entries_in = subjects * SUBJECT_LINE_TOKENS + categories * CATEGORY_ENTRY_TOKENS + group_count * 10
    section_calls = max(1, -(-entries_in // CATEGORY_BATCH_TOKENS))
    add("summarize", section_calls * CATEGORY_PROMPT_TOKENS + entries_in,
        categories * CATEGORY_REPLY_TOKENS + group_count * GROUP_SUMMARY_TOKENS, calls=section_calls)
    add("summarize", ROOT_PROMPT_TOKENS + categories * CATEGORY_REPLY_TOKENS, ROOT_REPLY_TOKENS)
    document = estimate_tokens(source.text)
    total_in = sum(s["input_tokens"] for s in stages.values())
    total_out = sum(s["output_tokens"] for s in stages.values())
    return {
        "source": source.name,
        "document_tokens": document,
        "chunks": len(chunks),
        "chunk_chars": size.chunk_chars,
        "calls": sum(s["calls"] for s in stages.values()),
        "cached_calls": sum(s["cached_calls"] for s in stages.values()),
        "input_tokens": total_in,
        "output_tokens": total_out,
        "ratio": round(total_in / max(1, document), 2),
        "output_ratio": round(total_out / max(1, document), 2),
        "stages": stages,
    }
