"""A checked citation names the PDF pages of the span it finally cites, for index and source evidence."""

from hti_git.index.linemap import LineMap
from hti_git.query.evidence import Evidence, check_citation

SOURCE = "Page one text about fees.\nPage two: the agreement expires on October 31, 2006.\nPage three.\n"
PAGE_STARTS = (0, SOURCE.index("Page two"), SOURCE.index("Page three"))


def test_fallback_window_citation_names_the_page_of_the_quote():
    item = Evidence("S1", "doc", "doc/source.txt", "source.txt", SOURCE, [(0, len(SOURCE))])
    citation, why = check_citation(item, "expires on October 31, 2006", SOURCE, LineMap(SOURCE, PAGE_STARTS))
    assert why == "" and citation.pages == [2]
    assert citation.text == "expires on October 31, 2006"


def test_without_a_page_map_there_are_no_pages():
    item = Evidence("E1", "doc", "doc/clauses/term.md", "text", SOURCE, [(0, len(SOURCE))])
    citation, _ = check_citation(item, "about fees", SOURCE, LineMap(SOURCE))
    assert citation.pages == []
