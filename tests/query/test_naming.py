"""How a question names a document: its parties' legal names and its run-together file name."""

from __future__ import annotations

from hti_git.compile.pipeline import compile_path
from hti_git.config import Settings
from hti_git.lexical import search_terms
from hti_git.query.clause_search import question_core
from hti_git.query.naming import capitalized, legal_names, name_stems, slug_prefixes, unmentioned_names
from hti_git.query.offline import ask_fast

PREAMBLE = ('THIS AGREEMENT is made between General Electric Capital Corporation, a Delaware corporation '
            '(together with its successors and assigns, "Lessor"), and Duckwall-Alco Stores, Inc., a Kansas '
            'corporation (the "Company").')


def test_the_name_before_a_parties_definition_is_its_legal_name():
    assert legal_names(PREAMBLE, "Company") == ["Duckwall-Alco Stores, Inc."]  # the descriptor is skipped
    assert legal_names(PREAMBLE, "Lessor") == ["General Electric Capital Corporation"]
    two = 'by and between WatchGuard Technologies, Inc., a Delaware corporation ("WGT"), and European Micro ("Distributor").'
    assert legal_names(two, "Distributor") == ["European Micro"]  # not the earlier party's descriptor
    assert legal_names('between Clear Capital (the "Company") and RadialSpark, LLC (the "Contractor")',
                       "Contractor") == ["RadialSpark, LLC"]
    assert legal_names("Aitan Zacharin, an individual residing in Bet Shemesh, Israel (the “Consultant”)",
                       "Consultant") == ["Aitan Zacharin"]
    assert legal_names(PREAMBLE, "Supplier") == []


def test_a_legal_names_distinctive_words_leave_out_the_entity_kind_and_common_words():
    text = PREAMBLE + " The general terms of the lease apply."
    assert name_stems(["Duckwall-Alco Stores, Inc."], text) == {"duckwal", "alco", "store"}
    assert name_stems(["General Electric Capital Corporation"], text) == {"electr", "capit"}  # "general" is common here


def test_only_capitalised_question_words_may_be_names():
    assert capitalized("Does Clear Capital own the work?") >= {"clear", "capit"}
    assert "capit" not in capitalized("Is there a working capital requirement?")


def test_a_capitalised_word_may_begin_a_run_together_file_name():
    slug = "alcostoresinc-12-14-2005-ex-10-26-agency-agreement"
    assert slug_prefixes("How much does Alco pay the agent?", slug) == {"alco"}
    assert slug_prefixes("How much does alco pay?", slug) == set()  # not written as a name
    assert slug_prefixes("Does Alcostoresinc pay?", slug) == set()  # the whole word is a file-name word already
    assert slug_prefixes("Does Al pay?", slug) == set()  # too short to name anything
    merit = "meritlifeinsuranceco-06-19-2020-ex-10-xiv-master-services-ag"
    assert slug_prefixes("Can Merit Life terminate?", merit) == {"merit", "life"}  # the words that continue it
    assert slug_prefixes("Can Life terminate?", merit) == set()  # a run is named from its start


def test_a_name_the_question_asks_about_is_unmentioned_only_when_the_document_writes_none_of_it():
    filing = set(search_terms("Timothy D. Cook, Chief Executive Officer. The Company's suppliers in Taiwan and "
                              "the U.S. Department of Justice (the DOJ)."))

    def unmentioned(question: str, naming: frozenset[str] = frozenset()) -> list[str]:
        return unmentioned_names(question_core(question), filing, naming)

    assert unmentioned("What law governs Apple's chip supply contract with TSMC?") == ["Apple", "TSMC"]
    assert unmentioned("What did Tim Cook earn?") == []  # "Cook" is written ("Timothy D. Cook")
    assert unmentioned("Did the CEO adopt a trading plan?") == []  # spelled out: Chief Executive Officer
    assert unmentioned("Did the CFO adopt a trading plan?") == ["CFO"]  # Chief Financial Officer is not
    assert unmentioned("Which suppliers are in Taiwan or Vietnam?") == ["Vietnam"]
    assert unmentioned("Does Apple pay?", naming=frozenset({"appl"})) == []  # the words naming the document
    assert unmentioned("Did Samsung or Google sue alongside the DOJ?") == ["Samsung", "Google"]
    # words written with a capital only as a sentence's first word, or in the question's elaboration
    assert unmentioned("Which law governs? Suppliers in Taiwan (see Exhibit Zeta) are listed.") == []
    assert unmentioned("Is there a cap on liability, including IP infringement?") == []


def test_a_question_naming_a_party_goes_to_its_contract(compiled_repo):
    from tests.conftest import FIXTURES

    compile_path(compiled_repo, FIXTURES / "alcostoresinc-12-14-2005-ex-10-26-agency-agreement.pdf", Settings())
    snap = compiled_repo.snapshot()
    for question in ("When does the agreement with Duckwall terminate?", "When does Alco's agreement terminate?"):
        answer = ask_fast(snap, question)
        assert answer.found and {c.doc for c in answer.citations} == {"alcostoresinc-12-14-2005-ex-10-26-agency-agreement"}
        notes = {s.page: s.note for s in answer.trace if s.action == "route"}
        assert notes == {"alcostoresinc-12-14-2005-ex-10-26-agency-agreement": "named in the question",
                         "slingerbaginc-05-27-2020-ex-10-7-consulting-agreement": "skipped"}
    answer = ask_fast(snap, "Can the consulting agreement with Zacharin be terminated?")
    assert {c.doc for c in answer.citations} == {"slingerbaginc-05-27-2020-ex-10-7-consulting-agreement"}


def test_the_words_naming_a_document_are_not_sought_in_its_clauses(tmp_path, index_repo):
    """Words that say which document ("Merit Life", only in its file name) are not the clause's words: they
    neither route the question elsewhere nor count as words the document lacks."""
    text = ('MASTER SERVICES AGREEMENT between Clear Capital (the "Company") and RadialSpark, LLC (the '
            '"Contractor").\n\nWHEREAS, the parties hereby agree as follows.\n\n1. Services\n\nContractor shall '
            'perform the consulting services that the Company '
            'orders in writing from time to time.\n\n2. Termination\n\nEither party may terminate this Agreement '
            'for any or no reason upon fifteen days notice to the other party.\n\n3. Fees\n\nCompany shall pay '
            'the fees within thirty days of each invoice.\n')
    merit = tmp_path / "meritlifeinsuranceco-06-19-2020-ex-10-xiv-master-services-ag.txt"
    merit.write_text(text)
    other = tmp_path / "general-capital-lease.txt"
    other.write_text('LEASE between General Electric Capital Corporation (the "Lessor") and Shop Co (the "Lessee").'
                     '\n\n1. Rent\n\nLessee shall pay rent monthly.\n\n2. Termination\n\nLessor may terminate '
                     'this lease upon any default by Lessee.\n')
    for path in (merit, other):
        compile_path(index_repo, path, Settings())
    snap = index_repo.snapshot()
    answer = ask_fast(snap, "Can Merit Life terminate the agreement?")
    assert answer.found and "fifteen days" in answer.answer and {c.doc for c in answer.citations} == {merit.stem}
    answer = ask_fast(snap, "When does Clear Capital pay the fees?")  # both documents have a Capital; one a Clear Capital
    assert answer.found and "thirty days" in answer.answer and {c.doc for c in answer.citations} == {merit.stem}
