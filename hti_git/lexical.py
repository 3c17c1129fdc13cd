"""Lexical scoring shared by the fast compile (keywords) and fast navigation (BM25)."""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

import Stemmer

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each either few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just me more
    most my myself no nor not now of off on once only or other our ours ourselves out over own same shall she
    should so some such than that the their theirs them themselves then there these they this those through
    to too under until up upon very was we were what when where which while who whom why will with would you
    your yours yourself yourselves may must hereof herein hereto hereunder thereof therein whether within
    without per one two three clause contract agreement party parties section""".split()
)

# Question boilerplate in CUAD-style prompts that says nothing about where the answer is.
QUESTION_NOISE = frozenset(
    "there provision provisions include includes including category categories describe details specify "
    "specified specific state states question answer happen happens happened".split()
)


_ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)")


def _ordinal(word: str) -> str:
    """An ordinal as its number: "the 16th day of February" matches "February 16"."""
    m = _ORDINAL.fullmatch(word)
    return m.group(1) if m else word


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A light suffix stripper: enough to match 'terminate', 'termination', 'terminated'. Cached: a
    word search stems every listing entry of an index afresh, mostly the same few thousand words."""
    word = _ordinal(word)
    for suffix in ("ational", "ations", "ation", "ments", "ment", "ings", "ing", "ies", "ied", "ness", "ed", "es", "s", "e", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
    return word


def terms(text: str, drop: frozenset[str] = STOPWORDS) -> list[str]:
    """Stemmed content words of `text`, in order."""
    return [stem(w) for w in _WORD.findall(text.lower()) if w not in drop and len(w) > 1]


# Words the Snowball stemmer joins to a word of another meaning: 'competent' (a competent court) is not
# 'compete' (a non-compete)
_UNSTEMMED = {"competent": "competen", "competence": "competen", "competency": "competen"}
_SNOWBALL = threading.local()  # a PyStemmer stemmer is not thread-safe: one per thread


def search_terms(text: str, drop: frozenset[str] = STOPWORDS) -> list[str]:
    """Content words of `text`, in order, stemmed with the Snowball English (Porter 2) stemmer: the
    clause search's words, for documents and questions alike. Unlike `stem` it joins a word's forms
    ('property'/'properties', 'assigned'/'assignment', 'capped'/'cap', 'transferable'/'transfer'); a
    hyphenated compound is its parts ('non-transferable' -> 'non', 'transfer')."""
    stemmer = getattr(_SNOWBALL, "stemmer", None)
    if stemmer is None:
        stemmer = _SNOWBALL.stemmer = Stemmer.Stemmer("english")
    words = [_ordinal(w) for w in _WORD.findall(text.lower()) if w not in drop and len(w) > 1]
    return [_UNSTEMMED.get(w) or s for w, s in zip(words, stemmer.stemWords(words))]



def question_terms(question: str) -> list[str]:
    return terms(question, STOPWORDS | QUESTION_NOISE)


class BM25:
    """Okapi BM25 over a fixed collection of term lists (k1=1.2, b=0.75)."""

    def __init__(self, docs: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.75):
        self.k1, self.b = k1, b
        self.tfs = [Counter(d) for d in docs]
        self.lengths = [len(d) for d in docs]
        self.avgdl = (sum(self.lengths) / len(self.lengths)) if docs else 0.0
        df: Counter = Counter()
        for tf in self.tfs:
            df.update(tf.keys())
        n = len(docs)
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        self.n = n

    def idf_of(self, term: str) -> float:
        return self.idf.get(term, math.log(1 + (self.n + 0.5) / 0.5))

    def score_terms(self, query: Iterable[str], tf: Counter, length: int) -> float:
        score = 0.0
        norm = self.k1 * (1 - self.b + self.b * length / self.avgdl) if self.avgdl else self.k1
        for t in set(query):
            f = tf.get(t, 0)
            if f:
                score += self.idf_of(t) * f * (self.k1 + 1) / (f + norm)
        return score

    def score(self, query: Iterable[str], i: int) -> float:
        return self.score_terms(query, self.tfs[i], self.lengths[i])

    def ceiling(self, query: Iterable[str]) -> float:
        """Score of an ideal short passage holding each query term the document uses once: the threshold scale."""
        known = [t for t in set(query) if t in self.idf]  # words the document never uses cannot be matched
        return sum(self.idf[t] for t in known) * (self.k1 + 1) / (1 + self.k1 * (1 - self.b))


def keywords(doc_terms: list[str], model: BM25, k: int = 8) -> list[str]:
    """The `k` most distinctive terms of one document against the collection (tf-idf)."""
    tf = Counter(doc_terms)
    ranked = sorted(tf, key=lambda t: (-tf[t] * model.idf_of(t), t))
    return [t for t in ranked if not t.isdigit()][:k]
