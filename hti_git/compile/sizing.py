"""How much one extraction call may take on: its reply must fit `max_output_tokens`, its prompt the
model's context window.

A fixed 30,000-character chunk asked real models for 7-14K tokens of reply against a 4,096-token
limit. Here the passage is sized from the output limit instead: the prompt asks for at most
`max_subjects` subjects of compact evidence (a short value and a few anchor words each), and the
passage holds about as much text as such a reply can cover. When a reply still stops at the limit,
extraction splits the chunk in two (compile/extract.py), so no compile fails for length.
"""

from __future__ import annotations

from dataclasses import dataclass

from hti_git.config import Settings
from hti_git.tokens import estimate_tokens

# Passage tokens per token of output limit. A subject costs ~SUBJECT_REPLY_TOKENS of reply, so a
# reply lists at most `max_subjects` (19 at 4,096). At 1.25x the limit (~22,000 characters of
# contract text), capable models filled that cap in 15 of 16 extraction replies on CUAD (run 7) and 7
# of 8 on a 10-Q (runs 37-39), and the subjects left out were what later questions missed. At ~0.7x
# (run 41, the 10-Q at 10,000 characters) the index held 101 subjects against 48 and answered 20 of
# 20 questions against 17-18, for 20% more compile tokens.
PASSAGE_PER_OUTPUT = 0.7
# Measured with a capable model answering through the manual endpoint: 410-560 characters (100-140
# tokens) per subject. At a cap that filled 85% of the limit, one reply in four ran over and its
# chunk had to be extracted again as two halves (input and output paid twice): leave a margin.
SUBJECT_REPLY_TOKENS = 150  # one subject with a one-line summary and two or three compact values
REPLY_SHARE = 0.7  # of max_output_tokens that the subject cap may fill
MIN_SUBJECTS = 4
MIN_CHUNK_CHARS = 2_000  # a chunk is never sized (or split) below this
PROMPT_MARGIN_TOKENS = 300  # tokenizer differences between our estimate and the server's
OVERLAP_SHARE = 64  # a chunk re-reads 1/64 of its size from the previous one (a few sentences: 320 characters at 20K)


@dataclass(frozen=True)
class ExtractionSize:
    chunk_chars: int
    overlap_chars: int
    max_subjects: int


def max_subjects(max_output_tokens: int) -> int:
    """Subjects one extraction reply may list and still fit `max_output_tokens`."""
    return max(MIN_SUBJECTS, int(max_output_tokens * REPLY_SHARE / SUBJECT_REPLY_TOKENS))


def extraction_size(settings: Settings, text: str, prompt_overhead_tokens: int) -> ExtractionSize:
    """Chunk size (characters) and subject cap for extracting `text` under `settings`.

    `chunk_size` in hti.yaml, when set, is used as given unless the context window cannot hold it;
    `auto` (the default) derives it from max_output_tokens. `prompt_overhead_tokens` is the prompt
    without the passage (instructions and schema).
    """
    chars_per_token = len(text) / max(1, estimate_tokens(text)) if text else 4.0
    chars = settings.chunk_size or int(settings.max_output_tokens * PASSAGE_PER_OUTPUT * chars_per_token)
    if settings.context_window is not None:
        room = settings.context_window - settings.max_output_tokens - prompt_overhead_tokens - PROMPT_MARGIN_TOKENS
        chars = min(chars, int(room * chars_per_token))
    if settings.chunk_size is None or settings.context_window is not None:
        chars = max(MIN_CHUNK_CHARS, chars)  # a size hti-git chose (or had to shrink) has a floor
    # Chunks end at the strongest break near their end (a blank line where there is one), so a
    # boundary subject needs its sentence back, not a page: each overlap is paid in every later call.
    overlap = min(settings.chunk_overlap, chars // OVERLAP_SHARE)
    return ExtractionSize(chars, overlap, max_subjects(settings.max_output_tokens))
