"""The Provider seam: one async method that turns messages into a Completion."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from hti_git.errors import ModelError


@dataclass(frozen=True)
class Usage:
    """Tokens one completion cost, as the server reported them (or estimated when it did not)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0  # part of input_tokens served from the server's prompt cache

    def __add__(self, other: Usage) -> Usage:
        """Usage of two requests together (a completion and its repair turn)."""
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
        )


@dataclass(frozen=True)
class Completion:
    """One model answer: raw text, parsed JSON when a schema was given, usage and model name.

    `cached` is True when the answer came from the response cache (no tokens were spent).
    """

    text: str
    json: Any = None
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    cached: bool = False


class TransientModelError(ModelError):
    """A failure worth retrying: rate limit, 5xx, timeout, dropped connection, garbled response.

    `retry_after` carries the server's Retry-After hint in seconds, when it sent one.
    """

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class TruncatedError(ModelError):
    """The reply stopped at the output-token limit (finish_reason "length"): never used as is.

    Callers that can ask for less (extraction splits its chunk in two) catch it; others fail.
    `usage` is what the cut-off call cost, so the ledger counts it like any other call.
    """

    def __init__(self, message: str, usage: Usage | None = None):
        super().__init__(message)
        self.usage = usage or Usage()


@runtime_checkable
class Provider(Protocol):
    """A model endpoint. Raise TransientModelError to ask for a retry, ModelError to give up."""

    async def complete(
        self, messages: list[dict], schema: dict | None = None, **params: Any
    ) -> Completion: ...
