"""Helpers for review tests: a crafted contract and hand edits committed through the store."""

from __future__ import annotations

from collections.abc import Callable

from hti_git.index.page import Page, parse_page
from hti_git.store import IndexRepo
from tests.support.shared import CONTRACTS, SHARED  # noqa: F401  (HTI_SHARED, or ../shared beside the checkout)

CLAUSES = {
    1: ("Services", "The Contractor shall provide software consulting services to the Company as described "
                    "in Exhibit A, with reasonable skill and care."),
    2: ("Fees", "The Company shall pay the Contractor a fee of $10,000 per month, payable within thirty days "
                "of each invoice."),
    3: ("Term", "This Agreement begins on the Effective Date and continues for one year unless terminated "
                "earlier under Section 4."),
    4: ("Termination", "Either party may terminate this Agreement on thirty days' written notice to the other party."),
    5: ("Confidentiality", "The Contractor shall keep all Confidential Information of the Company secret and "
                           "shall not disclose it to any third party."),
    6: ("Governing Law", "This Agreement is governed by the laws of the State of New York, without regard to "
                         "its conflict of laws rules."),
}


def contract(clauses: dict[int, tuple[str, str]] | None = None) -> str:
    """A small services agreement the fast compile turns into clauses, parties and defined terms."""
    clauses = CLAUSES if clauses is None else clauses
    parts = [
        "SERVICES AGREEMENT",
        'This Services Agreement (the "Agreement") is made between Acme Corp., a Delaware corporation '
        '(the "Company"), and Jane Roe, an individual (the "Contractor"). The parties hereby agree as follows.',
    ]
    parts += [f"{n}. {title}. {body}" for n, (title, body) in sorted(clauses.items())]
    parts.append("IN WITNESS WHEREOF, the parties have executed this Agreement.")
    return "\n\n".join(parts) + "\n"


def edit_page(repo: IndexRepo, path: str, change: Callable[[Page], None], message: str = "Hand edit") -> str:
    """Commit a hand edit of one page's front-matter (body kept) on the current branch."""
    page = parse_page(path, repo.snapshot("HEAD").read_bytes(path))
    change(page)
    return commit_files(repo, {path: page.render()}, message)


def commit_files(repo: IndexRepo, files: dict[str, bytes], message: str = "Hand edit", **kwargs) -> str:
    with repo.lock():
        result = repo.commit(files, message, **kwargs)
    assert result.sha is not None
    return result.sha
