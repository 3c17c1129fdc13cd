"""hti-git's BM25 (`lexical.BM25`: the chunks baseline, source passages, the MCP search) scores as the
well-kept `bm25s` library's Lucene BM25 does, on real documents.

The clause search keeps its own scorer: a question word and its equivalents saturate together, the
equivalents at half weight, and a clause's name adds a bonus (`clause_search.ClauseIndex.score`),
which per-token sums cannot express. Its BM25 part is this formula."""

from __future__ import annotations

from pathlib import Path

import bm25s
import numpy as np
import pytest

from hti_git.lexical import BM25, question_terms, terms
from hti_git.sources import load_source
from hti_git.sources.passages import split_passages

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "tests" / "fixtures" / "slingerbaginc-05-27-2020-ex-10-7-consulting-agreement.txt",
             ROOT / "tests" / "fixtures" / "alcostoresinc-12-14-2005-ex-10-26-agency-agreement.pdf",
             ROOT / "bench" / "data" / "apple-10-k-2024.md"]
QUESTIONS = ["Which state's law governs this agreement?", "Who may terminate, and on what notice?",
             "Is there a cap on liability?", "How much cash did operations generate in fiscal 2024?",
             "Can the agreement be assigned without consent?"]


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.suffix)
def test_bm25_scores_as_bm25s_lucene_does(path):
    text = load_source(path).text
    docs = [terms(text[s:e]) for s, e in split_passages(text, 0, len(text))]
    ours = BM25(docs)
    reference = bm25s.BM25(method="lucene", k1=ours.k1, b=ours.b)
    reference.index(docs, show_progress=False)
    for question in QUESTIONS:
        q = question_terms(question)
        expected = reference.get_scores(q)
        got = np.array([ours.score(q, i) for i in range(len(docs))]) / (ours.k1 + 1)  # Lucene drops (k1 + 1)
        assert np.allclose(got, expected, rtol=1e-4, atol=1e-5), question
        assert list(np.argsort(-got, kind="stable")[:10]) == list(np.argsort(-expected, kind="stable")[:10])
