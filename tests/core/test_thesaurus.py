"""The thesaurus: equivalent words of contract and financial English, stemmed as the search stems."""

from __future__ import annotations

from hti_git.lexical import search_terms
from hti_git.query.thesaurus import SYNONYM_SETS, synonyms, word_forms


def test_equivalents_are_stemmed_as_the_search_stems():
    table = synonyms()
    assert search_terms("purchase")[0] in table[search_terms("buy")[0]]
    assert search_terms("buying")[0] == search_terms("buy")[0]  # every form of the word meets them


def test_equivalence_is_symmetric():
    table = synonyms()
    for word, others in table.items():
        for other in others:
            if not other.startswith(("un", "non")):
                assert word in table[other] or word.startswith(("un", "non")), (word, other)


def test_a_negated_word_meets_what_it_negates():
    table = synonyms()
    uncapped = table[search_terms("uncapped")[0]]
    assert {search_terms("cap")[0], search_terms("limit")[0]} <= uncapped


def test_each_set_holds_distinct_words():
    for line in SYNONYM_SETS:
        stems = search_terms(line)
        assert len(stems) == len(set(stems)) >= 2, line


def test_a_filings_words_are_equivalents_but_income_is_not_revenue():
    """A 10-K writes 'net sales' and 'headcount' where readers ask about revenue and employees; its
    'net income' is a profit, never a revenue."""
    table = synonyms()
    stem = {w: search_terms(w)[0] for w in ("revenue", "sales", "income", "profit", "employees", "headcount")}
    assert stem["sales"] in table[stem["revenue"]]
    assert stem["headcount"] in table[stem["employees"]]
    assert stem["income"] not in table[stem["revenue"]] and stem["income"] in table[stem["profit"]]


def test_a_words_forms_the_stemmer_leaves_apart_are_one_word():
    forms = word_forms()
    assert search_terms("notification")[0] in forms[search_terms("notify")[0]]
    assert search_terms("indemnity")[0] in forms[search_terms("indemnify")[0]]
    assert search_terms("ownership")[0] in forms[search_terms("owns")[0]]  # "Who owns the work product?"


def test_competent_is_not_compete():
    """The Snowball stemmer makes 'competent' (a competent court) 'compete' (a non-compete)."""
    assert search_terms("competent")[0] != search_terms("compete")[0]
    assert search_terms("competes")[0] == search_terms("compete")[0]


def test_employ_meets_employees():
    """"How many people does it employ?" is answered by "164,000 full-time equivalent employees"."""
    assert search_terms("employees")[0] in word_forms()[search_terms("employ")[0]]


def test_british_and_american_spellings_are_one_word():
    """"the May 2023 programme" is the filing's "May 2023 program"; "authorisation" its "authorized"."""
    forms = word_forms()
    assert search_terms("program")[0] in forms[search_terms("programme")[0]]
    assert search_terms("authorized")[0] in forms[search_terms("authorisation")[0]] | {search_terms("authorisation")[0]}
    assert search_terms("labor")[0] in forms[search_terms("labour")[0]]
