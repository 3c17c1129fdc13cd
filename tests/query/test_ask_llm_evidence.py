"""What the answer step sees: every page navigation read (summaries included, citable), values
whole, one item per sentence; and what `ask --json` reports per stage."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner
from query_support import ANSWER_NOW, DOC, NOT_FOUND, answer_citing, citations_hold, client_for, open_

from hti_git.cli import main
from hti_git.index.page import Page
from hti_git.query.answer_llm import ask_llm
from hti_git.query.evidence import EvidenceBook, check_citation
from hti_git.query.model_nav import PAGE_CHARS, _page_text

Q = "When was the consulting agreement made?"


def test_navigation_answers_from_the_root_summary_and_may_cite_it(repo):
    """The root's summary holds the answer: navigation sees that summary with an id, answers in
    the same reply, and a quote of the document's own words from it resolves to lines."""
    cite_root = answer_citing("30th day of April", "made this 30th day of April",
                              "THIS AGREEMENT made this 30th day of April")
    client, provider = client_for(cite_root)
    snap = repo.snapshot()
    answer = ask_llm(snap, Q, client, use_fallback=False, max_pages=1)  # the root alone, no search pages
    assert answer.found and not answer.fallback
    assert answer.citations[0].page == f"{DOC}/index.md" and answer.citations[0].lines[0] >= 1
    citations_hold(snap, answer)
    assert "summary:" in provider.calls[-1]["messages"][-1]["content"]
    assert len(provider.calls) == 1  # no separate answer call


def test_a_summary_quote_that_is_not_the_documents_words_supports_nothing(repo):
    book = EvidenceBook()
    [item] = book.add_page(Page(f"{DOC}/index.md", {"kind": "root", "title": "T", "summary": "A consulting deal."}))
    source = repo.snapshot().read_text(f"{DOC}/source.txt")
    from hti_git.index.linemap import LineMap

    citation, why = check_citation(item, "The logo is painted bright purple on every invoice", source, LineMap(source))
    assert citation is None and "no sentence of the document states" in why


def test_a_summary_paraphrase_resolves_to_the_sentence_that_states_it(repo):
    book = EvidenceBook()
    [item] = book.add_page(Page(f"{DOC}/index.md", {"kind": "root", "title": "T", "summary": "S"}))
    source = repo.snapshot().read_text(f"{DOC}/source.txt")
    from hti_git.index.linemap import LineMap

    citation, _ = check_citation(item, "Slinger Bag Inc., a Nevada company, engages Aitan Zacharin as consultant",
                                 source, LineMap(source))
    assert citation is not None and "Slinger Bag Inc., a Nevada company" in citation.text
    assert "Aitan" in citation.text and len(citation.text) < 600


def test_a_subject_summary_carries_the_spans_of_its_values():
    page = Page("d/c/s.md", {"kind": "subject", "title": "Term", "summary": "Three years from the Effective Date.",
                             "fields": [{"name": "term", "values": [{"value": "3 years", "text": "The term is three years.",
                                                                      "spans": [[10, 34]]}]},
                                        {"name": "start", "values": [{"text": "The term is three years.",
                                                                       "spans": [[10, 34]]}]}]})
    items = EvidenceBook().add_page(page)
    assert [i.label for i in items] == ["summary", "term / start"]  # the same sentence once
    assert items[0].spans == [(10, 34)] and not items[0].anywhere
    assert items[1].text == "3 years | The term is three years."


def test_one_sentence_backing_several_fields_is_one_item():
    value = {"text": "Either party may terminate on 30 days' notice.", "spans": [[0, 46]]}
    page = Page("d/c/s.md", {"kind": "subject", "title": "T",
                             "fields": [{"name": "trigger", "values": [value]}, {"name": "notice", "values": [value]}]})
    [item] = EvidenceBook().add_page(page)
    assert item.label == "trigger / notice"


def test_navigation_shows_values_whole_and_leaves_out_whole_values_past_the_page_limit():
    sentence = "The Consultant shall deliver the monthly report {} within ten days of the month end. " * 3
    values = [{"value": f"report {i}", "text": sentence.replace("{}", str(i)).strip(), "spans": [[0, 10]]} for i in range(40)]
    page = Page("d/c/s.md", {"kind": "subject", "title": "Reports", "summary": "Monthly reports.",
                             "fields": [{"name": "duty", "values": values}]})
    text, left = _page_text(page, EvidenceBook().add_page(page))
    assert len(text) <= PAGE_CHARS + 200
    shown = [line for line in text.splitlines() if re.match(r"\[E\d+\] duty: ", line)]
    assert shown and all(line.endswith("month end.") for line in shown)  # never cut mid-sentence
    assert left == 40 - len(shown) and f"({left} more value(s) on this page" in text


def test_a_sentence_backing_several_readings_is_shown_once_per_prompt():
    sentence = "Either party may terminate this Agreement on thirty (30) days' written notice to the other party."
    values = [{"value": reading, "text": sentence, "spans": [[0, 98]]} for reading in ("either party", "30 days")]
    page = Page("d/c/s.md", {"kind": "subject", "title": "Termination", "summary": "Termination on notice.",
                             "fields": [{"name": "party", "values": values[:1]}, {"name": "notice", "values": values[1:]}]})
    items = EvidenceBook().add_page(page)
    text, _ = _page_text(page, items)
    assert text.count(sentence) == 1  # both readings stay, each with its own id, citable
    assert f"[{items[2].id}] notice: 30 days | (the sentence of {items[1].id})" in text


def test_a_sentence_on_two_pages_of_one_prompt_is_shown_once():
    """Parties' pages often anchor their addresses in the same preamble sentence: one prompt shows it once."""
    sentence = "This agreement is entered into by At Home Corporation, Redwood City, and e-centives, Inc., Bethesda."
    pages = [Page(f"d/p/{name}.md", {"kind": "subject", "title": name, "fields": [
        {"name": "address", "values": [{"value": name, "text": sentence, "spans": [[0, 99]]}]}]})
        for name in ("home", "centives")]
    book, shown = EvidenceBook(), {}
    first, _ = _page_text(pages[0], book.add_page(pages[0]), shown)
    items = book.add_page(pages[1])
    second, _ = _page_text(pages[1], items, shown)
    assert sentence in first and sentence not in second
    assert f"address: centives | (the sentence of {book.for_page(pages[0].path)[0].id})" in second
    alone, _ = _page_text(pages[1], items)  # another prompt shows it again
    assert sentence in alone


def test_sibling_links_list_the_nearest_entries_first():
    from hti_git.query.model_nav import _nearest

    listing = Page("d/c/index.md", {"kind": "category", "title": "C",
                                    "children": [{"title": f"S{i}", "link": f"s{i}.md"} for i in range(8)]})
    assert [c["title"] for c in _nearest(listing, "d/c/s5.md")] == ["S4", "S6", "S3", "S7", "S2", "S1", "S0"]


def test_ask_json_reports_usage_per_stage(repo, monkeypatch):
    from tests.support.openai_stub import OpenAIStub, configure_env

    responses = iter([open_("Clauses"), ANSWER_NOW])

    def handler(body):
        nxt = next(responses, NOT_FOUND)
        return nxt(body["messages"]) if callable(nxt) else nxt

    with OpenAIStub(handler) as stub:
        configure_env(monkeypatch, stub)
        result = CliRunner().invoke(main, ["-C", str(repo.root), "ask", "--json",
                                           "Which state's law governs?"], catch_exceptions=False)
    data = json.loads(result.output)
    stages = data["usage"]["stages"]
    # navigation answered "not found" in its own reply; the source fallback is the one answer call
    assert stages["navigate"]["calls"] == 2 and stages["answer"]["calls"] == 1 and data["fallback"]
    assert sum(s["input_tokens"] for s in stages.values()) == data["usage"]["input_tokens"]


def test_fallback_windows_start_and_end_on_sentence_edges(repo):
    from hti_git.query.answer_llm import source_windows

    snap = repo.snapshot()
    source = snap.read_text(f"{DOC}/source.txt")
    windows = source_windows(snap, [DOC], "When may the Company terminate the Consultant without Cause?", 1500)
    assert windows
    for w in windows:
        s, e = w.spans[0]
        assert source[s:e] == w.text
        assert s == 0 or source[s - 1] in " \n" and source[:s].rstrip()[-1:] in ".;:!?)\n" or source[s - 1] == "\n"
        assert w.text.rstrip()[-1] in ".;:!?)\"”’" or e == len(source) or source[e] == "\n"
    spans = sorted(w.spans[0] for w in windows)
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:]))  # no window repeats another's text


def test_a_summary_with_spans_past_the_source_is_refused_not_a_crash(repo):
    """A stale index (spans beyond source.txt at this revision) gives a dropped citation, never an
    IndexError out of the sentence search."""
    from hti_git.index.linemap import LineMap
    from hti_git.query.evidence import Evidence

    source = repo.snapshot().read_text(f"{DOC}/source.txt")
    item = Evidence("E1", DOC, f"{DOC}/x.md", "summary", "A summary.", [(0, len(source) + 50)], summary=True)
    citation, why = check_citation(item, "some words of a summary that restate a clause", source, LineMap(source))
    assert citation is None and "span outside source.txt" in why


def test_a_field_named_summary_is_checked_as_a_value_not_as_a_page_summary():
    """A schema may name a field "summary"; its values are still values: a quote must be in their span."""
    from hti_git.index.linemap import LineMap

    source = "The Term is two years. Either party may terminate on thirty days' notice."
    value = {"value": "two years", "text": "The Term is two years.", "spans": [[0, 22]]}
    page = Page("d/c/s.md", {"kind": "subject", "title": "Term", "summary": "A two-year term.",
                             "fields": [{"name": "summary", "values": [value]}]})
    page_summary, field_value = EvidenceBook().add_page(page)
    assert page_summary.summary and not field_value.summary
    citation, why = check_citation(field_value, "Either party may terminate on thirty days' notice", source,
                                   LineMap(source))
    assert citation is None and "not found in the cited source span" in why


SIGNED = ("THIS AGREEMENT is made between Acme Widgets Inc., a Delaware corporation, and its buyer Bolt Trading. "
          "Acme appoints Bolt as its exclusive distributor in Canada.\n\n" + "Other terms apply. " * 200 +
          "\n\nACME WIDGETS INC.\nBy: /s/ Jane Roe\nTitle: Chief Executive Officer\nDate: March 3, 2001\n")


def _summary_item(spans, anywhere=False):
    from hti_git.query.evidence import Evidence

    return Evidence("E1", "d", "d/p/acme.md", "summary", "S", spans=spans, anywhere=anywhere, summary=True)


def test_a_summary_quote_joining_two_of_its_values_sentences_cites_both():
    from hti_git.index.linemap import LineMap
    from hti_git.query.evidence import cite

    first = SIGNED.index("THIS"), SIGNED.index("Bolt Trading.") + 13
    second = SIGNED.index("Acme appoints"), SIGNED.index("Canada.") + 7
    item = _summary_item([first, second])
    citations, why = cite(item, "a Delaware corporation, Widgets, and its buyer; exclusive distributor in Canada",
                          SIGNED, LineMap(SIGNED))
    assert not why and [c.text for c in citations] == [SIGNED[first[0]:first[1]], SIGNED[second[0]:second[1]]]


def test_a_summary_fact_outside_its_spans_is_cited_where_its_sentences_sit_together():
    from hti_git.index.linemap import LineMap
    from hti_git.query.evidence import cite

    item = _summary_item([(0, 60)])
    citations, _ = cite(item, "signed by Chief Executive Officer Jane Roe on March 3, 2001", SIGNED, LineMap(SIGNED))
    assert citations and all(c.start > SIGNED.index("ACME WIDGETS INC.") - 5 for c in citations)
    assert "Jane Roe" in " ".join(c.text for c in citations)
    # words scattered over the document, or not in it, support nothing
    for quote in ("Delaware distributor signed by Jane Roe, Chief Executive Officer", "the term is five years, renewable by Bolt"):
        assert cite(item, quote, SIGNED, LineMap(SIGNED))[0] == []


def test_a_summarys_date_matches_the_documents_ordinal_date():
    """"dated February 16, 2000" restates "the 16th day of February, 2000": ordinals match numbers."""
    from hti_git.index.linemap import LineMap
    from hti_git.lexical import search_terms, terms
    from hti_git.query.evidence import cite

    assert terms("the 16th day of February") == terms("16 day February") and search_terms("21st")[0] == "21"
    source = ("Confidential portions of this agreement are omitted.\nExhibit 10.2\nWIDGET CO-BRANDING AGREEMENT\n"
              "This agreement is entered into as of the 16th day of February, 2000, by Acme and Bolt.\n")
    item = _summary_item([], anywhere=True)
    citations, why = cite(item, "Co-branding agreement dated February 16, 2000 (Exhibit 10.2, confidential portions redacted)",
                          source, LineMap(source))
    assert not why and any("16th day of February" in c.text for c in citations)
