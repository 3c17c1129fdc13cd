"""fast ask: clause search, citations true to source.txt, revisions, budgets, calibrated not-found."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from hti_git.compile.pipeline import compile_path
from hti_git.config import Settings
from hti_git.errors import UsageError
from hti_git.query.clause_search import clause_index
from hti_git.query.offline import (
    FOUND_COVERAGE,
    FOUND_STRENGTH,
    MAX_CITATIONS,
    READ,
    _supported,
    ask_fast,
)
from hti_git.store import IndexRepo
from hti_git.workspace import init_index


@pytest.fixture
def repo(compiled_repo):
    return compiled_repo


def _citations_are_true(snapshot, answer):
    for c in answer.citations:
        text = snapshot.read_text(f"{c.doc}/source.txt")
        assert 0 <= c.start < c.end <= len(text)
        assert " ".join(text[c.start:c.end].split()) == " ".join(c.text.split())
        assert snapshot.exists(c.page)


def test_governing_law_is_found_with_citations(repo):
    snap = repo.snapshot()
    answer = ask_fast(snap, "Which state's law governs this agreement?")
    assert answer.found and not answer.fallback
    assert "New York" in answer.answer
    assert any("governing-law" in c.page for c in answer.citations)
    _citations_are_true(snap, answer)
    actions = [s.action for s in answer.trace]
    assert actions[0] == "read" and actions[-1] == "answer"


def test_the_agreements_own_clause_comes_before_an_annexed_clause_of_the_same_name(repo):
    """The consulting agreement annexes a warrant with its own "4.7 Governing Law", which scores higher:
    a question about the agreement is answered by the agreement's 7.10 first, one about the warrant by 4.7."""
    snap = repo.snapshot()
    answer = ask_fast(snap, "Which state's law governs this agreement?")
    assert answer.citations[0].page.endswith("article-7-general/7-10-governing-law.md")
    assert answer.answer.startswith("7.10 Governing Law. This Agreement")
    assert any(c.page.endswith("4-7-governing-law.md") for c in answer.citations)  # still cited, after it
    warrant = ask_fast(snap, "Which state's law governs the warrant?")
    assert warrant.answer.startswith("4.7 Governing Law. This Warrant")
    assert answer.citations[0].text.startswith(("7.10 Governing Law", "4.7 Governing Law"))  # from its heading
    assert answer.usage["calls"] == 0


def test_nonsense_is_not_found(repo):
    answer = ask_fast(repo.snapshot(), "What colour are the zebras on Jupiter?")
    assert not answer.found and answer.citations == []
    assert answer.answer == "not found: the document never mentions Jupiter"
    assert ask_fast(repo.snapshot(), "What colour are the zebras?").answer == "not found"


def test_a_question_about_a_name_the_document_never_writes_is_not_found(repo):
    """The consulting agreement never mentions Microsoft: its governing-law clause does not say which
    law governs a contract with Microsoft. A name it does write keeps the question searchable."""
    snap = repo.snapshot()
    answer = ask_fast(snap, "Which law governs the consulting agreement with Microsoft?")
    assert not answer.found and answer.citations == []
    assert answer.answer == "not found: the document never mentions Microsoft"
    assert [s.note for s in answer.trace if s.action == "skip"] == ["never mentions Microsoft"]
    assert ask_fast(snap, "Which law governs the consulting agreement with Slinger Bag?").found


def test_passages_read_are_bounded_and_counted(repo):
    answer = ask_fast(repo.snapshot(), "termination notice confidential assignment", max_pages=2)
    reads = [s for s in answer.trace if s.action == "read"]
    assert 1 <= len(reads) <= 2
    assert all(s.tokens > 0 for s in reads)  # what the reader read, for the eval's tokens per question


# The newcomer's questions (issue 16), each with the clause it must find.

def test_who_are_the_parties_finds_the_parties(repo):
    answer = ask_fast(repo.snapshot(), "Who are the parties?")
    assert answer.found
    assert "/parties/" in answer.citations[0].page
    assert "Slinger Bag Inc." in answer.answer and "Aitan Zacharin" in answer.answer


def test_a_question_asking_who_the_parties_are_reads_their_pages(repo):
    """CUAD asks "Who are the parties that signed this contract?": "signed" only restates what a party
    is, and clauses full of "party" are not who the parties are. What a party may do is not such a
    question."""
    from hti_git.query.clause_search import asks_for_parties

    for question in ("Who are the parties that signed this contract?", "Who signed the agreement?"):
        answer = ask_fast(repo.snapshot(), question)
        assert answer.found and all("/parties/" in c.page for c in answer.citations)
        assert "Slinger Bag Inc." in answer.answer and "Aitan Zacharin" in answer.answer
    assert asks_for_parties("Who is a party to the lease?") and asks_for_parties("Name the parties.")
    answer = ask_fast(repo.snapshot(), "When was the agreement signed?")  # not "signed" of the amendments clause
    assert answer.found and "made this 30th day of April" in answer.answer
    for question in ("Which party may terminate?", "What are the parties' obligations?",
                     "What are the parties required to do?", "Who is the party responsible for insurance?"):
        assert not asks_for_parties(question)


def test_a_question_asking_when_the_agreement_expires_reads_its_term(repo):
    """"When does the agreement expire?" of a contract that never says "expire": its clause "(a) Term"
    says how long it runs. A question about ending it by a party's act, or about a warranty's term, is
    not such a question; pages named "Economic Terms" or "Basic Term Lease Rate Factor" do not name the
    agreement's term (without one, the question's own words are searched)."""
    from dataclasses import replace

    from hti_git.query.clause_search import asks_for_term, clause_index, names_term

    for question in ("When does the agreement expire?", "On what date will the contract's initial term expire?",
                     "How long is the term of the agreement?"):
        answer = ask_fast(repo.snapshot(), question)
        assert answer.found and "continue for a period of three (3) years" in answer.citations[0].text
    for question in ("When may a party terminate?", "What happens when the agreement expires?",
                     "How long is the term of the warranty?", "When does Apple's fiscal year end?"):
        assert not asks_for_term(question)
    assert asks_for_term("How long does the contract last?") and asks_for_term("When does the lease end?")
    snapshot = repo.snapshot()
    unit = clause_index(snapshot, snapshot.docs()[0]).units[0]
    assert not names_term(replace(unit, title="2.05 Economic Terms", category="clauses"))
    assert not names_term(replace(unit, title="2. Basic Term Lease Rate Factor", category="clauses"))
    assert names_term(replace(unit, title="2. TERM", category="clauses"))


def test_a_clause_named_by_an_equivalent_or_another_form_of_the_questions_word_is_found(repo):
    """"What is the consultant's compensation?" and "How much is the consultant paid?" are answered by
    "2.1 Remuneration" (its fee is "payable"): a clause named by an equivalent of the question's word
    counts as named by it, and "paid" is a form of "pay" the stemmer leaves apart."""
    from hti_git.query.thesaurus import word_forms

    assert {"pay", "payabl"} <= word_forms()["paid"] and "sell" in word_forms()["sold"]
    for question in ("What is the consultant's compensation?", "How much is the consultant paid?"):
        answer = ask_fast(repo.snapshot(), question)
        assert answer.found and answer.citations[0].text.lstrip().startswith("2.1 Remuneration")


def test_what_happens_on_termination_is_the_termination_clause(repo):
    """"happen" is a question's word, never a clause's: "What happens on termination?" was not found."""
    answer = ask_fast(repo.snapshot(), "What happens on termination?")
    assert answer.found and answer.citations[0].text.lstrip().startswith("4.1 Termination of Engagement")


def test_assigned_finds_the_assignment_clause(repo):
    answer = ask_fast(repo.snapshot(), "Can the consulting agreement be assigned?")
    assert answer.found
    assert answer.citations[0].text.lstrip("8 ").startswith("7.4 Assignment")
    assert "not be assignable" in answer.answer


def test_absent_liability_cap_is_not_found(repo):
    answer = ask_fast(repo.snapshot(), "Is there a liability cap?")
    assert not answer.found and answer.citations == []
    assert answer.answer == "not found"


def test_a_span_several_pages_hold_is_read_and_cited_once(repo):
    answer = ask_fast(repo.snapshot(), "Who are the parties?")  # both party pages hold the preamble
    reads = [s for s in answer.trace if s.action == "read"]
    assert 1 <= len(reads) <= READ
    spans = [(c.start, c.end) for c in answer.citations]
    assert len(spans) == len(set(spans)) and len(spans) <= MAX_CITATIONS


def test_score_and_coverage_are_weighed_together():
    assert _supported(FOUND_STRENGTH, FOUND_COVERAGE)
    assert _supported(2 * FOUND_STRENGTH, 0.0)  # one passage very like the question carries it alone
    assert _supported(0.0, 2 * FOUND_COVERAGE)  # as does a clause holding most of the question's words
    assert not _supported(0.9 * FOUND_STRENGTH, 0.9 * FOUND_COVERAGE)


def test_answers_are_deterministic(repo):
    q = "Can the consulting agreement be assigned?"
    first, second = ask_fast(repo.snapshot(), q), ask_fast(repo.snapshot(), q)
    assert first.to_dict() == second.to_dict()


def test_older_revision_answers_from_older_index(repo, tmp_path, contract_text):
    amended = tmp_path / "slingerbaginc-05-27-2020-ex-10-7-consulting-agreement.txt"
    amended.write_text(contract_text.read_text().replace("State of New York", "State of Delaware"))
    compile_path(repo, amended, Settings(), replace=True)  # another file of the same name
    q = "Which state's law governs this agreement?"
    assert "Delaware" in ask_fast(repo.snapshot("HEAD"), q).answer
    old = ask_fast(repo.snapshot("HEAD~1"), q)
    assert "New York" in old.answer and "Delaware" not in old.answer
    _citations_are_true(repo.snapshot("HEAD~1"), old)


def test_fallback_reads_source_when_navigation_misses(tmp_path):
    text = "\n\n".join(
        [f"Paragraph {i} talks about ordinary matters of business and nothing else." for i in range(30)]
        + ["The secret ingredient of the recipe is saffron harvested at dawn."]
    )
    doc = tmp_path / "notes.txt"
    doc.write_text(text)
    init_index(tmp_path / "idx")
    with IndexRepo(tmp_path / "idx") as r:
        compile_path(r, doc, Settings())
        answer = ask_fast(r.snapshot(), "What is the secret ingredient of the recipe?", max_pages=2)
        assert answer.found
        assert "saffron" in answer.answer
        _citations_are_true(r.snapshot(), answer)


RISOTTO = "# Saffron Risotto\n\nSimmer the rice with saffron and stock for twenty minutes.\n\n"


@contextmanager
def _one_document_index(tmp_path, text: str):
    """A new index repository holding one `fast`-compiled text document."""
    doc = tmp_path / "doc.txt"
    doc.write_text(text)
    init_index(tmp_path / "idx")
    with IndexRepo(tmp_path / "idx") as r:
        compile_path(r, doc, Settings())
        yield r


def _compile_text(repo, path, text: str) -> None:
    path.write_text(text)
    compile_path(repo, path, Settings())


def test_the_answer_cites_the_best_ranked_clause_first(tmp_path):
    """The clause named for the question comes first, though a longer clause holds more of the question's
    words scattered over its passages (that clause is still cited, after it)."""
    text = ("# 9 Termination for Convenience\n\nEither party may terminate this Agreement for convenience on "
            "ninety days notice.\n\n# 4 Distributor Obligations\n\nThe Distributor shall keep the Products in "
            "stock at its own convenience and cost.\n\nThe Distributor shall give the Supplier written notice of "
            "any change of its address.\n\nOn termination the Distributor shall return the Supplier's price lists "
            "and samples.\n")
    with _one_document_index(tmp_path, text) as r:
        answer = ask_fast(r.snapshot(), "Can the distributor terminate the agreement for convenience on written notice?")
    assert answer.found
    pages = [c.page.rsplit("/", 1)[-1] for c in answer.citations]
    assert pages[0] == "9-termination-for-convenience.md"
    assert "4-distributor-obligations.md" in pages[1:]
    assert answer.answer.startswith("# 9 Termination for Convenience")


def test_two_of_three_question_words_are_not_an_answer_but_still_send_a_model_to_the_source(tmp_path):
    """"Is the Leeds warehouse insured?" shares "Leeds" and "warehouse" with the delivery clause, but no
    clause is about insurance: `fast` says "not found". The model's source fallback still hears that a
    clause holds the question's words (it may read what `fast` would not answer with)."""
    from hti_git.query.offline import holds_clause_words

    text = ("# 1 Payment\n\nThe Customer shall pay each invoice of the Supplier within thirty days of its date.\n\n"
            "# 2 Delivery\n\nThe Supplier shall deliver the Products to the Customer's warehouse in Leeds.\n\n"
            "# 3 Warranty\n\nThe Supplier warrants that the Products conform to their specification for twelve "
            "months.\n")
    with _one_document_index(tmp_path, text) as r:
        snapshot = r.snapshot()
        assert not ask_fast(snapshot, "Is the Leeds warehouse insured?").found
        assert holds_clause_words(snapshot, "Is the Leeds warehouse insured?")
        answer = ask_fast(snapshot, "Is the Leeds warehouse owned by the Customer?")
        assert answer.found and "warehouse in Leeds" in answer.citations[0].text


def test_unknown_document_is_a_usage_error(repo):
    with pytest.raises(UsageError, match="no document "):
        ask_fast(repo.snapshot(), "anything", docs=["nope"])


def test_routing_picks_the_relevant_document(repo, tmp_path):
    _compile_text(repo, tmp_path / "recipe.txt", RISOTTO + "# Serving\n\nServe the risotto with parmesan.\n")
    answer = ask_fast(repo.snapshot(), "How long do I simmer the rice with saffron?")
    assert answer.found and answer.citations[0].doc == "recipe"
    assert any(s.action == "route" for s in answer.trace)


def test_one_shared_word_is_not_an_answer(tmp_path):
    with _one_document_index(tmp_path, "# Supply\n\nThe supplier ships apples every Monday morning from its "
                             "orchard in the valley, packed in wooden crates and carried by its own lorries to the "
                             "buyer's warehouse.\n\n# Payment\n\nPayment of each invoice is due within thirty days of "
                             "receipt, by bank transfer to the account the seller names, in euros and without any "
                             "deduction.\n") as r:
        miss = ask_fast(r.snapshot(), "Is an invoice issued for the apples?")
        assert not miss.found  # each passage holds only one of the two words the document uses
        hit = ask_fast(r.snapshot(), "When is payment of an invoice due?")
        assert hit.found and "thirty days" in hit.answer


def test_citations_from_a_pdf_name_their_pages(index_repo):
    from hti_git.sources import load_source
    from tests.conftest import FIXTURES

    pdf = FIXTURES / "alcostoresinc-12-14-2005-ex-10-26-agency-agreement.pdf"
    compile_path(index_repo, pdf, Settings())
    source = load_source(pdf)
    snap = index_repo.snapshot()
    answers = [ask_fast(snap, "When does the agency agreement expire?"),
               ask_fast(snap, "When does the agency agreement expire?", max_pages=1)]
    for answer in answers:
        assert answer.found and answer.citations
        for c in answer.citations:
            assert c.pages and c.pages == source.pages_for(c.start, c.end)


def test_doc_accepts_a_unique_prefix(repo, tmp_path):
    _compile_text(repo, tmp_path / "recipe.txt", RISOTTO)
    snap = repo.snapshot()
    answer = ask_fast(snap, "Which state's law governs this agreement?", docs=["slinger"])
    assert answer.found and {c.doc for c in answer.citations} == {"slingerbaginc-05-27-2020-ex-10-7-consulting-agreement"}
    recipe = tmp_path / "recipes-two.txt"
    recipe.write_text("# Soup\n\nBoil the leeks with potatoes for thirty minutes.\n")
    compile_path(repo, recipe, Settings())
    with pytest.raises(UsageError, match="ambiguous"):
        ask_fast(repo.snapshot(), "How long do I boil the leeks?", docs=["rec"])


def test_a_question_naming_a_document_goes_to_it(repo, tmp_path):
    _compile_text(repo, tmp_path / "recipe.txt", RISOTTO.rstrip() + " The law of the kitchen: the cook decides "
                  "which state the rice is served in.\n")
    answer = ask_fast(repo.snapshot(), "Which state's law governs the consulting agreement with Slinger Bag?")
    assert answer.found and {c.doc for c in answer.citations} == {"slingerbaginc-05-27-2020-ex-10-7-consulting-agreement"}
    assert any(s.action == "route" and "named" in s.note for s in answer.trace)


# Vocabulary: documents and questions are stemmed alike (Snowball), and a question's elaboration weighs less.

def test_search_terms_join_a_words_forms():
    from hti_git.lexical import search_terms

    assert search_terms("non-transferable") == ["non", "transfer"]  # a hyphenated compound is its parts
    assert search_terms("transfer transferred transferable") == ["transfer"] * 3
    assert search_terms("assigned assignment assignable") == ["assign"] * 3
    assert search_terms("capped cap") == ["cap", "cap"]
    assert search_terms("property properties") == ["properti", "properti"]
    assert search_terms("party's parties", frozenset()) == ["parti", "parti"]
    assert search_terms("the agreement of a party") == []  # stopwords dropped before stemming


def test_question_focus_weighs_the_elaboration_less():
    from hti_git.query.clause_search import ELABORATION, question_focus

    focus = question_focus("Can a party terminate without cause (solely by giving notice and waiting)?")
    assert focus["termin"] == focus["caus"] == 1.0
    assert focus["notic"] == focus["wait"] == ELABORATION
    focus = question_focus("Is liability uncapped? This includes uncapped damages such as IP infringement.")
    assert focus["liabil"] == focus["uncap"] == 1.0  # a word of the core keeps its weight everywhere
    assert focus["infring"] == focus["damag"] == ELABORATION
    assert set(question_focus("Who are the parties?").values()) == {1.0}


def test_the_period_a_question_asks_about_weighs_as_elaboration():
    """"in fiscal 2024" says when, not where: a filing's "Fiscal Period" section is not the answer to every
    question about fiscal 2024. Without a year, "fiscal year" is what the question is about."""
    from hti_git.query.clause_search import ELABORATION, question_focus, question_stems

    focus = question_focus("How much cash did operations generate in fiscal 2024?")
    assert focus["fiscal"] == ELABORATION and focus["cash"] == focus["oper"] == 1.0
    focus = question_focus("What were total sales for the 2024 fiscal year, as of December 31, 2024?")
    assert focus["fiscal"] == focus["decemb"] == ELABORATION and focus["sale"] == 1.0
    assert focus["year"] == ELABORATION
    assert question_focus("When does the company's fiscal year end?")["fiscal"] == 1.0
    assert question_focus("What was revenue in the third quarter of 2023?")["quarter"] == ELABORATION
    focus = question_focus("What diluted EPS did it report for its fiscal third quarter of 2024?")
    assert focus["fiscal"] == focus["third"] == ELABORATION and focus["dilut"] == 1.0
    # "how much" and "how many" ask for a quantity; they name nothing to look for
    assert question_stems("How much profit, and how many employees, roughly?") == ["profit", "employe"]



def test_a_span_of_months_and_a_month_with_its_year_weigh_as_elaboration():
    """A 10-Q's questions name their period as a span ("the first nine months of fiscal 2024", "the three
    months ended June 29, 2024") or a month ("the June 2024 quarter"): the period says which column,
    not which passage."""
    from hti_git.query.clause_search import ELABORATION, question_focus

    focus = question_focus("What were iPad sales for the first nine months of fiscal 2024?")
    assert focus["first"] == focus["nine"] == focus["month"] == ELABORATION and focus["ipad"] == focus["sale"] == 1.0
    focus = question_focus("What gross margin did Services earn in the three months ended June 29, 2024?")
    assert focus["month"] == focus["end"] == focus["june"] == ELABORATION and focus["margin"] == 1.0
    focus = question_focus("How much did Greater China bring in during the June 2024 quarter?")
    assert focus["june"] == focus["quarter"] == ELABORATION and focus["china"] == 1.0
    assert question_focus("What was revenue over the last twelve months?")["month"] == ELABORATION
    # a contract's period is what the question is about
    assert question_focus("Which payments are due within six months of termination?")["month"] == 1.0
    assert question_focus("Can it be terminated on three months' notice?")["month"] == 1.0


def test_an_abbreviation_meets_its_words_which_weigh_as_one():
    """"diluted EPS" is answered by the "Diluted" row under "Earnings per share"; "capex" by "Payments for
    acquisition of property, plant and equipment". The spelled-out words share the abbreviation's weight,
    so "IP" in a long question's examples adds no more than one word does."""
    from hti_git.query.clause_search import ELABORATION, question_focus, question_stems

    assert question_stems("What was diluted EPS?") == ["dilut", "ep", "earn", "share"]
    assert {"capit", "expenditur", "properti", "plant", "equip"} <= set(question_stems("What was capex?"))
    assert "research" in question_stems("How much was spent on R&D?")
    assert question_stems("Is an episode required?") == ["episod", "requir"]  # a word, not the abbreviation
    focus = question_focus("Is liability uncapped? This includes a breach such as IP infringement.")
    assert focus["ip"] == ELABORATION and focus["intellectu"] == focus["properti"] == ELABORATION / 2
    focus = question_focus("Who owns the IP and the intellectual property of the Company?")
    assert focus["intellectu"] == 1.0  # the question's own words keep their weight

def test_routing_stems_are_the_catalogues_own():
    from hti_git.lexical import terms
    from hti_git.query.clause_search import routing_stems

    assert routing_stems("Which leases terminate?") == terms("leases terminate")  # as the compile stems them


def test_capped_meets_cap(tmp_path):
    with _one_document_index(tmp_path, "# Fees\n\nThe buyer pays the supplier's fees monthly in arrears, within "
                             "thirty days of each invoice, by bank transfer to the account the supplier names.\n\n"
                             "# Limits\n\nThe total of all fees payable in any one year is subject to a cap of ten "
                             "thousand euros, whatever the volume of goods delivered.\n") as r:
        answer = ask_fast(r.snapshot(), "Are the fees capped?")  # 'capped' is the document's 'cap'
        assert answer.found
        assert "subject to a cap" in answer.citations[0].text


def test_a_short_value_is_read_only_with_the_value_right_after_it_in_its_field():
    """A label joins the next value of its own field nearby, never a value elsewhere in the
    document (the passage would span everything between them)."""
    from hti_git.index.page import Page
    from hti_git.query.clause_search import _units

    page = Page("d/clauses/x.md", {"kind": "subject", "title": "X", "fields": [
        {"name": "law", "values": [{"text": "The laws of New York govern.", "spans": [[100, 128]]}]},
        {"name": "term", "values": [{"text": "Term.", "spans": [[9000, 9005]]},
                                    {"text": "The term is five years from signing.", "spans": [[9010, 9046]]}]},
    ]})
    spans = [(u.start, u.end) for u in _units(page, "clauses")]
    assert spans == [(100, 128), (9000, 9046)]


def test_a_question_word_meets_its_equivalent(tmp_path):
    """'buy' is the document's 'purchase': of two clauses sharing the question's other words, the one
    holding the equivalent ranks first."""
    with _one_document_index(tmp_path, "# Reports\n\nThe Distributor shall send the Supplier a report of the "
                             "Products held in stock at the end of each quarter, by email, within ten days.\n\n"
                             "# Orders\n\nThe Distributor shall purchase the Products it resells only from the "
                             "Supplier, at the prices of the Supplier's list in force on the date of the order.\n") as r:
        answer = ask_fast(r.snapshot(), "Must the distributor buy the products from the supplier?")
        assert answer.found
        assert "shall purchase the Products" in answer.citations[0].text


def test_an_equivalent_ranks_but_does_not_count_as_the_questions_word():
    from hti_git.query.clause_search import Group, coverage

    cap = Group({"cap", "limit"}, {"cap"})
    assert coverage([cap], [1.0], {"limit"}) == 0.0  # "Is there a cap?" is not answered by any limit alone
    assert coverage([cap], [1.0], {"cap"}) == 1.0


def test_equivalent_question_words_are_one_group(tmp_path):
    """'termination or expiration' is one meaning: weighed once, not twice."""
    with _one_document_index(tmp_path, "# Term\n\nThis agreement expires on 1 June 2030 unless the parties "
                             "agree to renew it in writing before that date.\n\n# Termination\n\nEither party may "
                             "terminate this agreement on ninety days' written notice to the other.\n") as r:
        from hti_git.query.clause_search import clause_index, question_stems

        index = clause_index(r.snapshot(), "doc")
        groups = index.expand(question_stems("What happens on termination or expiration?"))
        assert [sorted(g.own) for g in groups] == [["termin"]]  # "happen" is a question's word, not a clause's
        assert {"termin", "expir"} <= groups[0]



def test_a_heading_no_page_holds_is_read_with_the_clause_under_it():
    from hti_git.query.clause_search import _with_next

    text = "8 Intellectual Property Rights; Ownership\n8.1 Ownership. Achaogen shall own all inventions made under it.\n"
    heading_end = text.index("\n")
    clause = (heading_end + 1, len(text) - 1)
    assert _with_next(0, heading_end, [clause]) == clause[1]  # the answer shows the clause, not the heading alone
    assert _with_next(0, 200, [(201, 400)]) == 200  # a passage of its own length stays as it is
    assert _with_next(0, heading_end, [(heading_end + 500, heading_end + 600)]) == heading_end  # nothing close after it


def test_a_how_many_question_is_answered_only_by_a_passage_stating_a_number(tmp_path, index_repo):
    """"How many retail stores?" of a filing that speaks of its stores but never counts them is not
    found; where a passage counts them, that passage is the one cited, not the one only naming them."""
    from hti_git.compile.pipeline import compile_path
    from hti_git.config import Settings

    risks = ("1. Risks\n\nThe Company's retail stores are subject to numerous risks and uncertainties, "
             "including the retail stores' high fixed costs and leases.\n\n")
    count = "2. Properties\n\nAt year end the Company operated 534 retail stores in 26 countries.\n"
    plain, counted = tmp_path / "plain-report.txt", tmp_path / "counted-report.txt"
    plain.write_text(risks + "2. Other\n\nThe Company leases its offices.\n")
    counted.write_text(risks + count)
    for path in (plain, counted):
        compile_path(index_repo, path, Settings())
    snap = index_repo.snapshot()
    question = "How many retail stores did the Company operate?"
    answer = ask_fast(snap, question, docs=["plain-report"])
    assert not answer.found and answer.answer == "not found: no passage read states a number"
    assert ask_fast(snap, "Which risks do the retail stores face?", docs=["plain-report"]).found
    answer = ask_fast(snap, question, docs=["counted-report"])
    assert answer.found and "534 retail stores" in answer.answer and "numerous risks" not in answer.answer


def test_a_cited_passage_that_opens_a_list_is_shown_with_the_lists_items(tmp_path, index_repo):
    """Passages split a list item by item: the cited one that introduces the list goes on through its
    short items, the whole answer, and stops at the paragraph after them."""
    from hti_git.compile.pipeline import compile_path
    from hti_git.config import Settings
    from hti_git.query.answer_text import with_list

    text = ("Product Introductions\n\nDuring the quarter, the Company announced the following product and "
            "operating system updates:\n\n•iPad Air;\n\n•iPad Pro;\n\n•iOS 18, macOS Sequoia and watchOS 11.\n\n"
            "The Company also announced a personal intelligence system that uses generative models, which will "
            "be available on certain devices later in the year, and expects its net sales to follow.\n")
    path = tmp_path / "quarter.txt"
    path.write_text(text)
    compile_path(index_repo, path, Settings())
    answer = ask_fast(index_repo.snapshot(), "Which operating system updates did the Company announce?")
    assert answer.found
    assert "•iPad Air; •iPad Pro; •iOS 18, macOS Sequoia and watchOS 11." in answer.answer
    listed = next(c for c in answer.citations if "updates:" in c.text)
    assert listed.text.rstrip().endswith("watchOS 11.")  # the citation spans the items it shows
    # a passage that neither ends with ":" nor in an item, or figures after it, do not run on
    figures = "Net income 93,736\n-2,266 adjustments\n"
    assert with_list(figures, 0, len("Net income 93,736"), 2000) == len("Net income 93,736")
    intro = "Tasks:\n- first\n- second\nA closing paragraph.\n"
    assert intro[:with_list(intro, 0, len("Tasks:"), 2000)] == "Tasks:\n- first\n- second"


def test_a_tables_column_headings_are_the_period_lines_above_its_rows():
    """A Markdown table's heading rows, a PDF's heading broken a word a line, label rows and rows
    between: the headings are found; prose ends the search, and a heading naming no period is none."""
    from hti_git.text import table_columns

    markdown = ("The following table shows net sales by category (dollars in millions):\n\n"
                "|  | Three Months Ended |  | Nine Months Ended |\n|:--|:--|:--|:--|\n"
                "|  | June 29,  2024 | July 1,  2023 | June 29,  2024 | July 1,  2023 |\n"
                "| Net sales by category: |  |  |  |  |\n| iPhone | $ 39,296 | $ 39,669 | $ 154,961 | $ 156,778 |\n"
                "| iPad | 7,162 | 5,791 | 19,744 | 21,857 |\n")
    assert table_columns(markdown, markdown.index("| iPad")) == (
        "Three Months Ended | Nine Months Ended / June 29, 2024 | July 1, 2023 | June 29, 2024 | July 1, 2023")
    pdf = ("CONDENSED CONSOLIDATED STATEMENTS OF CASH FLOWS (Unaudited)\n(In millions)\nNine Months Ended\nJune 29,\n"
           "2024\nJuly 1,\n2023\nOperating activities:\nNet income 79,000 74,039\n"
           "Adjustments to reconcile net income to cash generated by operating activities:\n"
           "Depreciation and amortization 8,534 8,866\n")
    assert table_columns(pdf, pdf.index("Depreciation")) == "Nine Months Ended June 29, 2024 July 1, 2023"
    broken = ("| Net sales: |  |   Years ended\n September 28,\n   2024 |  | September 30,\n   2023 |\n|:--|:--|:--|\n"
              "| Products | $ | 294,866 | $ | 298,085 |\n")  # a converter's heading cells broken over lines, the
    # first after a row's label
    assert table_columns(broken, broken.index("| Products")) == "Years ended September 28, 2024 September 30, 2023"
    years = "Net sales were as follows.\n2024 Change 2023\nServices 96,169 13 % 85,200\n"
    assert table_columns(years, years.index("Services")) == "2024 Change 2023"
    prose = ("June 29, 2024\nThe Company's sales grew in every segment during the quarter, as shown below.\n"
             "iPad 7,162 5,791\n")
    assert table_columns(prose, prose.index("iPad")) == ""  # a date above the prose is not the table's
    assert table_columns("Change\n%\nFees 1,200 1,100\n", 15) == ""  # no period: no headings
    periods = "Periods\nShares\nMarch 31, 2024\nto May 4, 2024:\nPurchases\n45,690 $ 169.74\nJune 2, 2024 to\n" \
              "June 29, 2024:\nPurchases\n41,354 $ 205.54\n"
    assert table_columns(periods, periods.index("41,354")) == ""  # a row's label a PDF broke over lines


def test_a_cited_table_row_is_shown_with_its_tables_column_headings(tmp_path, index_repo):
    """"What were the iPad's net sales?": the row "iPad | 7,162 | 5,791 | 19,744 | 21,857", a long table's
    passage of its own, says which figure is the nine months' only with the table's headings, shown
    beside its units; a cited passage that shows the headings itself gets no note repeating them."""
    from hti_git.compile.pipeline import compile_path
    from hti_git.config import Settings
    from hti_git.text import table_note

    rows = "".join(f"| Product line {n} | {n},100 | {n},200 | {n},300 | {n},400 |\n" for n in range(1, 40))
    text = ("1. Results\n\nThe Company's results by product line were as follows (in millions):\n\n"
            "|  | Three Months Ended |  | Nine Months Ended |  |\n|:--|:--|:--|:--|:--|\n"
            "|  | June 29, 2024 | July 1, 2023 | June 29, 2024 | July 1, 2023 |\n"
            f"{rows}| iPad | 7,162 | 5,791 | 19,744 | 21,857 |\n| Total net sales | 85,777 | 81,797 | 296,105 | 298,085 |\n"
            "\n2. Risks\n\nThe Company faces competition in every market it serves.\n")
    path = tmp_path / "quarterly-report.md"
    path.write_text(text)
    compile_path(index_repo, path, Settings())
    answer = ask_fast(index_repo.snapshot(), "What were the iPad's net sales?")
    assert answer.found and len(answer.citations) == 1 and "Nine Months Ended" not in answer.citations[0].text
    assert answer.answer.endswith("\niPad | 7,162 | 5,791 | 19,744 | 21,857\nTotal net sales | 85,777 | 81,797 | "
                                  "296,105 | 298,085\n(table: in millions; columns: Three Months Ended | Nine Months "
                                  "Ended / June 29, 2024 | July 1, 2023 | June 29, 2024 | July 1, 2023)")
    row = text.index("| iPad")
    assert table_note(text, text.index("|  | Three"), row) == "in millions"  # it shows its headings itself
    assert table_note(text, 0, row) == ""  # ... and its caption
    assert table_note(text, 0, row, "iPhone | 39,296") == "in millions; columns: Three Months Ended | Nine Months " \
        "Ended / June 29, 2024 | July 1, 2023 | June 29, 2024 | July 1, 2023"  # only what `shown` shows counts
    assert table_note(text, row, len(text), "(table: in millions)") == "columns: Three Months Ended | Nine Months " \
        "Ended / June 29, 2024 | July 1, 2023 | June 29, 2024 | July 1, 2023"  # the units shown already
    assert table_note(text, text.index("2. Risks"), len(text)) == ""  # prose: no note


def test_overlapping_cited_passages_are_shown_and_cited_once():
    """Two pages may hold overlapping spans of a statement (a name's page and the statement's): the
    answer joins them into one citation, in the first one's place, instead of showing rows twice."""
    from collections import Counter

    from hti_git.query.clause_search import Unit
    from hti_git.query.offline import _joined

    def unit(page, start, end):
        return Unit(page, page, "sections", start, end, None, False, Counter(), 1, frozenset())

    text = "x" * 1000
    units = [unit("a", 100, 300), unit("b", 500, 600), unit("c", 250, 400), unit("d", 390, 450)]
    assert [(u.page, s, e) for u, s, e in _joined(units, text)] == [("a", 100, 450), ("b", 500, 600)]



def test_a_clause_naming_a_party_by_its_defined_name_holds_the_word_party(repo):
    """A contract's clauses name its parties as its preamble defines them ("the Consultant", "the
    Company"), rarely as "party". "Can a party terminate the agreement without cause?" asks for three
    words; 4.1 holds "terminate" and "cause" and names the Consultant: it answers (it was "not found"),
    as does 2.1 to "Does one party have to pay a fee to the other party?". A clause naming no party
    does not hold "party"."""
    snapshot = repo.snapshot()
    index = clause_index(snapshot, "slingerbaginc-05-27-2020-ex-10-7-consulting-agreement")
    assert index.roles == {frozenset({"consult"}), frozenset({"compani"})}
    party = index.expand(["parti"])[0]
    assert index.holds(party, {"consult", "termin"}) and not index.holds(party, {"govern", "law"})
    answer = ask_fast(snapshot, "Can a party terminate the agreement without cause?")
    assert answer.found and answer.citations[0].text.lstrip().startswith("4.1 Termination of Engagement")
    answer = ask_fast(snapshot, "Does one party have to pay a fee to the other party?")
    assert answer.found and answer.citations[0].text.lstrip().startswith("2.1 Remuneration")


def test_a_noun_and_its_verb_the_stemmer_leaves_apart_are_one_word(repo):
    """The Snowball stemmer leaves "merger" apart from "merged" ("merger" / "merg"), "liability" from
    "liable", "delivery" from "deliver": `thesaurus.WORD_FORMS` joins them. "What happens if the Company
    is merged?" finds 2.3 Merger or Consolidation (it was not cited)."""
    from hti_git.lexical import search_terms
    from hti_git.query.thesaurus import word_forms

    forms = word_forms()
    for a, b in (("merged", "merger"), ("liable", "liability"), ("deliver", "delivery")):
        (sa,), (sb,) = search_terms(a), search_terms(b)
        assert sa != sb and sb in forms[sa]
    answer = ask_fast(repo.snapshot(), "What happens if the Company is merged?")
    assert answer.found and answer.citations[0].text.lstrip().startswith("2.3 Merger or Consolidation")


def test_a_documents_clause_index_is_kept_and_loaded_by_later_asks(repo, monkeypatch):
    """The clause search's index of a document is built once per content and code and kept under
    .git/hti/derived: a later ask (another process, another snapshot) loads it, and a damaged file is
    rebuilt, never trusted."""
    import hti_git.query.clause_search as cs

    doc = "slingerbaginc-05-27-2020-ex-10-7-consulting-agreement"
    first = ask_fast(repo.snapshot(), "Can the consulting agreement be assigned?")
    [kept] = (repo.git_dir / "hti" / "derived").glob("*-clause-index-*.pickle")
    built, build = [], cs._build
    monkeypatch.setattr(cs, "_build", lambda snapshot, d: built.append(d) or build(snapshot, d))
    again = ask_fast(repo.snapshot(), "Can the consulting agreement be assigned?")
    assert again.to_dict() == first.to_dict() and built == []  # loaded, not built
    kept.write_bytes(b"not a pickle")
    third = ask_fast(repo.snapshot(), "Can the consulting agreement be assigned?")
    assert third.to_dict() == first.to_dict() and built == [doc]  # rebuilt, and kept anew
    assert kept.read_bytes() != b"not a pickle"


def test_writers_that_keep_the_same_clause_index_at_once_leave_one_whole_file(repo):
    import threading

    import hti_git.query.clause_search as cs

    doc = "slingerbaginc-05-27-2020-ex-10-7-consulting-agreement"
    indices = []

    def ask_alone() -> None:  # as another `hti-git ask` would: its own repository handle
        with IndexRepo(repo.root) as own:
            indices.append(cs._stored(own.snapshot(), doc))

    threads = [threading.Thread(target=ask_alone) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    files = list((repo.git_dir / "hti" / "derived").iterdir())
    assert len(files) == 1 and files[0].suffix == ".pickle"  # no writer's temporary file is left
    assert cs._stored(repo.snapshot(), doc).units == indices[0].units
