"""compile --executor ray: documents are built on a Ray cluster; this process commits them.

The driver (this process) reads each source and plans its compile against the repository exactly
as a local compile does (pipeline.plan_compile: unchanged documents, recompile branches, refusals).
Each planned job then goes to a Ray task, which runs pipeline.build_compile, the same code a local
compile runs, and returns the files, so the driver commits the same bytes as a local compile, one
writer, one commit per document or one for all (--one-commit). Workers need no repository and no
shared file system:

- model settings travel with each job (the same Settings, prompt templates read by the driver);
- the response cache stays the driver's: a small actor on the driver's node answers lookups from
  it, workers return the responses they fetched with their keys, and the driver stores them;
- the concurrency limit holds across workers: every model call takes a slot from one limiter
  actor, so at most `concurrency` calls are in flight in the whole cluster.

Secrets never travel: a worker's provider reads its API key from its own environment (a local Ray
instance started here inherits this process's environment). Ray is imported only here and only
for --executor ray (`pip install 'hti-git[ray]'`).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hti_git.errors import UsageError

EXECUTORS = ("local", "ray")
_PARTS: dict[str, Any] = {}


def require_ray():
    """The ray module, or a one-line UsageError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise UsageError("--executor ray needs Ray, which is not installed: pip install 'hti-git[ray]'") from None
    return ray


def _remote_parts(ray) -> dict[str, Any]:
    """The Ray task and actors, declared once per process (they need the ray module)."""
    if _PARTS:
        return _PARTS

    @ray.remote
    class CacheReader:
        """Answers cache lookups from the driver's response cache (read only; the driver writes)."""

        def __init__(self, path: str):
            from hti_git.llm.cache import ResponseCache

            self.cache = ResponseCache(path)

        def get(self, key: str):
            return self.cache.get(key)

    @ray.remote
    class Limiter:
        """One semaphore for the model calls of every worker."""

        def __init__(self, slots: int):
            self.slots = slots
            self.in_flight = 0
            self.peak = 0
            self._free: asyncio.Semaphore | None = None

        async def acquire(self) -> None:
            if self._free is None:
                self._free = asyncio.Semaphore(self.slots)
            await self._free.acquire()
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)

        async def release(self) -> None:
            self.in_flight -= 1
            self._free.release()

        async def stats(self) -> dict[str, int]:
            return {"slots": self.slots, "peak": self.peak, "in_flight": self.in_flight}

    @ray.remote
    def build(job, cache_reader, limiter):
        return _build_in_worker(job, cache_reader, limiter)

    _PARTS.update(CacheReader=CacheReader, Limiter=Limiter, build=build)
    return _PARTS


class _DriverCache:
    """A worker's response cache: lookups go to the driver's cache; new responses are kept here
    and returned with the result, for the driver to store."""

    enabled = True
    errors = 0

    def __init__(self, reader):
        self.reader = reader
        self.fetched: dict[str, Any] = {}

    def get(self, key: str):
        if key in self.fetched:
            return self.fetched[key]
        if self.reader is None:
            return None
        import ray

        return ray.get(self.reader.get.remote(key))

    def put(self, key: str, completion) -> None:
        self.fetched[key] = completion

    def close(self) -> None:
        pass


class _SharedLimit:
    """A provider whose calls each hold a slot of the cluster-wide limiter."""

    def __init__(self, inner, limiter):
        self.inner = inner
        self.limiter = limiter
        self.model = getattr(inner, "model", "")

    async def complete(self, messages, schema=None, **params):
        await self.limiter.acquire.remote()
        try:
            return await self.inner.complete(messages, schema, **params)
        finally:
            await self.limiter.release.remote()

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()


def _build_in_worker(job, cache_reader, limiter):
    """In a Ray worker: build the job with the driver's cache and the shared limit; returns
    (PreparedCompile, responses fetched as [(key, completion)])."""
    from hti_git.compile.pipeline import build_compile

    cache = None
    if job.method == "standard":
        from hti_git.llm.client import build_provider

        cache = _DriverCache(cache_reader)
        provider = job.standard.provider if job.standard.provider is not None else build_provider(job.settings)
        job = dataclasses.replace(job, standard=dataclasses.replace(
            job.standard, cache=cache, provider=_SharedLimit(provider, limiter)))
    prepared = build_compile(job, None, None)
    return prepared, sorted(cache.fetched.items()) if cache is not None else []


class RayExecutor:
    """Builds compile jobs on Ray: ray.init(address) (a local instance when address is None, or the
    one this process already joined), the driver's cache actor and the limiter."""

    def __init__(self, address: str | None, concurrency: int, cache_path: Path | None, method: str):
        ray = require_ray()
        self.ray = ray
        self.started = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"address": address, "log_to_driver": False, "include_dashboard": False,
                                      "configure_logging": False}
            ray.init(**kwargs)
            self.started = True
        parts = _remote_parts(ray)
        self._build = parts["build"]
        self.limiter = parts["Limiter"].remote(max(1, concurrency))
        self.cache_reader = None
        if method == "standard" and cache_path is not None:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            here = ray.get_runtime_context().get_node_id()  # the cache file is on this machine
            self.cache_reader = parts["CacheReader"].options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)).remote(str(cache_path))
        self.cpus = 1.0 if method == "fast" else 0.25  # standard jobs mostly wait on the model

    def submit(self, job) -> Any:
        return self._build.options(num_cpus=self.cpus).remote(job, self.cache_reader, self.limiter)

    def finished(self, refs: list) -> Iterator[tuple[Any, Any, BaseException | None]]:
        """(ref, (prepared, responses) or None, error or None) for each ref, as they finish."""
        pending = list(refs)
        while pending:
            done, pending = self.ray.wait(pending, num_returns=1)
            for ref in done:
                try:
                    yield ref, self.ray.get(ref), None
                except Exception as exc:  # a task's error comes back as a RayTaskError of its type
                    yield ref, None, exc

    def stats(self) -> dict[str, int]:
        return self.ray.get(self.limiter.stats.remote())

    def close(self) -> None:
        for actor in (self.limiter, self.cache_reader):
            if actor is not None:
                self.ray.kill(actor)
        if self.started:
            self.ray.shutdown()


def task_error(exc: BaseException) -> BaseException:
    """The error a task raised, unwrapped from Ray's RayTaskError when Ray kept it."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, BaseException) else exc
