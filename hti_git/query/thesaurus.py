"""Words contracts and filings use for the same thing: a question's word also matches its equivalents.

Lexical search misses a clause written in other words than the question ("buy" / "purchase", "cap" /
"limit"). Each set below holds words of one meaning in contract and financial English; a question word
matches the document's words of its set at `SYNONYM_WEIGHT` of a match of the word itself. The sets are
general vocabulary (a legal drafting thesaurus), not any document's wording. `WORD_FORMS` are forms of
one word that the stemmer leaves apart; they match as the word itself.
"""

from __future__ import annotations

import re
from functools import cache

from hti_git.lexical import search_terms

SYNONYM_SETS: tuple[str, ...] = (
    "buy purchase procure acquire",
    "sell resell sale",
    "end terminate expire cease",
    "cap limit maximum ceiling",
    "uncapped unlimited",
    "assign transfer delegate novate",
    "compete competitor competitive rival",
    "exclusive sole",
    "revenue sales turnover proceeds receipts",
    "royalty commission",
    "profit earnings income margin",
    "fee price charge",
    "pay payment compensation remuneration consideration",
    "increase raise escalate",
    "audit inspect examine",
    "warranty guarantee warrant",
    "indemnify indemnification indemnity",
    "confidential proprietary secret",
    "patent copyright trademark",
    "ownership title",
    "license licence sublicense",
    "notify notice notification",
    "consent approval permission",
    "renew extend",
    "jurisdiction venue forum",
    "arbitration mediation",
    "employee personnel staff headcount workforce",
    "solicit recruit hire",
    "customer client",
    "affiliate subsidiary",
    "merger acquisition consolidation reorganization",
    "sue lawsuit litigation suit",
    "contest challenge dispute",
    "geography territory region",
    "goods products merchandise",
    "create develop invent",
    "joint mutual",
    "quantity volume units",
    "forecast estimate projection",
    "damages losses",
    "breach default",
    "minimum least",
    "except notwithstanding carveout",
    "cause reason",
    "penalty liquidated",
    "release waive discharge",
    "escrow deposit",
    "disparage defame criticize",
    "discount rebate",
    "debt borrowings indebtedness loans",
    "repurchase buyback",
    "shareholder stockholder",
    "lease rent",
    "salary wage",
    "risk uncertainty",
)


# Forms of one word the Snowball stemmer leaves apart ('notify' -> notifi, 'notice' -> notic):
# they match as the question's own word, at full weight
WORD_FORMS: tuple[str, ...] = (
    "indemnify indemnification indemnity",
    "notify notice notification",
    "audit auditor",
    "expire expiry",
    "own ownership",
    "employ employee",
    # a word and its noun, which the stemmer leaves apart ("merged" / "merger": "merg" / "merger")
    "merge merger",
    "liable liability",
    "deliver delivery",
    "acquire acquisition",
    "guarantee guaranty",
    "settle settlement",
    "register registration",
    "administer administration",
    # irregular forms of verbs contracts and filings use ("paid" / "payable", "sold" / "sell")
    "pay paid payable",
    "sell sold",
    "buy bought",
    "hold held",
    "spend spent",
    "lose lost",
    "give gave given",
    "make made",
    "bring brought",
    # British and American spellings ("programme" / "program", "authorisation" / "authorization")
    "program programme",
    "authorize authorise authorization authorisation",
    "organize organise organization organisation",
    "recognize recognise recognition",
    "analyze analyse analysis",
    "labor labour",
    "center centre",
    "defense defence",
    "offense offence",
    "judgment judgement",
    "favor favour favorable favourable",
    "behavior behaviour",
    "catalog catalogue",
)

# Abbreviations of contract and financial English a question may use where the document spells the
# words out ("diluted EPS" / "diluted earnings per share"): the question keeps the abbreviation and
# gains the words (`spelled_out`)
ABBREVIATIONS: dict[str, str] = {
    "eps": "earnings per share",
    "capex": "capital expenditures property plant equipment",
    "pp&e": "property plant equipment",
    "r&d": "research development",
    "sg&a": "selling general administrative",
    "cogs": "cost of sales",
    "yoy": "year over year",
    "fy": "fiscal year",
    "ceo": "chief executive officer",
    "cfo": "chief financial officer",
    "coo": "chief operating officer",
    "ip": "intellectual property",
    "nda": "non-disclosure agreement",
    "m&a": "merger acquisition",
    "roi": "return on investment",
    "ebit": "earnings before interest taxes",
    "ebitda": "earnings before interest taxes depreciation amortization",
    "d&a": "depreciation amortization",
}
_ABBREVIATION = re.compile(r"(?<![\w&])(" + "|".join(re.escape(a) for a in sorted(ABBREVIATIONS, key=len, reverse=True))
                           + r")(?:'?s)?(?![\w&])", re.IGNORECASE)

NEGATIONS = ("un", "non")


def spelled_out(question: str) -> str:
    """The question with each abbreviation of `ABBREVIATIONS` followed by its words."""
    return _ABBREVIATION.sub(lambda m: f"{m.group(0)} {ABBREVIATIONS[m.group(1).lower()]}", question)


def abbreviated(question: str) -> list[str]:
    """The spelled-out words of each abbreviation in the question."""
    return [ABBREVIATIONS[m.group(1).lower()] for m in _ABBREVIATION.finditer(question)]


@cache
def word_forms() -> dict[str, frozenset[str]]:
    """Each stem of `WORD_FORMS` and the other stems of its word."""
    return _table(WORD_FORMS)


@cache
def synonyms() -> dict[str, frozenset[str]]:
    """Each stem (as `lexical.search_terms` stems) and the other stems of its sets; a negated word
    also meets what it negates and its equivalents ("uncapped" is about caps)."""
    table = _table(SYNONYM_SETS)
    for stem, others in list(table.items()):
        for prefix in NEGATIONS:
            base = stem[len(prefix):]
            if stem.startswith(prefix) and base in table:
                table[stem] = others | table[base] | {base}
    return table


def _table(sets: tuple[str, ...]) -> dict[str, frozenset[str]]:
    out: dict[str, frozenset[str]] = {}
    for line in sets:
        stems = frozenset(search_terms(line, frozenset()))  # "own" is a stopword, "owns" is not
        for s in stems:
            out[s] = out.get(s, frozenset()) | (stems - {s})
    return out
