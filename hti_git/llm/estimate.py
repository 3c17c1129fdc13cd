"""Token arithmetic for budgets and `compile --estimate`, without calling anything."""

from __future__ import annotations

from collections.abc import Iterable

from hti_git.tokens import estimate_tokens

# Chat formats wrap each message in a few role/separator tokens.
MESSAGE_OVERHEAD_TOKENS = 4


def prompt_tokens(messages: Iterable[dict]) -> int:
    """Estimated input tokens of a chat request (content plus per-message framing)."""
    total = 0
    for message in messages:
        content = message.get("content", "")
        if not isinstance(content, str):
            # multi-part content: count the text parts
            content = " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
        total += estimate_tokens(content) + MESSAGE_OVERHEAD_TOKENS
    return total


def estimate_calls(prompt_tokens_per_call: list[int], output_tokens_per_call: int = 0) -> dict:
    """{"calls", "input_tokens", "output_tokens", "max_prompt_tokens"} for a planned list of calls.

    `output_tokens_per_call` is an allowance the caller chooses (e.g. a typical answer size);
    output is never known in advance, so it defaults to 0 and is reported separately.
    """
    return {
        "calls": len(prompt_tokens_per_call),
        "input_tokens": sum(prompt_tokens_per_call),
        "output_tokens": output_tokens_per_call * len(prompt_tokens_per_call),
        "max_prompt_tokens": max(prompt_tokens_per_call, default=0),
    }
