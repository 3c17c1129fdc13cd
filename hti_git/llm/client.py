"""ModelClient: every model call goes through the cache, the budget, the concurrency bound,
retries with backoff, and the usage ledger — in that order."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import random
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from hti_git.config import Settings
from hti_git.errors import BudgetExceededError, ConfigError, ModelError
from hti_git.llm.cache import ResponseCache, cache_key
from hti_git.llm.estimate import prompt_tokens
from hti_git.llm.ledger import UsageLedger
from hti_git.llm.provider import Completion, Provider, TransientModelError, TruncatedError

T = TypeVar("T")

# Local servers (llama.cpp, Ollama, vLLM) ignore the key, but the SDK insists on one.
PLACEHOLDER_API_KEY = "not-needed"


class ModelClient:
    """The one way compile and ask code calls a model: `await client.complete(stage, messages)`."""

    def __init__(
        self,
        provider: Provider,
        cache: ResponseCache | None = None,
        ledger: UsageLedger | None = None,
        *,
        concurrency: int = 8,
        max_retries: int = 5,
        model: str = "",
        params: dict[str, Any] | None = None,
        max_total_tokens: int | None = None,
        backoff_base: float = 0.5,
        backoff_cap: float = 30.0,
        retry_after_cap: float = 60.0,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.provider = provider
        self.cache = cache if cache is not None else ResponseCache.disabled()
        self.ledger = ledger if ledger is not None else UsageLedger()
        self.concurrency = concurrency
        self.max_retries = max_retries
        self.model = model or getattr(provider, "model", "")
        self.params = dict(params or {})
        self.max_total_tokens = max_total_tokens
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.retry_after_cap = retry_after_cap
        self._sleep = sleep
        self._reserved = 0  # estimated prompt tokens of calls in flight, so parallel calls share the budget
        self._semaphore: asyncio.Semaphore | None = None
        self._semaphore_loop: asyncio.AbstractEventLoop | None = None

    def key(self, messages: list[dict], schema: dict | None = None) -> str:
        """The cache key this client would use for a request."""
        return cache_key(self.model, messages, schema, self.params)

    async def complete(
        self, stage: str, messages: list[dict], schema: dict | None = None, label: str = ""
    ) -> Completion:
        """A Completion for `messages` (from the cache when possible), counted under `stage`.

        Raises BudgetExceededError before a call that would pass max_total_tokens, and ModelError
        (naming stage and label) when the call fails for good.
        """
        key = self.key(messages, schema)
        hit = self.cache.get(key)
        if hit is not None:
            self.ledger.record(stage, hit.usage, cached=True)
            return hit
        estimate = prompt_tokens(messages) if self.max_total_tokens is not None else 0
        self._check_budget(stage, label, estimate)
        self._reserved += estimate
        try:
            completion = await self._call_with_retries(stage, label, messages, schema)
        finally:
            self._reserved -= estimate
        completion = _without_surrogates(completion)
        self.ledger.record(stage, completion.usage)
        self.cache.put(key, completion)
        return completion

    def _check_budget(self, stage: str, label: str, estimate: int) -> None:
        if self.max_total_tokens is None:
            return
        projected = self.ledger.spent_tokens() + self._reserved + estimate
        if projected > self.max_total_tokens:
            raise BudgetExceededError(
                f"{_where(stage, label)}: the next call (~{estimate} input tokens) would bring usage to "
                f"~{projected} tokens, over the limit of {self.max_total_tokens}"
            )

    def _bound(self) -> asyncio.Semaphore:
        # A semaphore belongs to one event loop; each asyncio.run gets a fresh one.
        loop = asyncio.get_running_loop()
        if self._semaphore is None or self._semaphore_loop is not loop:
            self._semaphore = asyncio.Semaphore(self.concurrency)
            self._semaphore_loop = loop
        return self._semaphore

    async def _call_with_retries(
        self, stage: str, label: str, messages: list[dict], schema: dict | None
    ) -> Completion:
        attempts = self.max_retries + 1
        for attempt in range(attempts):
            try:
                async with self._bound():
                    return await self.provider.complete(messages, schema, **self.params)
            except TransientModelError as exc:
                if attempt + 1 >= attempts:
                    raise ModelError(
                        f"{_where(stage, label)}: model call failed after {attempts} attempt(s): {exc}"
                    ) from exc
                await self._sleep(self.backoff_delay(attempt, exc.retry_after))
            except TruncatedError as exc:
                self.ledger.record(stage, exc.usage)  # a cut-off reply is billed like any other
                raise TruncatedError(f"{_where(stage, label)}: {exc}", exc.usage) from exc
            except ModelError as exc:
                raise ModelError(f"{_where(stage, label)}: {exc}") from exc
        raise AssertionError("unreachable")

    def backoff_delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry `attempt + 1`: Retry-After (capped), else capped exponential with equal jitter."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.retry_after_cap)
        ceiling = min(self.backoff_cap, self.backoff_base * (2**attempt))
        return ceiling * (0.5 + random.random() / 2)

    def run(self, coroutines: Iterable[Awaitable[T]]) -> list[T]:
        """Run a batch of this client's calls to completion from sync code; results in order."""
        return run_batch(coroutines, close=self.provider)


def run_batch(coroutines: Iterable[Awaitable[T]], close: Any = None) -> list[T]:
    """asyncio.run over a gather of `coroutines`; the first error propagates, the rest are cancelled.

    `close`, when it has an async `aclose()` (the OpenAI provider does), is closed inside the same
    event loop so no HTTP connection outlives it. Not for use inside a running event loop.
    """

    async def gather() -> list[T]:
        tasks = [asyncio.ensure_future(c) for c in coroutines]
        try:
            return list(await asyncio.gather(*tasks))
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            aclose = getattr(close, "aclose", None)
            if aclose is not None:
                await aclose()

    return asyncio.run(gather())


def _without_surrogates(completion: Completion) -> Completion:
    """The completion with lone surrogates (JSON "\\ud800" escapes) replaced by '?'.

    They are valid in JSON and in Python strings but not in UTF-8, so one in a name would fail
    the cache write, every hash and the page files far from here; this is the one door all model
    output passes through.
    """

    def scrub(value):
        if isinstance(value, str):
            return value.encode("utf-8", "replace").decode("utf-8")
        if isinstance(value, list):
            return [scrub(v) for v in value]
        if isinstance(value, dict):
            return {scrub(k): scrub(v) for k, v in value.items()}
        return value

    return dataclasses.replace(completion, text=scrub(completion.text), json=scrub(completion.json))


def _where(stage: str, label: str) -> str:
    return f"{stage} ({label})" if label else stage


def build_client(
    settings: Settings,
    cache_path: Path | str | None,
    no_cache: bool = False,
    provider: Provider | None = None,
    *,
    max_total_tokens: int | None = None,
    ledger: UsageLedger | None = None,
    cache: ResponseCache | None = None,
) -> ModelClient:
    """A ModelClient from Settings: OpenAI-compatible provider (unless one is given), cache (the
    one given, else the file at `cache_path`), ledger."""
    if provider is None:
        provider = build_provider(settings)
    if no_cache:
        cache = ResponseCache.disabled()
    elif cache is None:
        cache = ResponseCache.disabled() if cache_path is None else ResponseCache(cache_path)
    return ModelClient(
        provider,
        cache,
        ledger or UsageLedger(),
        concurrency=settings.concurrency,
        max_retries=settings.max_retries,
        model=settings.model or getattr(provider, "model", "") or "unknown",
        params={"temperature": settings.temperature, "max_output_tokens": settings.max_output_tokens},
        max_total_tokens=max_total_tokens,
    )


def build_provider(settings: Settings) -> Provider:
    """The provider Settings describe; ConfigError explains what is missing."""
    from hti_git.llm.openai_provider import OpenAIProvider  # the SDK import is slow; only when needed

    if settings.provider != "openai":
        raise ConfigError(
            f"unknown provider {settings.provider!r}: only 'openai' (any OpenAI-compatible endpoint) is supported"
        )
    api_key = os.environ.get(settings.api_key_env) or None
    if api_key is None:
        if not settings.base_url:
            raise ConfigError(
                f"no model endpoint configured: set {settings.api_key_env} for api.openai.com, or set "
                "base_url in hti.yaml (or OPENAI_BASE_URL) for a local OpenAI-compatible server"
            )
        api_key = PLACEHOLDER_API_KEY
    if not settings.model:
        raise ConfigError("no model configured: set model in hti.yaml, HTI_MODEL, or pass --model")
    return OpenAIProvider(settings.model, api_key=api_key, base_url=settings.base_url, timeout=settings.timeout)
