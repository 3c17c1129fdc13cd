import json

from hti_git.llm.estimate import prompt_tokens
from hti_git.llm.ledger import UsageLedger
from hti_git.llm.provider import Usage


def test_per_stage_totals_and_stable_order():
    ledger = UsageLedger()
    ledger.record("summarize", Usage(100, 20, 5))
    ledger.record("extract", Usage(1000, 200))
    ledger.record("extract", Usage(900, 100, 50))
    ledger.record("extract", Usage(), cached=True)
    ledger.record("judge", Usage(1, 1))
    data = ledger.to_dict()
    assert list(data["stages"]) == ["extract", "summarize", "judge"]
    assert data["stages"]["extract"] == {
        "calls": 2, "cached_calls": 1, "input_tokens": 1900, "output_tokens": 300, "cached_tokens": 50,
    }
    assert data["total"]["calls"] == 4 and data["total"]["input_tokens"] == 2001
    assert json.loads(json.dumps(data)) == data
    assert ledger.spent_tokens() == 2001 + 321
    assert ledger.stage("navigate").calls == 0


def test_trailers():
    ledger = UsageLedger()
    ledger.record("discover", Usage(10, 3, 1))
    ledger.record("discover", Usage(), cached=True)
    assert ledger.trailers() == {
        "HTI-Calls": "1",
        "HTI-Cached-Calls": "1",
        "HTI-Tokens-In": "10",
        "HTI-Tokens-Out": "3",
        "HTI-Tokens-Cached": "1",
    }


def test_merge():
    a, b = UsageLedger(), UsageLedger()
    a.record("navigate", Usage(5, 1))
    b.record("navigate", Usage(7, 2))
    b.record("answer", Usage(3, 3))
    a.merge(b)
    assert a.stage("navigate").input_tokens == 12 and a.stage("answer").calls == 1


def test_estimates():
    assert prompt_tokens([{"role": "user", "content": "hello world"}]) == 2 + 4
