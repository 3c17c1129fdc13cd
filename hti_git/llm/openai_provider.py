"""The OpenAI-compatible provider: OpenAI, vLLM, Ollama, llama.cpp server, LM Studio, ...

Structured output: ask for `response_format: json_schema` (strict). A server that rejects it
(HTTP 400/422) gets `json_object` mode plus the schema in the system prompt instead, and the
provider remembers that, so later calls go straight to JSON mode. Whatever the mode, the reply is
validated against the schema; an invalid reply gets ONE repair turn quoting the error, then fails.

Error policy (the client retries TransientModelError, gives up on ModelError):
- transient: 429, 408, 409, 5xx, timeouts, connection errors other than a refused connection, an
  unreadable HTTP body, an empty choice list (servers return one when overloaded or mid-restart; a
  retry usually succeeds);
- permanent: a refused connection (nothing listens on that port: it fails at once, with a hint),
  other 4xx (bad key, unknown model, context too long), a refusal, and a reply that is still not
  valid JSON for the schema after the repair turn (resending the same prompt would most likely
  produce the same reply, so we fail clearly instead of burning attempts).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import re
import time
from typing import Any

import openai

from hti_git.config import redact_url
from hti_git.errors import ModelError
from hti_git.llm.estimate import prompt_tokens
from hti_git.llm.jsonschema import validation_errors
from hti_git.llm.provider import Completion, TransientModelError, TruncatedError, Usage
from hti_git.tokens import estimate_tokens

_RETRYABLE_STATUS = {408, 409, 429}
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
# Parameters a model may refuse ("temperature does not support 0.0 with this model"); we then
# drop them for the rest of the session instead of failing every call.
_DROPPABLE = ("temperature", "top_p", "seed", "presence_penalty", "frequency_penalty")


class OpenAIProvider:
    """Provider over `openai.AsyncOpenAI`; retries are left to the ModelClient (max_retries=0 here).

    `structured_output` is None until a schema call has been made, then True when the server
    accepted json_schema and False when it fell back to JSON mode.
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        timeout: float = 120.0,
    ):
        self.model = model
        self.base_url = base_url
        self.timeout = timeout
        self.structured_output: bool | None = None
        self._api_key = api_key
        self._dropped: set[str] = set()
        self._client: openai.AsyncOpenAI | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    @property
    def official(self) -> bool:
        """True when talking to api.openai.com (which wants max_completion_tokens)."""
        return self.base_url is None or "api.openai.com" in self.base_url

    def _sdk(self) -> openai.AsyncOpenAI:
        # An httpx pool belongs to the event loop it was used on; each asyncio.run gets its own.
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client = openai.AsyncOpenAI(
                api_key=self._api_key, base_url=self.base_url, timeout=self.timeout, max_retries=0
            )
            self._client_loop = loop
        return self._client

    async def aclose(self) -> None:
        """Close the HTTP pool of the current event loop (call at the end of a batch)."""
        client, loop = self._client, self._client_loop
        self._client = self._client_loop = None
        if client is not None and loop is asyncio.get_running_loop():
            await client.close()

    async def complete(self, messages: list[dict], schema: dict | None = None, **params: Any) -> Completion:
        """One chat completion; with a schema, the parsed and validated JSON is in `.json`."""
        if schema is None:
            text, usage, model = await self._request(messages, None, params)
            return Completion(text, None, usage, model)
        first_try_structured = self.structured_output is not False
        attempt_messages = messages if first_try_structured else _with_json_instruction(messages, schema)
        text, usage, model = await self._request_structured(attempt_messages, messages, schema, params)
        value, problem = _parse_and_validate(text, schema)
        if problem is None:
            return Completion(text, value, usage, model)
        attempt_messages = (messages if self.structured_output else _with_json_instruction(messages, schema)) + [
            {"role": "assistant", "content": text},
            {
                "role": "user",
                "content": f"Your reply was not valid: {problem}. Reply again with only the JSON object, "
                "satisfying the schema exactly.",
            },
        ]
        text, more, model = await self._request_structured(attempt_messages, None, schema, params)
        usage = usage + more
        value, again = _parse_and_validate(text, schema)
        if again is not None:
            raise ModelError(f"model output does not match the schema after one repair turn: {again}")
        return Completion(text, value, usage, model)

    async def _request_structured(
        self, messages: list[dict], plain: list[dict] | None, schema: dict, params: dict
    ) -> tuple[str, Usage, str]:
        """json_schema when the server takes it, else JSON mode; `plain` = messages without instruction."""
        if self.structured_output is not False:
            fmt = {
                "type": "json_schema",
                "json_schema": {"name": _schema_name(schema), "schema": schema, "strict": True},
            }
            try:
                result = await self._request(messages, fmt, params)
                self.structured_output = True
                return result
            except _Rejected as rejected:
                fallback = _with_json_instruction(plain if plain is not None else messages, schema)
                try:
                    result = await self._request(fallback, {"type": "json_object"}, params)
                except _Rejected:
                    raise ModelError(rejected.message) from None
                self.structured_output = False  # the server lacks json_schema, not our request
                return result
        try:
            return await self._request(messages, {"type": "json_object"}, params)
        except _Rejected as rejected:
            raise ModelError(rejected.message) from None

    async def _request(
        self, messages: list[dict], response_format: dict | None, params: dict
    ) -> tuple[str, Usage, str]:
        """One HTTP request; retries only after dropping a parameter the model refuses."""
        while True:
            kwargs = self._kwargs(params)
            if response_format is not None:
                kwargs["response_format"] = response_format
            try:
                response = await self._sdk().chat.completions.create(
                    model=self.model, messages=messages, **kwargs
                )
            except openai.BadRequestError as exc:
                name = _refused_param(exc, kwargs)
                if name is not None:
                    self._dropped.add(name)
                    continue
                raise self._rejected_or_error(exc, response_format) from None
            except openai.UnprocessableEntityError as exc:
                raise self._rejected_or_error(exc, response_format) from None
            except openai.APIStatusError as exc:
                raise self._status_error(exc) from None
            except openai.APITimeoutError:
                raise TransientModelError(f"request timed out after {self.timeout:g}s") from None
            except openai.APIConnectionError as exc:
                where = redact_url(self.base_url) or "api.openai.com"  # credentials in the URL stay out of messages
                if _refused(exc):
                    # Nothing listens there: retrying with backoff would only delay the same answer.
                    raise ModelError(f"cannot reach {where}: connection refused (is the server running? check "
                                     "OPENAI_BASE_URL or base_url in hti.yaml, or use --method fast)") from None
                raise TransientModelError(f"cannot reach {where}: {exc}") from None
            except (openai.APIResponseValidationError, ValueError) as exc:
                raise TransientModelError(f"unreadable response from the server: {exc}") from None
            return self._read(response, messages)

    def _kwargs(self, params: dict) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        for name, value in params.items():
            if value is None or name in self._dropped:
                continue
            if name == "max_output_tokens":
                # api.openai.com rejects max_tokens for newer models; compatible servers may
                # not know max_completion_tokens yet.
                kwargs["max_completion_tokens" if self.official else "max_tokens"] = value
            else:
                kwargs[name] = value
        return kwargs

    def _read(self, response: Any, messages: list[dict]) -> tuple[str, Usage, str]:
        choices = getattr(response, "choices", None)
        if not choices:
            raise TransientModelError("the server returned no choices")
        message = choices[0].message
        refusal = getattr(message, "refusal", None)
        if refusal:
            raise ModelError(f"the model refused: {refusal}")
        text = message.content or ""
        usage = response.usage
        if usage is None:  # some local servers omit usage; estimate so budgets still work
            spent = Usage(prompt_tokens(messages), estimate_tokens(text))
        else:
            details = getattr(usage, "prompt_tokens_details", None)
            cached = getattr(details, "cached_tokens", None) or 0
            spent = Usage(usage.prompt_tokens or 0, usage.completion_tokens or 0, cached)
        if getattr(choices[0], "finish_reason", None) == "length":
            # Truncated output is never used: JSON would fail with a misleading parse error (and a
            # repair turn would be cut off the same way), plain text would silently lose its end.
            raise TruncatedError("the reply was cut off at the output-token limit (finish_reason 'length'); "
                                 "raise max_output_tokens in hti.yaml", spent)
        return text, spent, response.model or self.model

    def _rejected_or_error(self, exc: openai.APIStatusError, response_format: dict | None) -> Exception:
        message = f"HTTP {exc.status_code} from the model server: {_error_text(exc)}"
        if response_format is not None:
            return _Rejected(message)
        return ModelError(message)

    def _status_error(self, exc: openai.APIStatusError) -> ModelError:
        status = exc.status_code
        text = f"HTTP {status} from the model server: {_error_text(exc)}"
        if status in _RETRYABLE_STATUS or status >= 500:
            return TransientModelError(text, retry_after=_retry_after(exc.response))
        if status in (401, 403):
            return ModelError(f"{text} (check the API key variable and base_url)")
        if status == 404:
            return ModelError(f"{text} (is the model name {self.model!r} right for this server?)")
        return ModelError(text)


class _Rejected(Exception):
    """The server refused the request as given (400/422) while a response_format was set."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def _with_json_instruction(messages: list[dict], schema: dict) -> list[dict]:
    """Messages with the schema spelled out in the system prompt (JSON mode needs the word JSON)."""
    note = (
        "Respond with a single JSON object and nothing else. It must satisfy this JSON Schema:\n"
        + json.dumps(schema, sort_keys=True)
    )
    if messages and messages[0].get("role") == "system":
        first = dict(messages[0])
        first["content"] = f"{first.get('content', '')}\n\n{note}"
        return [first, *messages[1:]]
    return [{"role": "system", "content": note}, *messages]


def _parse_and_validate(text: str, schema: dict) -> tuple[Any, str | None]:
    """(value, None) when `text` is JSON satisfying `schema`, else (None, the first problem)."""
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1)
    try:
        value = json.loads(stripped)
    except ValueError as exc:
        start, end = stripped.find("{"), stripped.rfind("}")
        try:
            value = json.loads(stripped[start : end + 1]) if 0 <= start < end else None
        except ValueError:
            value = None
        if value is None:
            return None, f"not valid JSON ({exc})"
    errors = validation_errors(value, schema, limit=3)
    if errors:
        return None, "; ".join(errors)
    return value, None


def _refused(exc: BaseException) -> bool:
    """True when a connection error was caused by a refused connection (nothing listens on the port).

    The SDK wraps it several times over (httpx, httpcore, anyio's OSError and exception groups).
    """
    todo, seen = [exc], set()
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError):
            return True
        todo += [current.__cause__, current.__context__, *getattr(current, "exceptions", ())]
    return False


def _schema_name(schema: dict) -> str:
    name = _NAME_UNSAFE.sub("_", str(schema.get("title") or "response")).strip("_")
    return (name or "response")[:64]


def _refused_param(exc: openai.APIStatusError, sent: dict) -> str | None:
    text = _error_text(exc).lower()
    if "support" not in text:
        return None
    for name in _DROPPABLE:
        if name in sent and name in text:
            return name
    return None


def _error_text(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:300]
        if isinstance(inner, str):
            return inner[:300]
    return str(exc.message)[:300]


def _retry_after(response: Any, now: float | None = None) -> float | None:
    """Seconds from Retry-After (seconds or HTTP date) or retry-after-ms, if present."""
    headers = getattr(response, "headers", None) or {}
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (now if now is not None else time.time()))
