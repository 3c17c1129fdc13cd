"""`hti-git check`: one uncached call to the configured endpoint, reported as a plain dict."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from hti_git.config import Settings, redact_url
from hti_git.errors import HtiError
from hti_git.llm.prompts import load_template

CHECK_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}


def check_endpoint(settings: Settings, repo_root: Path | None = None, provider: Any = None) -> dict[str, Any]:
    """{"ok", "model", "base_url", "latency_ms", "structured_output", "error"}; never the key.

    `structured_output` is True when the server accepted a json_schema response_format, False when
    it needed the JSON-mode fallback, None when the call failed before that was known.
    """
    from hti_git.llm.client import build_provider

    report: dict[str, Any] = {
        "ok": False,
        "provider": settings.provider,
        "model": settings.model,
        "base_url": redact_url(settings.base_url) or "https://api.openai.com/v1",  # never its credentials
        "latency_ms": None,
        "structured_output": None,
        "error": None,
    }
    try:
        provider = provider or build_provider(settings)
        messages = load_template("check", repo_root).messages()
    except HtiError as exc:
        report["error"] = str(exc)
        return report

    async def call() -> Any:
        try:
            return await provider.complete(
                messages, CHECK_SCHEMA, temperature=settings.temperature, max_output_tokens=64
            )
        finally:
            aclose = getattr(provider, "aclose", None)
            if aclose is not None:
                await aclose()

    started = time.perf_counter()
    try:
        completion = asyncio.run(call())
    except HtiError as exc:
        report["error"] = str(exc)
    else:
        report["ok"] = completion.json == {"ok": True}
        report["model"] = completion.model or settings.model
        if not report["ok"]:
            report["error"] = f"unexpected reply: {completion.text[:200]!r}"
    report["latency_ms"] = round((time.perf_counter() - started) * 1000, 1)
    report["structured_output"] = getattr(provider, "structured_output", None)
    return report
