"""A text's passages: its paragraphs, a long one split at sentence ends (at line ends or spaces when it has none).

The unit a `fast` subject page cites, the offline ask ranks and the MCP search returns.
"""

from __future__ import annotations

import re

from hti_git.sentences import skip_space, strip_span

# A sentence ends at . ; : ! or ? (and a closing quote or bracket) before a capital, a digit or an
# opening quote or bracket.
SENTENCE_END = re.compile(r"(?<=[.;:!?])[\"”)]?\s+(?=[\"“(\[]?[A-Z0-9])")


def split_passages(text: str, start: int, end: int, max_chars: int = 700) -> list[tuple[int, int]]:
    """Spans of the paragraphs in text[start:end]; long paragraphs split at sentence ends."""
    spans: list[tuple[int, int]] = []
    for m in re.finditer(r"[^\n]+(?:\n(?!\s*\n)[^\n]+)*", text[start:end]):
        p_start, p_end = strip_span(text, start + m.start(), start + m.end())
        if p_end <= p_start:
            continue
        if p_end - p_start <= max_chars:
            spans.append((p_start, p_end))
            continue
        piece_start = p_start
        cut_points = [p_start + s.start() for s in SENTENCE_END.finditer(text[p_start:p_end])]
        last_cut = p_start
        for cut in cut_points + [p_end]:
            if cut - piece_start > max_chars and last_cut > piece_start:
                spans.append(strip_span(text, piece_start, last_cut))
                piece_start = skip_space(text, last_cut)
            last_cut = cut
        while p_end - piece_start > max_chars * 2:  # no sentence breaks: cut at a line end (a table's row), else a space
            cut = text.rfind("\n", piece_start, piece_start + max_chars)
            if cut <= piece_start + max_chars // 4:
                cut = text.rfind(" ", piece_start, piece_start + max_chars)
            cut = cut if cut > piece_start else piece_start + max_chars
            spans.append(strip_span(text, piece_start, cut))
            piece_start = skip_space(text, cut)
        if p_end > piece_start:
            spans.append(strip_span(text, piece_start, p_end))
    return [s for s in spans if s[1] > s[0]]
