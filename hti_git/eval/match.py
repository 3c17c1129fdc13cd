"""The deterministic first pass of scoring: a normalised match of an answer against the reference.

Rules, tried in order (the first that applies decides; `None` means "cannot tell", for the judge):

- yes/no: the reference is Yes or No. The candidate's yes/no is its first word; an answer that was
  not found counts as No (the clause is absent). Extractive systems (no model) cannot say yes or no:
  they answer Yes when they found a passage with evidence and No when they found nothing.
- absent: the reference says the document does not answer the question ("Not stated in the filing",
  "Not in the document"): "not found" is right; a found passage is wrong (a model's answer, which
  may say it is absent in other words, goes to the judge).
- not found: a value question the system did not answer is wrong.
- date: every date in the reference (11/9/05, 2005-11-09, November 9, 2005, 9th day of November,
  ...) is in the answer; a year missing on either side (CUAD writes 04/30/[]) matches any year.
- containment: the normalised reference occurs in the normalised answer.
- number: every number in the reference (digits or words: "thirty (30) days") is in the answer,
  with the units the reference gives its numbers ("30 days", "thirty (30) days", "74.0%"; not the
  "year" of "the prior-year quarter").
- names: each `;`-separated part of the reference (a party list), cut at its first parenthesis,
  occurs in the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FOLD = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "–": "-", "—": "-", "\u00a0": " "})
MONTHS = {m: i for i, m in enumerate(
    "january february march april may june july august september october november december".split(), 1)}
MONTHS.update({m[:3]: i for m, i in list(MONTHS.items())})
MONTHS["sept"] = 9
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december|" \
         r"jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_ORD = r"(?:st|nd|rd|th)?"
_YEAR = r"(\d{4}|'\d{2})"
_DATE_PATTERNS = (
    # 11/9/05, 04/30/[], 4.30.2020
    (re.compile(r"\b(\d{1,2})[/.](\d{1,2})[/.](\d{4}|\d{2}\b|\[[\s\]\[]*\]|_+)"), "mdy"),
    # 2005-11-09
    (re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"), "ymd"),
    # November 9, 2005 / Nov. 9th 2005 / November 9
    (re.compile(rf"\b{_MONTH}\s+(\d{{1,2}}){_ORD}\b(?:,?\s+{_YEAR})?"), "md_y"),
    # 9 November 2005 / 9th day of November, 2005 / 30th day of April
    (re.compile(rf"\b(\d{{1,2}}){_ORD}\s+(?:day\s+of\s+)?{_MONTH}(?:,?\s+{_YEAR})?"), "dm_y"),
)
_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_NUMBER_WORDS.update({"thirty": 30, "forty": 40, "forty-five": 45, "fifty": 50, "sixty": 60, "seventy": 70,
                      "eighty": 80, "ninety": 90, "hundred": 100, "one hundred": 100, "one hundred twenty": 120,
                      "one hundred eighty": 180, "three hundred sixty-five": 365, "twenty-four": 24})
_ABSENT = re.compile(r"(?:not (?:stated|found|given|disclosed|mentioned|specified|provided|addressed|answered)"
                     r"|not in the (?:document|filing|contract|agreement|text)|no answer)(?: in the [a-z ]+)?$")
_NUMBER = re.compile(r"\b\d{1,3}(?:,\d{3})+(?:\.\d+)?\b|\b\d+(?:\.\d+)?\b")
_UNITS = {"day": "day", "days": "day", "business": "business", "week": "week", "weeks": "week",
          "month": "month", "months": "month", "year": "year", "years": "year", "percent": "percent",
          "%": "percent", "hour": "hour", "hours": "hour"}
_UNIT_AFTER_NUMBER = re.compile(r"\d\)?\s*(%|(?:" + "|".join(w for w in _UNITS if w != "%") + r")\b)", re.IGNORECASE)

Date = tuple[int | None, int, int]  # (year or None, month, day)


@dataclass(frozen=True)
class Match:
    """A deterministic verdict: correct True/False, or None when no rule can tell; and the rule used."""

    correct: bool | None
    rule: str


def normalise(text: str) -> str:
    """Lower case, quotes folded, punctuation to spaces, single spaces."""
    text = text.translate(_FOLD).lower()
    return " ".join(re.sub(r"[^a-z0-9%]+", " ", text).split())


def yes_no_of(answer: str, found: bool, extractive: bool) -> str | None:
    """The yes/no an answer gives (see the module rules), or None when it says neither."""
    if not found:
        return "no"
    if extractive:
        return "yes"
    first = normalise(answer).split(" ", 1)[0] if answer.strip() else ""
    return first if first in ("yes", "no") else None


def match_answer(reference: str, answer: str, found: bool, *, extractive: bool = False) -> Match:
    """Score `answer` against `reference` by the rules of this module."""
    ref = normalise(reference)
    if ref in ("yes", "no"):
        said = yes_no_of(answer, found, extractive)
        if said is None:
            return Match(None, "yes-no: answer says neither")
        return Match(said == ref, "yes-no (extractive rule)" if extractive else "yes-no")
    if _ABSENT.match(ref):  # "Not stated in the filing": the document does not answer it
        if not found or not answer.strip():
            return Match(True, "absent: not found")
        return Match(False if extractive else None, "absent: the answer found something")
    if not found or not answer.strip():
        return Match(False, "not found")
    ref_dates = find_dates(reference)
    if ref_dates:  # before containment: "4/26/16" must not match the digits "4 26 16" of a clause number
        cand_dates = find_dates(answer)
        if all(any(same_date(r, c) for c in cand_dates) for r in ref_dates):
            return Match(True, "date")
        return Match(None, "date: no matching date")
    cand = normalise(answer)
    if ref and f" {ref} " in f" {cand} ":
        return Match(True, "containment")
    ref_numbers = find_numbers(reference)
    if ref_numbers:
        units = {_UNITS[w.lower()] for w in _UNIT_AFTER_NUMBER.findall(reference)}  # "30 days", "(30) days", "74%"
        cand_units = {_UNITS[w] for w in re.findall(r"[a-z]+|%", answer.lower()) if w in _UNITS}
        if ref_numbers <= find_numbers(answer) and units <= cand_units:
            return Match(True, "number")
        return Match(None, "number: no matching number")
    parts = [p for p in (_name_core(part) for part in reference.split(";")) if p]
    if len(parts) > 1 and all(f" {p} " in f" {cand} " for p in parts):
        return Match(True, "names")
    return Match(None, "no deterministic match")


def _name_core(part: str) -> str:
    """The name in one part of a party list: before any parenthesis or 'together with'."""
    core = re.split(r"\(|\btogether with\b|,\s*(?:a|an)\s", part.translate(_FOLD), maxsplit=1)[0]
    core = normalise(core)
    return core.removeprefix("the ") if len(core) > 2 else ""


def find_dates(text: str) -> list[Date]:
    """Every date written in `text`, as (year or None, month, day)."""
    found: list[Date] = []
    low = text.translate(_FOLD).lower()
    for pattern, order in _DATE_PATTERNS:
        for m in pattern.finditer(low):
            if order == "mdy":
                month, day, year = int(m.group(1)), int(m.group(2)), _year(m.group(3))
            elif order == "ymd":
                year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
            elif order == "md_y":
                month, day, year = MONTHS[m.group(1)], int(m.group(2)), _year(m.group(3))
            else:
                day, month, year = int(m.group(1)), MONTHS[m.group(2)], _year(m.group(3))
            if 1 <= month <= 12 and 1 <= day <= 31:
                found.append((year, month, day))
    return found


def _year(raw: str | None) -> int | None:
    if not raw or not raw.strip("'").isdigit():
        return None  # absent, or a blank CUAD writes as [] or ___
    digits = raw.strip("'")
    year = int(digits)
    if len(digits) == 2:
        year += 2000 if year < 50 else 1900
    return year


def same_date(a: Date, b: Date) -> bool:
    """Same month and day, and the same year unless either lacks one."""
    return a[1:] == b[1:] and (a[0] is None or b[0] is None or a[0] == b[0])


def find_numbers(text: str) -> set[float]:
    """Numbers written in digits or (common) words, with dates left out."""
    low = text.translate(_FOLD).lower()
    for pattern, _ in _DATE_PATTERNS:
        low = pattern.sub(" ", low)
    values = {float(m.group(0).replace(",", "")) for m in _NUMBER.finditer(low)}
    for phrase in sorted(_NUMBER_WORDS, key=len, reverse=True):
        if re.search(rf"\b{re.escape(phrase)}\b", low):
            values.add(float(_NUMBER_WORDS[phrase]))
            low = re.sub(rf"\b{re.escape(phrase)}\b", " ", low)
    return values
