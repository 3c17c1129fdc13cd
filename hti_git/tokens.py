"""Token estimates without a tokenizer download.

BPE tokenizers for English prose average close to four characters per token; we
count word pieces instead of raw characters so that digits, punctuation and long
words weigh like they do in real tokenizers. Good to ~10% on contracts, which is
all budgets and cost estimates need.
"""

import re

_PIECE = re.compile(r"[A-Za-z]{1,8}|\d{1,3}|[^\sA-Za-z\d]")


def estimate_tokens(text: str) -> int:
    """Estimated token count of `text` for budget and cost arithmetic."""
    if not text:
        return 0
    return len(_PIECE.findall(text))
