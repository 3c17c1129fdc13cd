"""A table's row reaches the model with the units and column headings its table states above it."""

from __future__ import annotations

from query_support import NOT_FOUND, answer_citing, client_for

from hti_git.compile.pipeline import compile_path
from hti_git.config import Settings
from hti_git.query.answer_llm import ask_llm
from hti_git.store import IndexRepo
from hti_git.text import table_units
from hti_git.workspace import init_index

CAPTION = "in millions, except number of shares, which are reflected in thousands"
FILING = f"""# Quarterly Report

## Item 1. Financial Statements

Net sales grew in every segment during the quarter, led by Services, while Products were flat.

## Item 2. Unregistered Sales of Equity Securities

Share repurchase activity during the three months ended June 29, 2024 was as follows ({CAPTION}):

| Periods | Total Number of Shares Purchased | Average Price Paid Per Share |
|---|---|---|
| May 5, 2024 to June 1, 2024 | 36,912 | 189.53 |
| June 2, 2024 to June 29, 2024 | 41,354 | 205.54 |

The Company repurchased shares under its publicly announced program throughout the quarter.
"""


def _ask(tmp_path, document: str, question: str, *replies):
    """`question` asked with a model scripted to give `replies`, of `document` compiled with fast."""
    (tmp_path / "report.md").write_text(document, encoding="utf-8")
    init_index(tmp_path / "idx")
    with IndexRepo(tmp_path / "idx") as repo:
        compile_path(repo, tmp_path / "report.md", Settings(), method="fast")
        client, provider = client_for(*replies)
        return ask_llm(repo.snapshot(), question, client), provider


def test_a_rows_units_are_the_last_note_above_it_within_reach():
    text = "Sales (in millions):\n| a | 1 |\nShares (in thousands):\n| b | 2 |\n"
    assert table_units(text, text.index("| a")) == "in millions"
    assert table_units(text, text.index("| b")) == "in thousands"
    assert table_units("| a | 1 |", 0) == ""
    far = "(in millions)" + "x" * 4000 + "\n| a | 1 |"
    assert table_units(far, far.index("| a")) == ""  # another table's note, too far above
    assert table_units("The fee (dollars in millions) is due.", 30) == "dollars in millions"


def test_navigation_shows_a_table_row_with_its_tables_units(tmp_path):
    # the word search shows the table's page with the root: the answer comes in the first reply
    answer, provider = _ask(tmp_path, FILING, "How many shares were repurchased from June 2 to June 29, 2024?",
                            answer_citing("41,354 thousand shares", "41,354", "June 29, 2024 | 41,354"))
    prompts = "\n".join(c["messages"][-1]["content"] for c in provider.calls)
    row = next(line for line in prompts.splitlines() if "41,354" in line and line.startswith("["))
    assert row.endswith(f"(table: {CAPTION})")
    assert not any("(table:" in line for line in prompts.splitlines() if "Net sales grew" in line)  # prose: no units
    assert answer.found and any("41,354" in c.text for c in answer.citations)


def test_the_source_fallback_shows_a_windows_table_rows_with_their_units(tmp_path):
    """When navigation finds nothing, the source windows read in its stead hold the table's rows with
    the units the table states above them too (run 50's answerer saw "118,254" with no "In millions")."""
    answer, provider = _ask(tmp_path, FILING, "How many shares were repurchased from June 2 to June 29, 2024?",
                            NOT_FOUND, answer_citing("41,354 thousand shares", "41,354"))
    window = next(line for line in provider.calls[-1]["messages"][-1]["content"].splitlines() if "41,354" in line)
    assert window.startswith("[S") and window.endswith(f"(table: {CAPTION})")
    assert answer.found and answer.fallback


def test_fast_shows_a_cited_tables_units_once(tmp_path):
    from hti_git.query.offline import ask_fast

    prose = "\n\n".join(f"Paragraph {n} on liquidity, debt maturities and dividends declared by the Board. " * 6
                          for n in range(3))
    filing = FILING.replace(f"Share repurchase activity during the three months ended June 29, 2024 was as follows "
                            f"({CAPTION}):", f"Activity is tabulated below ({CAPTION}).\n\n{prose}")
    (tmp_path / "report.md").write_text(filing, encoding="utf-8")
    init_index(tmp_path / "idx")
    with IndexRepo(tmp_path / "idx") as repo:
        compile_path(repo, tmp_path / "report.md", Settings(), method="fast")
        answer = ask_fast(repo.snapshot(), "How many shares were purchased from June 2, 2024 to June 29, 2024?")
    assert answer.found and "41,354" in answer.answer
    assert answer.answer.count(CAPTION) == 1  # shown with the row, or with its caption when that is cited too


def test_a_table_row_reaches_the_model_with_its_tables_column_headings(tmp_path):
    """"iPad | 7,162 | 5,791 | 19,744 | 21,857" reaches the model with the periods its columns are:
    which figure is the nine months' is in the headings, not in the row."""
    rows = "".join(f"| Product line {n} | {n},100 | {n},200 | {n},300 | {n},400 |\n" for n in range(1, 40))
    statement = ("# Quarterly Report\n\n## Item 1. Net Sales by Category\n\nThe Company's results by product line "
                 "were as follows (in millions):\n\n|  | Three Months Ended |  | Nine Months Ended |  |\n|---|---|---|---|---|\n"
                 "|  | June 29, 2024 | July 1, 2023 | June 29, 2024 | July 1, 2023 |\n"
                 f"{rows}| iPad | 7,162 | 5,791 | 19,744 | 21,857 |\n\n## Item 2. Risks\n\nCompetition is intense.\n")
    answer, provider = _ask(tmp_path, statement, "What were iPad net sales in the nine months?",
                            NOT_FOUND, answer_citing("$19,744 million", "19,744"))
    prompts = "\n".join(c["messages"][-1]["content"] for c in provider.calls)
    row = next(line for line in prompts.splitlines() if "19,744" in line and line.startswith("["))
    assert row.endswith("(table: in millions; columns: Three Months Ended | Nine Months Ended / June 29, 2024 | "
                        "July 1, 2023 | June 29, 2024 | July 1, 2023)")
    assert answer.found and any("19,744" in c.text for c in answer.citations)
