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
