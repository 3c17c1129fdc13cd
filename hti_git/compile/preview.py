"""Before a compile, over the documents of a batch: what it would spend (`compile --estimate`) and the
one schema a model proposes for them (`schema discover`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hti_git.compile.batch import CompilePlan, expand_inputs
from hti_git.compile.discover import discover_schema
from hti_git.compile.pipeline import CACHE_FILE, compile_identity, existing_schema, is_current, same_settings
from hti_git.compile.standard import StandardOptions, estimate_standard
from hti_git.config import Settings
from hti_git.errors import HtiError, UsageError
from hti_git.index.layout import INDEX_FILE
from hti_git.index.slug import doc_slug, name_slug
from hti_git.llm.client import build_client
from hti_git.llm.prompts import load_template
from hti_git.llm.provider import Provider
from hti_git.sources import load_source
from hti_git.store import IndexRepo


def estimate_inputs(repo: IndexRepo, plan: CompilePlan) -> list[dict[str, Any]]:
    """`compile --estimate`: per document, what a compile would spend now (zero calls made).

    A document whose index is current (same source, same settings) costs nothing; one whose index
    exists under the same settings is estimated against its own schema and the response cache.
    """
    request, settings, method = plan.request, plan.settings, plan.method
    paths, failures = expand_inputs(request.inputs, request.include_all)
    rows: list[dict[str, Any]] = [{"source": f["source"], "error": f["error"]} for f in failures]
    head = repo.snapshot("HEAD")
    options = plan.standard or StandardOptions()
    for path in paths:
        try:
            source = load_source(path, settings.max_text_bytes)
        except HtiError as exc:
            rows.append({"source": str(path), "error": str(exc)})
            continue
        doc = name_slug(request.doc, 80) if request.doc else doc_slug(source.name)  # as the compile names it
        row: dict[str, Any] = {"doc": doc, "source": str(path), "method": method}
        if method != "standard":
            rows.append({**row, "calls": 0, "cached_calls": 0, "input_tokens": 0})
            continue
        identity, _ = compile_identity(method, settings, repo.root, options)
        root = f"{doc}/{INDEX_FILE}"
        existing = head.page(root).meta.get("provenance", {}) if head.exists(root) else None
        schema = options.schema or (existing_schema(head, doc) if same_settings(existing, identity) else None)
        estimate = estimate_standard(source, settings, repo.root, schema, repo.hti_dir / CACHE_FILE)
        if is_current(existing, identity, source):
            estimate.update(calls=0, cached_calls=0, input_tokens=0, output_tokens=0, ratio=0.0, output_ratio=0.0,
                            stages={}, unchanged=True)
        rows.append({**row, **estimate})
    return rows


def propose_schema(inputs: list[str], settings: Settings, repo_root: Path | None, cache_path: Path | None, *,
                   no_cache: bool = False, provider: Provider | None = None) -> dict[str, Any]:
    """`schema discover`: one schema for a corpus, from a sample across its documents (one call).

    Returns {"schema": Schema, "documents": [names], "usage": ledger dict, "notes": [...]}.
    """
    paths, failures = expand_inputs(inputs)
    if failures:
        raise UsageError(failures[0]["error"])
    if not paths:
        raise UsageError("no documents given")
    sources = [load_source(path, settings.max_text_bytes) for path in paths]
    client = build_client(settings, cache_path, no_cache=no_cache, provider=provider)
    notes: list[str] = []
    template = load_template("discover", repo_root)
    try:
        schema = client.run([discover_schema(client, template, sources, notes)])[0]
    finally:
        client.cache.close()
    return {"schema": schema, "documents": [s.name for s in sources], "usage": client.ledger.to_dict(),
            "notes": notes, "prompt": template.sha256}
