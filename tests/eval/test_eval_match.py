"""The deterministic first pass of scoring and the question-file format."""

from __future__ import annotations

import pytest

from hti_git.errors import UsageError
from hti_git.eval.match import Match, find_dates, find_numbers, match_answer
from hti_git.eval.questions import parse_questions


@pytest.mark.parametrize("reference, answer, found, extractive, expected, rule", [
    ("Yes", "Yes, either party may terminate on 30 days' notice.", True, False, True, "yes-no"),
    ("No", "Yes.", True, False, False, "yes-no"),
    ("No", "not found", False, False, True, "yes-no"),  # absent clause: not found counts as No
    ("Yes", "The Company may terminate ...", True, True, True, "yes-no (extractive rule)"),
    ("No", "The Company may terminate ...", True, True, False, "yes-no (extractive rule)"),
    ("No", "not found", False, True, True, "yes-no (extractive rule)"),
    ("Yes", "The Company may terminate ...", True, False, None, "yes-no: answer says neither"),
    ("New York", "the laws of the State of New York, without regard to conflicts", True, False, True, "containment"),
    ("New York", "not found", False, False, False, "not found"),
    ("11/9/05", "dated as of November 9, 2005 by and between", True, False, True, "date"),
    ("11/9/05", "dated as of 2005-11-09", True, False, True, "date"),
    ("11/9/05", "made this 9th day of November, 2005", True, False, True, "date"),
    ("04/30/[]", "made this 30th day of April (the Effective Date)", True, False, True, "date"),
    ("9/30/97", "until September 30, 1998", True, False, None, "date: no matching date"),
    ("30 days", "upon thirty days prior written notice", True, False, True, "number"),
    ("successive 1 year", "renews for one (1) year terms", True, False, True, "number"),
    ("30 days", "upon thirty (30) months notice", True, False, None, "number: no matching number"),
    ("Clear Capital (\"Company\"); Radial Spark, LLC (\"Contractor\")",
     "between Clear Capital, a Delaware corporation, and Radial Spark, LLC, a consultant", True, False, True, "names"),
    ("perpetual", "The term runs until terminated", True, False, None, "no deterministic match"),
])
def test_match_rules(reference, answer, found, extractive, expected, rule):
    m = match_answer(reference, answer, found, extractive=extractive)
    assert (m.correct, m.rule) == (expected, rule)


def test_dates_and_numbers_are_parsed_in_several_formats():
    assert find_dates("11/9/05 and 2005-11-09 and Nov. 9th, 2005") == [(2005, 11, 9)] * 3
    assert find_dates("4/30/[][]") == [(None, 4, 30)]
    assert find_numbers("$3,250 per month for twelve (12) months, from 1 May 2020") == {3250.0, 12.0}


def test_question_file_format_and_errors():
    qs = parse_questions('{"question": "Q?", "answer": "No"}\n\n{"question": "R?", "answer": "x", "doc": "d",'
                         ' "evidence": ["e"], "category": "C"}\n')
    assert [q.yes_no for q in qs] == [True, False]
    assert qs[0].kind == "yes-no" and qs[1].evidence == ("e",) and qs[1].line == 3
    assert qs[0].id != qs[1].id and len(qs[0].id) == 12
    with pytest.raises(UsageError, match="qa.jsonl:2: 'answer'"):
        parse_questions('{"question": "Q?", "answer": "No"}\n{"question": "R?"}\n', "qa.jsonl")
    with pytest.raises(UsageError, match="not JSON"):
        parse_questions("{nope\n")
    with pytest.raises(UsageError, match="no questions"):
        parse_questions("\n")


def test_a_reference_saying_the_document_does_not_answer_is_met_by_not_found():
    """A filing's questions include ones it does not answer ("Not stated in the filing"): "not found"
    is the right answer there, for a model and for `fast` alike."""
    assert match_answer("Not stated in the filing", "not found", False) == Match(True, "absent: not found")
    assert match_answer("Not in the document.", "", False, extractive=True).correct is True
    assert match_answer("Not stated in the filing", "Revenue was $85.8 billion.", True, extractive=True).correct is False
    assert match_answer("Not stated in the filing", "The filing gives no unit count.", True).correct is None  # judge
    assert match_answer("None", "not found", False).correct is False  # "None" may be the answer itself


def test_a_units_word_counts_only_after_a_number():
    """"74.0% (up from 70.5% in the prior-year quarter)": "year" is no unit of its figures."""
    answer = "74.0% Services gross margin percentage in Q3 2024 (vs. 70.5% in Q3 2023)"
    assert match_answer("74.0% (up from 70.5% in the prior-year quarter)", answer, True).correct is True
    assert match_answer("thirty (30) days", "within 30 months", True).correct is None  # the unit still counts
    assert match_answer("thirty (30) days", "within thirty (30) days of notice", True).correct is True
