"""`fast` on a real annual report (Apple's 10-K for fiscal 2024, bench/data): an analyst's questions in
everyday words reach the section or table that answers them."""

from __future__ import annotations

from pathlib import Path

import pytest

from hti_git.compile.pipeline import compile_path
from hti_git.config import Settings
from hti_git.query.offline import ask_fast
from hti_git.store import IndexRepo
from hti_git.workspace import init_index

FILING = Path(__file__).resolve().parents[2] / "bench" / "data" / "apple-10-k-2024.md"


@pytest.fixture(scope="module")
def filing(tmp_path_factory):
    root = tmp_path_factory.mktemp("filing")
    init_index(root / "idx")
    with IndexRepo(root / "idx") as repo:
        compile_path(repo, FILING, Settings(), method="fast")
        yield repo.snapshot()


def test_the_filing_compiles_to_its_parts_and_items(filing):
    sections = filing.page("apple-10-k-2024/sections/index.md")
    titles = [c["title"] for c in sections.links()]
    assert any(t.startswith("Part I") for t in titles) and any(t.startswith("Part II") for t in titles)


@pytest.mark.parametrize("question, expected", [
    ("Roughly how many people did Apple employ at the end of fiscal 2024?", "approximately 164,000 full-time equivalent"),
    ("How much cash did operations generate in fiscal 2024?", "| Operating activities:"),
    ("When does Apple’s fiscal year end?", "ends on the last Saturday of September"),
    ("What was Apple’s effective tax rate in fiscal 2024?", "effective tax rate and statutory federal income tax rate"),
    ("Where is Apple headquartered?", "headquarters is located in Cupertino, California"),
])
def test_an_analysts_question_reaches_the_passage_that_answers_it(filing, question, expected):
    answer = ask_fast(filing, question)
    assert answer.found
    assert expected in answer.citations[0].text, [c.text[:120] for c in answer.citations]


def test_a_figure_asked_for_is_in_the_answer(filing):
    """The table under its introducing sentence is read with it: the rate itself is in the answer."""
    answer = ask_fast(filing, "What was Apple’s effective tax rate in fiscal 2024?").answer
    assert "Effective tax rate" in answer and "24.1 | %" in answer, answer
