"""A provider that answers from a queue, for tests anywhere in the project (no network)."""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from hti_git.errors import ModelError
from hti_git.llm.jsonschema import validation_errors
from hti_git.llm.provider import Completion, TruncatedError, Usage
from hti_git.tokens import estimate_tokens

Response = str | dict | list | Completion | BaseException | Callable[[list[dict]], Any]


class ScriptedProvider:
    """Pops one scripted response per call and records every call in `calls`.

    A response may be a string (text), a dict/list (JSON), a Completion, an exception (raised),
    or a callable taking the messages and returning any of those (to answer by content).
    `default` (same kinds) answers when the queue is empty; without it an empty queue is an error.
    A reply longer than the call's `max_output_tokens` raises TruncatedError, as the OpenAI provider
    does when a server stops at the limit. `delay` (seconds) makes each call await, so concurrency can be observed via `peak_in_flight`.
    With a schema, string/dict answers are validated like the real provider does (ModelError if
    invalid), so a test cannot pass on output the OpenAI path would reject.
    """

    def __init__(
        self,
        responses: Iterable[Response] = (),
        *,
        default: Response | None = None,
        model: str = "scripted",
        delay: float = 0.0,
    ):
        self.responses: deque[Response] = deque(responses)
        self.default = default
        self.model = model
        self.delay = delay
        self.calls: list[dict[str, Any]] = []
        self.in_flight = 0
        self.peak_in_flight = 0

    def add(self, *responses: Response) -> None:
        """Queue more responses."""
        self.responses.extend(responses)

    async def complete(self, messages: list[dict], schema: dict | None = None, **params: Any) -> Completion:
        """Record the call and return (or raise) the next scripted response."""
        self.calls.append({"messages": messages, "schema": schema, "params": params})
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            if self.responses:
                response = self.responses.popleft()
            elif self.default is not None:
                response = self.default
            else:
                raise AssertionError(f"ScriptedProvider: no response left for call {len(self.calls)}")
            if callable(response) and not isinstance(response, BaseException):
                response = response(messages)
            completion = self._completion(response, messages, schema)
            limit = params.get("max_output_tokens")
            if limit and completion.usage.output_tokens > limit:
                # as a real server does: the reply stops at the limit, and the provider refuses it
                usage = Usage(completion.usage.input_tokens, limit)
                raise TruncatedError(f"the reply was cut off at the output-token limit ({limit} tokens)", usage)
            return completion
        finally:
            self.in_flight -= 1

    def _completion(self, response: Any, messages: list[dict], schema: dict | None) -> Completion:
        if isinstance(response, BaseException):
            raise response
        if isinstance(response, Completion):
            return response
        if isinstance(response, str):
            text, parsed = response, None
            if schema is not None:
                try:
                    parsed = json.loads(response)
                except ValueError as exc:
                    raise ModelError(f"scripted response is not JSON: {exc}") from None
        else:
            text, parsed = json.dumps(response, sort_keys=True), response
        if schema is not None:
            errors = validation_errors(parsed, schema, limit=3)
            if errors:
                raise ModelError(f"scripted response does not match the schema: {'; '.join(errors)}")
        prompt = sum(estimate_tokens(str(m.get("content", ""))) for m in messages)
        return Completion(text, parsed, Usage(prompt, estimate_tokens(text)), self.model)
